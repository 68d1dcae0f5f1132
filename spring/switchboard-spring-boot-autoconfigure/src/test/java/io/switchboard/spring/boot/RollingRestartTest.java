package io.switchboard.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchboard.client.Switchboard;
import io.switchboard.client.load.LoadRun;
import io.switchboard.client.load.LoadTally;
import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoService;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.registry.testing.RunningRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * Two Boot instances of one component, restarted one after the other under load from the
 * {@code load} command's engine ({@link LoadRun}) calling it through the registry: no call fails,
 * and no call id runs twice (on one instance or across both), counted where the component runs.
 */
class RollingRestartTest {
    private static final int CALLERS = 4;
    /** Calls an instance must have served before the next step: proof that it took its share. */
    private static final int SHARE = 20;
    private static final double[] VALUES = {1, 2, 3};

    /** Every call id that reached a component, with how often; an id seen twice ran twice. */
    private final Map<String, Integer> ran = new ConcurrentHashMap<>();

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void restartingTheInstancesOneAfterTheOtherLosesAndRepeatsNoCall() throws Exception {
        LoadTally tally = new LoadTally();
        try (RunningRegistry registry = RunningRegistry.start()) {
            Path secret = Files.writeString(tmp.resolve("secret"), RunningRegistry.SECRET);
            Instance a = start(registry, secret);
            Instance b = start(registry, secret);
            try (Switchboard client = Switchboard.builder(registry.url()).listener(tally).connect()) {
                EchoStub echo = client.lookup(EchoComponent.DESCRIPTOR, EchoComponent::stub);
                LoadRun load = LoadRun.builder(() -> () -> {
                    if (!Arrays.equals(echo.echoDoubles(VALUES), VALUES)) {
                        throw new IllegalStateException("a wrong answer");
                    }
                }).concurrency(CALLERS).tally(tally).start();   // until stopped
                try {
                    a.awaitShare();
                    b.awaitShare();

                    a.context.close();   // drains: unbound, quiet period, calls under way finished
                    Instance a2 = start(registry, secret);
                    a2.awaitShare();
                    b.context.close();
                    Instance b2 = start(registry, secret);
                    b2.awaitShare();

                    load.stop();
                    assertThat(load.await(Duration.ofMinutes(1))).as("the callers end once stopped").isTrue();
                    a2.context.close();
                    b2.context.close();
                } finally {
                    load.stop();
                }
            }
        }
        assertThat(tally.failures()).as("calls that failed, by kind").isEmpty();
        assertThat(tally.calls()).isGreaterThanOrEqualTo(4L * SHARE);
        assertThat(ran.entrySet().stream().filter(e -> e.getValue() > 1).toList()).as("call ids run twice").isEmpty();
        assertThat(ran).as("every call ran, with its own id").hasSize((int) tally.calls());
    }

    private Instance start(RunningRegistry registry, Path secret) {
        CountDownLatch share = new CountDownLatch(SHARE);
        // after the de-duplicator: what runs here ran, once per call id and instance
        ServerInterceptor recorder = (call, next) -> {
            Object response = next.proceed(call);
            ran.merge(String.valueOf(call.callId()), 1, Integer::sum);
            share.countDown();
            return response;
        };
        ConfigurableApplicationContext context = new SpringApplicationBuilder(EchoApplication.class)
                .web(WebApplicationType.NONE)
                .initializers(c -> c.getBeanFactory().registerSingleton("recorder",
                        (SwitchboardServerCustomizer) builder -> builder.interceptor(recorder)))
                .properties("switchboard.registry.url=" + registry.url(), "switchboard.registry.secret-file=" + secret,
                        "switchboard.server.protocols=soap,grpc,tcp", "switchboard.server.drain.quiet-period=1s",
                        "switchboard.server.drain.timeout=20s", "spring.jmx.enabled=false")
                .run();
        return new Instance(context, share);
    }

    private record Instance(ConfigurableApplicationContext context, CountDownLatch share) {
        void awaitShare() throws InterruptedException {
            assertThat(share.await(2, TimeUnit.MINUTES)).as("the instance served its share").isTrue();
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class EchoApplication {
        @Bean
        @SwitchboardComponent
        EchoService echo() {
            return new EchoService();
        }
    }
}
