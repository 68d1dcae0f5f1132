package io.switchboard.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a bean that implements a generated component interface as one to serve: exported on every
 * configured protocol and bound in the registry when the application is ready, unbound and drained
 * when it shuts down. The bean is still made by the application (a {@code @Bean} method, or
 * {@code @Component} on the same class in the application's own packages).
 *
 * <pre>{@code
 * @Component
 * @SwitchboardComponent
 * class GreeterService implements Greeter { ... }
 * }</pre>
 *
 * <p>For full control (another skeleton, several names for one bean), declare a
 * {@link ComponentRegistration} bean instead.
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface SwitchboardComponent {
    /** The registry name; empty: the component's own name from its schema. */
    String name() default "";
}
