package io.switchboard.spring.boot;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * How the application calls components, under {@code switchboard.client}.
 *
 * <pre>{@code
 * switchboard.client.policy=first-common
 * switchboard.client.protocols=tcp,grpc,soap
 * switchboard.client.token-file=/run/secrets/token
 * switchboard.client.stubs.EchoStub.name=Echo-eu
 * }</pre>
 *
 * @param policy    the selection policy by name (as {@code call --policy}); empty: the default
 * @param protocols the protocols calls may take, in order of preference; empty: every one on the class path
 * @param tokenFile a file holding the bearer token sent with every call, read again when it changes
 * @param stubs     per stub class (its simple name), the registry name it looks up instead of its component's
 */
@ConfigurationProperties("switchboard.client")
public record SwitchboardClientProperties(
        String policy,
        @DefaultValue List<String> protocols,
        Path tokenFile,
        @DefaultValue Map<String, Stub> stubs) {

    /** @param name the registry name a stub looks up */
    public record Stub(String name) {
    }

    /** The name the stub {@code stubClass} looks up: the mapped one, else {@code componentName}. */
    public String nameFor(Class<?> stubClass, String componentName) {
        Stub mapped = stubs.get(stubClass.getSimpleName());
        return mapped == null || mapped.name() == null || mapped.name().isBlank() ? componentName : mapped.name();
    }
}
