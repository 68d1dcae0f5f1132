package io.switchboard.examples.springboot;

import io.switchboard.components.echo.EchoStub;
import io.switchboard.spring.boot.ImportSwitchboardStubs;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Serves {@link GreeterService} as the Greeter component on soap, grpc and tcp, bound in the
 * registry of {@code switchboard.registry.url}, and calls the Echo component found there through an
 * injected {@link EchoStub} ({@link EchoCheck}).
 *
 * <pre>{@code
 * ./switchboard registry &
 * ./switchboard serve echo &
 * mvn spring-boot:run
 * ./switchboard call Greeter greet name=Ada
 * }</pre>
 */
@SpringBootApplication
@ImportSwitchboardStubs({EchoStub.class, GreeterStub.class})
public class GreeterApplication {
    public static void main(String[] args) {
        SpringApplication.run(GreeterApplication.class, args);
    }
}
