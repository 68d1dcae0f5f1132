package io.switchboard.spring.boot;

import io.switchboard.client.Switchboard;
import io.switchboard.metastub.Policies;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.TlsSettings;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The client: a {@link Switchboard} bean connected to {@code switchboard.registry.url}, with the
 * client's policy, protocols, TLS and token. Backs off when the application defines its own
 * {@code Switchboard}; nothing is configured without a registry URL.
 */
@AutoConfiguration
@ConditionalOnProperty(prefix = "switchboard.registry", name = "url")
@EnableConfigurationProperties({SwitchboardRegistryProperties.class, SwitchboardClientProperties.class,
        SwitchboardTlsProperties.class})
public class SwitchboardClientAutoConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    Switchboard switchboard(SwitchboardRegistryProperties registry, SwitchboardClientProperties client,
            SwitchboardTlsProperties tls, ObjectProvider<SwitchboardClientCustomizer> customizers) {
        ClientSettings settings = ClientSettings.defaults();
        TlsSettings tlsSettings = tls.settings();
        if (tlsSettings != null) {
            settings = settings.withTls(tlsSettings);
        }
        if (client.tokenFile() != null) {
            settings = settings.withToken(FileSecrets.token(client.tokenFile()));
        }
        Switchboard.Builder builder = Switchboard.builder(registry.url()).settings(settings);
        String secret = FileSecrets.read(registry.secretFile());
        if (secret != null) {
            builder.secret(secret);
        }
        if (client.policy() != null && !client.policy().isBlank()) {
            builder.policy(Policies.byName(client.policy()));
        }
        if (!client.protocols().isEmpty()) {
            builder.protocols(client.protocols().toArray(String[]::new));
        }
        customizers.orderedStream().forEach(c -> c.customize(builder));
        return builder.connect();
    }
}
