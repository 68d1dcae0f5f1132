package io.switchboard.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.switchboard.client.Switchboard;
import io.switchboard.components.echo.EchoService;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.registry.testing.RunningRegistry;
import io.switchboard.server.ServerCallStats;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A Boot application against a real registry: its component bean bound and called over soap, grpc
 * and tcp by an injected stub, its meters on Boot's registry, its health UP and then DOWN while it drains.
 */
@SpringBootTest(classes = SwitchboardApplicationTest.EchoApplication.class, properties = {
        "switchboard.server.protocols=soap,grpc,tcp",
        // long enough to look at the health while the server still answers, unbound
        "switchboard.server.drain.quiet-period=2s",
        "management.endpoint.health.show-details=always"})
@DirtiesContext
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)   // the drain last: it stops the server
class SwitchboardApplicationTest {
    private static final RunningRegistry REGISTRY = RunningRegistry.start();

    @DynamicPropertySource
    static void registry(DynamicPropertyRegistry properties) throws Exception {
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
    EchoStub echo;
    @Autowired
    EchoService served;
    @Autowired
    SwitchboardServerLifecycle lifecycle;
    @Autowired
    HealthEndpoint health;
    @Autowired
    MeterRegistry meters;
    @Autowired
    Switchboard switchboard;

    @ParameterizedTest
    @ValueSource(strings = {"soap", "grpc", "tcp"})
    void theInjectedStubCallsTheBoundBeanOverEachProtocol(String protocol) {
        long before = served.calls();
        double[] back = echo.withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol))
                .echoDoubles(new double[] {1, 2, 3});

        assertThat(back).containsExactly(1, 2, 3);
        assertThat(served.calls()).isEqualTo(before + 1);
        // the server's meter on Boot's registry says which protocol carried it
        assertThat(meters.find(ServerCallStats.CALLS).tag("component", "Echo").tag("protocol", protocol)
                .tag("operation", "echoDoubles").timer()).isNotNull();
    }

    @Test
    void theClientsMetersAreOnBootsRegistry() {
        echo.empty();
        assertThat(meters.find(io.switchboard.metastub.MicrometerCallListener.CALLS).meters()).isNotEmpty();
    }

    @Test
    @Order(Integer.MAX_VALUE)
    void healthIsUpWhileBoundAndDownWhileDraining() throws Exception {
        assertThat(lifecycle.components()).extracting(e -> e.name()).containsExactly("Echo");
        assertThat(health.healthForPath("switchboard").getStatus()).isEqualTo(Status.UP);

        CountDownLatch drained = new CountDownLatch(1);
        lifecycle.stop(drained::countDown);
        // within the quiet period: unbound or unbinding, still answering, and DOWN
        assertThat(health.healthForPath("switchboard").getStatus()).isEqualTo(Status.DOWN);
        assertThat(drained.await(60, TimeUnit.SECONDS)).isTrue();

        assertThat(health.healthForPath("switchboard").getStatus()).isEqualTo(Status.DOWN);
        assertThat(switchboard.registry().lookup("Echo")).isEmpty();
        assertThat(lifecycle.isRunning()).isFalse();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @ImportSwitchboardStubs(EchoStub.class)
    static class EchoApplication {
        @Bean
        @SwitchboardComponent
        EchoService echoService() {
            return new EchoService();
        }
    }
}
