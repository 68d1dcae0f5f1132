package io.switchboard.spring.boot;

import io.switchboard.client.Switchboard;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.protocol.TokenVerifier;
import io.switchboard.protocol.spi.JwtTokenVerifier;
import io.switchboard.server.ComponentServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.task.TaskDecorator;

/**
 * The server: the application's {@link SwitchboardComponent} beans and {@link ComponentRegistration}
 * beans exported on the configured protocols and bound in the registry through the application's
 * {@link Switchboard} when the application is ready, drained on shutdown
 * ({@link SwitchboardServerLifecycle}). Off with {@code switchboard.server.enabled=false}; backs off
 * when the application defines its own lifecycle bean.
 */
@AutoConfiguration(after = SwitchboardClientAutoConfiguration.class)
@ConditionalOnBean(Switchboard.class)
@ConditionalOnProperty(prefix = "switchboard.server", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties({SwitchboardServerProperties.class, SwitchboardTlsProperties.class})
public class SwitchboardServerAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    SwitchboardServerLifecycle switchboardServerLifecycle(SwitchboardServerProperties properties,
            SwitchboardTlsProperties tls, Switchboard switchboard, ObjectProvider<SwitchboardServerCustomizer> customizers,
            ListableBeanFactory beans) {
        return new SwitchboardServerLifecycle(() -> {
            ComponentServer.Builder builder = builder(properties, tls.settings(), switchboard);
            customizers.orderedStream().forEach(c -> c.customize(builder));
            return builder;
        }, () -> ServedComponents.in(beans));
    }

    /**
     * The application's task executor runs an operation's {@code @Async} work in the operation's
     * call (its deadline and cancel). Backs off when the application has a decorator of its own.
     */
    @Bean
    @ConditionalOnMissingBean(TaskDecorator.class)
    ServerCallTaskDecorator switchboardServerCallTaskDecorator() {
        return new ServerCallTaskDecorator();
    }

    static ComponentServer.Builder builder(SwitchboardServerProperties p, TlsSettings tls, Switchboard switchboard) {
        ServerSettings settings = ServerSettings.defaults();
        if (p.bindAddress() != null) {
            settings = settings.withBindAddress(p.bindAddress());
        }
        if (p.advertisedHost() != null) {
            settings = settings.withAdvertisedHost(p.advertisedHost());
        }
        if (tls != null) {
            settings = settings.withTls(tls);
        }
        TokenVerifier verifier = verifier(p.jwt());
        if (verifier != null) {
            settings = settings.withTokenVerifier(verifier);
        }
        // binds through the application's registry client: one connection, its secret, TLS and token
        ComponentServer.Builder builder = ComponentServer.builder().settings(settings).registry(switchboard.registry())
                .lease(p.lease()).drain(p.drain().quietPeriod(), p.drain().timeout());
        if (!p.protocols().isEmpty()) {
            builder.protocols(p.protocols());
        }
        p.ports().forEach(builder::port);
        if (p.authorization().policyFile() != null) {
            builder.authorization(p.authorization().policyFile(), p.authorization().reloadInterval());
        }
        return builder;
    }

    private static TokenVerifier verifier(SwitchboardServerProperties.Jwt jwt) {
        if (jwt.keys() == null) {
            return null;
        }
        if (jwt.audience() == null || jwt.audience().isBlank()) {
            throw new IllegalArgumentException("switchboard.server.jwt.keys needs switchboard.server.jwt.audience: "
                    + "without it a token issued for another service would do here too");
        }
        JwtTokenVerifier.Builder b = JwtTokenVerifier.builder().issuer(jwt.issuer()).audience(jwt.audience())
                .principalClaim(jwt.principalClaim()).clockSkew(jwt.clockSkew());
        return (isJwks(jwt.keys()) ? b.jwks(jwt.keys()) : b.pemPublicKeys(jwt.keys())).build();
    }

    private static boolean isJwks(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8).stripLeading().startsWith("{");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read switchboard.server.jwt.keys " + file + ": " + e.getMessage(), e);
        }
    }
}
