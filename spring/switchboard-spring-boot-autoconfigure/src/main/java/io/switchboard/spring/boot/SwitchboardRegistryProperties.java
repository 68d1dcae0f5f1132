package io.switchboard.spring.boot;

import java.nio.file.Path;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Where the registry is, under {@code switchboard.registry}: a client and a server both need it.
 *
 * <pre>{@code
 * switchboard.registry.url=http://127.0.0.1:8081/axis2/services/Registry
 * switchboard.registry.secret-file=/run/secrets/switchboard
 * }</pre>
 *
 * @param url        the registry's URL (several, comma-separated, for a replicated registry); without
 *                   it nothing of Switchboard's is configured
 * @param secretFile a file holding the shared secret that registry writes carry; never logged
 */
@ConfigurationProperties("switchboard.registry")
public record SwitchboardRegistryProperties(String url, Path secretFile) {
}
