package io.switchboard.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.switchboard.client.Switchboard;
import io.switchboard.components.echo.EchoService;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.protocol.ServerCallContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.TaskDecorator;

/** The auto-configurations without a registry behind them: what they make, when they back off, what they leave alone. */
class SwitchboardAutoConfigurationTest {
    /** Nothing listens there: a client connects lazily, so only a call would notice. */
    private static final String NOWHERE = "http://127.0.0.1:9/axis2/services/Registry";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SwitchboardMetricsAutoConfiguration.class,
                    SwitchboardTracingAutoConfiguration.class, SwitchboardClientAutoConfiguration.class, SwitchboardServerAutoConfiguration.class,
                    SwitchboardHealthAutoConfiguration.class));

    @Test
    void withoutARegistryUrlNothingIsConfigured() {
        runner.withUserConfiguration(ServesEcho.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(Switchboard.class);
            assertThat(context).doesNotHaveBean(SwitchboardServerLifecycle.class);
            assertThat(context).doesNotHaveBean(SwitchboardHealthIndicator.class);
        });
    }

    @Test
    void aRegistryUrlGivesAClientAServerLifecycleAndHealthButStartsNoServer() {
        runner.withUserConfiguration(ServesEcho.class).withPropertyValues("switchboard.registry.url=" + NOWHERE)
                .run(context -> {
                    assertThat(context).hasSingleBean(Switchboard.class);
                    assertThat(context).hasSingleBean(SwitchboardHealthIndicator.class);
                    SwitchboardServerLifecycle lifecycle = context.getBean(SwitchboardServerLifecycle.class);
                    // no ApplicationReadyEvent in a plain context (a test slice): nothing exported, nothing bound
                    assertThat(lifecycle.server()).isNull();
                    assertThat(lifecycle.components()).isEmpty();
                    assertThat(context.getBean(Switchboard.class).registry().url()).isEqualTo(NOWHERE);
                });
    }

    @Test
    void propertiesAreBound(@TempDir Path dir) throws Exception {
        Path policy = Files.writeString(dir.resolve("policy.json"), "{}");
        runner.withPropertyValues("switchboard.registry.url=" + NOWHERE,
                "switchboard.server.protocols=soap,tcp", "switchboard.server.ports.soap=18080",
                "switchboard.server.bind-address=0.0.0.0", "switchboard.server.advertised-host=orders-1.internal",
                "switchboard.server.lease=10s", "switchboard.server.drain.quiet-period=250ms",
                "switchboard.server.drain.timeout=5s", "switchboard.server.authorization.policy-file=" + policy,
                "switchboard.server.jwt.audience=orders", "switchboard.client.policy=fixed:tcp",
                "switchboard.client.protocols=tcp,soap", "switchboard.client.stubs.EchoStub.name=Echo-eu",
                "switchboard.tls.password=not-to-be-printed").run(context -> {
                    SwitchboardServerProperties server = context.getBean(SwitchboardServerProperties.class);
                    assertThat(server.protocols()).containsExactly("soap", "tcp");
                    assertThat(server.ports()).isEqualTo(Map.of("soap", 18080));
                    assertThat(server.bindAddress()).isEqualTo("0.0.0.0");
                    assertThat(server.advertisedHost()).isEqualTo("orders-1.internal");
                    assertThat(server.lease()).isEqualTo(Duration.ofSeconds(10));
                    assertThat(server.drain().quietPeriod()).isEqualTo(Duration.ofMillis(250));
                    assertThat(server.drain().timeout()).isEqualTo(Duration.ofSeconds(5));
                    assertThat(server.authorization().policyFile()).isEqualTo(policy);
                    assertThat(server.authorization().reloadInterval()).isEqualTo(Duration.ofSeconds(5));
                    assertThat(server.jwt().audience()).isEqualTo("orders");
                    assertThat(server.jwt().principalClaim()).isEqualTo("sub");
                    SwitchboardClientProperties client = context.getBean(SwitchboardClientProperties.class);
                    assertThat(client.policy()).isEqualTo("fixed:tcp");
                    assertThat(client.protocols()).containsExactly("tcp", "soap");
                    assertThat(client.nameFor(EchoStub.class, "Echo")).isEqualTo("Echo-eu");
                    assertThat(client.nameFor(String.class, "Other")).isEqualTo("Other");
                    assertThat(context.getBean(SwitchboardTlsProperties.class).toString())
                            .doesNotContain("not-to-be-printed");
                });
    }

    @Test
    void aRevocationListWithoutATrustStoreStopsTheStartWithTheReason(@TempDir Path dir) throws Exception {
        Path list = Files.writeString(dir.resolve("ca.crl"), "");
        runner.withPropertyValues("switchboard.registry.url=" + NOWHERE, "switchboard.tls.revocation-list=" + list)
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("switchboard.tls.revocation-list needs switchboard.tls.trust-store"));
    }

    @Test
    void defaultsWhenNothingIsSaid() {
        runner.withPropertyValues("switchboard.registry.url=" + NOWHERE).run(context -> {
            SwitchboardServerProperties server = context.getBean(SwitchboardServerProperties.class);
            assertThat(server.enabled()).isTrue();
            assertThat(server.protocols()).isEmpty();
            assertThat(server.lease()).isEqualTo(Duration.ofSeconds(30));
            assertThat(server.drain().quietPeriod()).isEqualTo(Duration.ofSeconds(1));
            assertThat(server.drain().timeout()).isEqualTo(Duration.ofSeconds(30));
            assertThat(context.getBean(SwitchboardTlsProperties.class).settings()).isNull();
        });
    }

    @Test
    void theApplicationsOwnBeansWin() {
        runner.withUserConfiguration(OwnBeans.class).withPropertyValues("switchboard.registry.url=" + NOWHERE)
                .run(context -> {
                    assertThat(context).hasSingleBean(Switchboard.class);
                    assertThat(context.getBean(Switchboard.class)).isSameAs(OwnBeans.SWITCHBOARD);
                    assertThat(context).hasSingleBean(SwitchboardServerLifecycle.class);
                    assertThat(context.getBean(SwitchboardServerLifecycle.class)).isSameAs(OwnBeans.LIFECYCLE);
                });
    }

    @Test
    void theServerCanBeTurnedOff() {
        runner.withUserConfiguration(ServesEcho.class)
                .withPropertyValues("switchboard.registry.url=" + NOWHERE, "switchboard.server.enabled=false")
                .run(context -> {
                    assertThat(context).hasSingleBean(Switchboard.class);
                    assertThat(context).doesNotHaveBean(SwitchboardServerLifecycle.class);
                });
    }

    @Test
    void withoutTheActuatorThereIsNoHealthIndicator() {
        runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
                .withPropertyValues("switchboard.registry.url=" + NOWHERE).run(context -> {
                    assertThat(context).hasSingleBean(Switchboard.class);
                    assertThat(context).doesNotHaveBean(SwitchboardHealthIndicator.class);
                });
    }

    @Test
    void theHealthIndicatorCanBeTurnedOff() {
        runner.withPropertyValues("switchboard.registry.url=" + NOWHERE, "management.health.switchboard.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(SwitchboardHealthIndicator.class));
    }

    @Test
    void theApplicationsOpenTelemetryTracesTheClientAndTheServer() {
        runner.withUserConfiguration(OneOpenTelemetry.class).withPropertyValues("switchboard.registry.url=" + NOWHERE)
                .run(context -> {
                    assertThat(context).hasBean("switchboardServerTracing").hasBean("switchboardClientTracing");
                    assertThat(context).hasSingleBean(Switchboard.class);
                });
    }

    @Test
    void withoutAnOpenTelemetryBeanTracingIsLeftAsOutsideSpring() {
        runner.withPropertyValues("switchboard.registry.url=" + NOWHERE).run(context -> {
            assertThat(context).hasSingleBean(Switchboard.class);
            assertThat(context).doesNotHaveBean("switchboardServerTracing").doesNotHaveBean("switchboardClientTracing");
        });
    }

    @Test
    void twoOpenTelemetryBeansAreNoChoiceToMake() {
        runner.withUserConfiguration(OneOpenTelemetry.class, AnotherOpenTelemetry.class)
                .withPropertyValues("switchboard.registry.url=" + NOWHERE).run(context -> {
                    assertThat(context).hasSingleBean(Switchboard.class);
                    assertThat(context).doesNotHaveBean("switchboardServerTracing")
                            .doesNotHaveBean("switchboardClientTracing");
                });
    }

    @Test
    void aMarkedBeanIsFoundWithItsSkeletonAndName() {
        runner.withUserConfiguration(ServesEcho.class, RenamedEcho.class).run(context -> {
            List<ComponentRegistration> served = ServedComponents.in(context.getBeanFactory());
            assertThat(served).extracting(ComponentRegistration::name).containsExactlyInAnyOrder("Echo", "Echo-eu");
            assertThat(served).allSatisfy(c -> assertThat(c.skeleton().descriptor().name()).isEqualTo("Echo"));
        });
    }

    @Test
    void aMarkedBeanThatIsNoComponentIsRefusedByName() {
        runner.withUserConfiguration(MarksAString.class).run(context -> {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> ServedComponents.in(context.getBeanFactory()))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("'notAComponent'")
                    .hasMessageContaining("no generated component interface");
        });
    }

    @Test
    void aStubIsInjectableByTypeAndLooksUpNothingUntilItsFirstCall() {
        runner.withUserConfiguration(ImportsEchoStub.class).withPropertyValues("switchboard.registry.url=" + NOWHERE)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).hasSingleBean(EchoStub.class);
                });
    }

    @Test
    void importingAClassThatIsNoStubFailsTheStart() {
        runner.withUserConfiguration(ImportsNoStub.class).withPropertyValues("switchboard.registry.url=" + NOWHERE)
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("java.lang.String is not a generated stub"));
    }

    @Test
    void aMissingTokenFileFailsTheStartNamingTheFile(@TempDir Path dir) {
        Path missing = dir.resolve("token");
        runner.withPropertyValues("switchboard.registry.url=" + NOWHERE, "switchboard.client.token-file=" + missing)
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("cannot read token file " + missing));
    }

    @Test
    void anUnknownPolicyFailsTheStart() {
        runner.withPropertyValues("switchboard.registry.url=" + NOWHERE, "switchboard.client.policy=cheapest")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("unknown selection policy 'cheapest'"));
    }

    @Test
    void jwtKeysWithoutAnAudienceAreRefused(@TempDir Path dir) throws Exception {
        Path keys = Files.writeString(dir.resolve("jwks.json"), "{\"keys\":[]}");
        SwitchboardServerProperties properties = new SwitchboardServerProperties(true, List.of(), Map.of(), null, null,
                Duration.ofSeconds(30), new SwitchboardServerProperties.Drain(Duration.ZERO, Duration.ofSeconds(1)),
                new SwitchboardServerProperties.Authorization(null, Duration.ofSeconds(5)),
                new SwitchboardServerProperties.Jwt(keys, null, null, "sub", Duration.ofSeconds(60)));
        try (Switchboard sb = Switchboard.connect(NOWHERE)) {
            org.assertj.core.api.Assertions.assertThatThrownBy(
                    () -> SwitchboardServerAutoConfiguration.builder(properties, null, sb))
                    .hasMessageContaining("switchboard.server.jwt.audience");
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OneOpenTelemetry {
        @Bean
        OpenTelemetry openTelemetry() {
            return OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder().build()).build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class AnotherOpenTelemetry {
        @Bean
        OpenTelemetry anotherOpenTelemetry() {
            return OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder().build()).build();
        }
    }

    @Test
    void theApplicationsTaskExecutorRunsAnOperationsWorkInItsCall() {
        runner.withConfiguration(AutoConfigurations.of(TaskExecutionAutoConfiguration.class))
                .withPropertyValues("switchboard.registry.url=" + NOWHERE).run(context -> {
                    assertThat(context).hasSingleBean(ServerCallTaskDecorator.class);
                    assertThat(handedOver(context.getBean("applicationTaskExecutor", Executor.class)))
                            .as("an @Async task an operation starts runs in the operation's call").isTrue();
                });
    }

    @Test
    void anApplicationsOwnTaskDecoratorIsLeftInPlace() {
        runner.withConfiguration(AutoConfigurations.of(TaskExecutionAutoConfiguration.class))
                .withUserConfiguration(OwnTaskDecorator.class)
                .withPropertyValues("switchboard.registry.url=" + NOWHERE).run(context -> {
                    assertThat(context).doesNotHaveBean(ServerCallTaskDecorator.class);
                    assertThat(context).hasSingleBean(TaskDecorator.class);
                    Executor executor = context.getBean("applicationTaskExecutor", Executor.class);
                    AtomicReference<String> marked = new AtomicReference<>();
                    CountDownLatch ran = new CountDownLatch(1);
                    executor.execute(() -> {
                        marked.set(OwnTaskDecorator.MARK.get());
                        ran.countDown();
                    });
                    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
                    assertThat(marked.get()).as("Spring Boot applies the application's decorator").isEqualTo("own");
                });
    }

    /** Whether a task handed to {@code executor} inside a server call ran in that call. */
    private static boolean handedOver(Executor executor) throws InterruptedException {
        ServerCallContext call = ServerCallContext.create(System.nanoTime() + TimeUnit.SECONDS.toNanos(5), null);
        AtomicReference<ServerCallContext> seen = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        try (ServerCallContext.Scope operation = call.enter()) {
            executor.execute(() -> {
                seen.set(ServerCallContext.current());
                ran.countDown();
            });
        }
        return ran.await(10, TimeUnit.SECONDS) && seen.get() == call;
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnTaskDecorator {
        static final ThreadLocal<String> MARK = new ThreadLocal<>();

        @Bean
        TaskDecorator ownDecorator() {
            return task -> () -> {
                MARK.set("own");
                try {
                    task.run();
                } finally {
                    MARK.remove();
                }
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class ServesEcho {
        @Bean
        @SwitchboardComponent
        EchoService echo() {
            return new EchoService();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class RenamedEcho {
        @Bean
        @SwitchboardComponent(name = "Echo-eu")
        EchoService echoEu() {
            return new EchoService();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class MarksAString {
        @Bean
        @SwitchboardComponent
        String notAComponent() {
            return "hello";
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportSwitchboardStubs(EchoStub.class)
    static class ImportsEchoStub {
    }

    @Configuration(proxyBeanMethods = false)
    @ImportSwitchboardStubs(String.class)
    static class ImportsNoStub {
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnBeans {
        static final Switchboard SWITCHBOARD = Switchboard.connect(NOWHERE);
        static final SwitchboardServerLifecycle LIFECYCLE = new SwitchboardServerLifecycle(() -> {
            throw new AssertionError("never asked");
        }, List::of);

        @Bean
        Switchboard mySwitchboard() {
            return SWITCHBOARD;
        }

        @Bean
        SwitchboardServerLifecycle myLifecycle() {
            return LIFECYCLE;
        }
    }
}
