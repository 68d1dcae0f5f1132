package io.switchboard.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.context.annotation.Import;

/**
 * Makes generated stubs injectable by type: one bean per stub class named, calling the component
 * bound under the component's own name (or the name {@code switchboard.client.stubs.<StubName>.name}
 * maps it to) through the application's {@code Switchboard}. The registry is asked at the stub's
 * first call, so the component may come up after this application.
 *
 * <pre>{@code
 * @SpringBootApplication
 * @ImportSwitchboardStubs(EchoStub.class)
 * class OrdersApplication { ... }
 *
 * @Service
 * class Orders {
 *     Orders(EchoStub echo) { ... }
 * }
 * }</pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Import(StubRegistrar.class)
public @interface ImportSwitchboardStubs {
    /** The generated stub classes to make beans of. */
    Class<?>[] value();
}
