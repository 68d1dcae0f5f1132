package io.switchboard.examples.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoService;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.registry.testing.RunningRegistry;
import io.switchboard.spring.boot.SwitchboardServerLifecycle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The application against a real registry in the test's JVM, where an Echo component is bound too:
 * Greeter bound and called over soap, grpc and tcp by an injected stub, Echo called through the
 * registry, the meters on Boot's registry, the health UP and then DOWN while the application drains.
 */
@SpringBootTest(properties = {"switchboard.server.drain.quiet-period=2s", "spring.main.keep-alive=false"})
@DirtiesContext
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)   // the drain last: it stops the server
class GreeterApplicationTest {
    private static final RunningRegistry REGISTRY = RunningRegistry.start();

    @DynamicPropertySource
    static void registry(DynamicPropertyRegistry properties) throws Exception {
        REGISTRY.serve(EchoComponent.skeleton(new EchoService()));   // the component this application calls
        Path secret = Files.createTempFile("switchboard", ".secret");
        secret.toFile().deleteOnExit();
        Files.writeString(secret, RunningRegistry.SECRET);
        properties.add("switchboard.registry.url", REGISTRY::url);
        properties.add("switchboard.registry.secret-file", secret::toString);
    }

    @AfterAll
    static void stopRegistry() {
        REGISTRY.close();
    }

    @Autowired
    GreeterStub greeter;
    @Autowired
    EchoCheck echo;
    @Autowired
    MeterRegistry meters;
    @Autowired
    HealthEndpoint health;
    @Autowired
    SwitchboardServerLifecycle server;

    @ParameterizedTest
    @ValueSource(strings = {"soap", "grpc", "tcp"})
    void greeterIsBoundAndAnswersOverEachProtocol(String protocol) {
        double calledBefore = called(protocol);
        double servedBefore = served(protocol);
        GreeterStub over = greeter.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol));
        assertThat(over.greet("Ada")).isEqualTo("Hello, Ada!");
        assertThat(over.average(new double[] {1.5, 2.5})).isEqualTo(2.0);
        // the caller's meter and the server's both say the two calls took this protocol, and answered
        assertThat(called(protocol)).isEqualTo(calledBefore + 2);
        assertThat(served(protocol)).isEqualTo(servedBefore + 2);
    }

    /** Greeter's calls this application's stub made over {@code protocol} and had answered (switchboard.calls). */
    private double called(String protocol) {
        return meters.find("switchboard.calls").tag("component", "Greeter").tag("protocol", protocol)
                .tag("outcome", "ok").timers().stream().mapToDouble(t -> t.count()).sum();
    }

    /** Greeter's calls the server ran over {@code protocol} (switchboard.server.calls). */
    private double served(String protocol) {
        return meters.find("switchboard.server.calls").tag("component", "Greeter").tag("protocol", protocol)
                .timers().stream().mapToDouble(t -> t.count()).sum();
    }

    @Test
    void echoIsCalledThroughTheRegistry() {
        assertThat(echo.roundTrip(1, 2, 3)).containsExactly(1, 2, 3);
    }

    @Test
    @Order(Integer.MAX_VALUE)
    void healthIsUpAndThenDownWhileDraining() throws Exception {
        Health up = (Health) health.healthForPath("switchboard");
        assertThat(up.getStatus()).isEqualTo(Status.UP);
        assertThat(up.getDetails()).containsEntry("registry", REGISTRY.url()).containsEntry("bound", List.of("Greeter"));
        assertThat(health.health().getStatus()).as("the application's health").isEqualTo(Status.UP);

        CountDownLatch drained = new CountDownLatch(1);
        server.stop(drained::countDown);
        Health draining = (Health) health.healthForPath("switchboard");
        assertThat(draining.getStatus()).isEqualTo(Status.DOWN);
        assertThat(draining.getDetails()).containsEntry("draining", true);
        assertThat(health.health().getStatus()).as("a load balancer reading the health stops sending work")
                .isEqualTo(Status.DOWN);
        assertThat(drained.await(60, TimeUnit.SECONDS)).isTrue();
        try (var reader = io.switchboard.registry.RegistryClient.connect(REGISTRY.url())) {
            assertThat(reader.lookup("Greeter")).isEmpty();
        }
    }
}
