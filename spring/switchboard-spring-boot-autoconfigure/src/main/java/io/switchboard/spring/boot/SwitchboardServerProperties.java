package io.switchboard.spring.boot;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * How the application serves its components, under {@code switchboard.server}.
 *
 * <pre>{@code
 * switchboard.server.protocols=soap,grpc,tcp
 * switchboard.server.ports.soap=8080
 * switchboard.server.bind-address=0.0.0.0
 * switchboard.server.advertised-host=orders-1.internal
 * switchboard.server.authorization.policy-file=/etc/switchboard/policy.json
 * }</pre>
 *
 * @param enabled        false: no component is served even when beans are marked
 * @param protocols      the protocols served, in order of preference; empty: every one on the class path
 * @param ports          a fixed port per protocol; the others pick free ports
 * @param bindAddress    where the listeners bind (default loopback)
 * @param advertisedHost the host written into registry entries, when it is not the bind address
 * @param lease          how long the registry keeps an entry without a heartbeat
 * @param drain          how a shutdown drains
 * @param authorization  who may call what
 * @param jwt            how bearer tokens are verified
 */
@ConfigurationProperties("switchboard.server")
public record SwitchboardServerProperties(
        @DefaultValue("true") boolean enabled,
        @DefaultValue List<String> protocols,
        @DefaultValue Map<String, Integer> ports,
        String bindAddress,
        String advertisedHost,
        @DefaultValue("30s") Duration lease,
        @DefaultValue Drain drain,
        @DefaultValue Authorization authorization,
        @DefaultValue Jwt jwt) {

    /**
     * @param quietPeriod how long the server still answers after unbinding, while clients move away
     * @param timeout     how long it then waits for the calls under way
     */
    public record Drain(@DefaultValue("1s") Duration quietPeriod, @DefaultValue("30s") Duration timeout) {
    }

    /**
     * @param policyFile     a policy in gRPC's authorization policy form; none: every caller may call everything
     * @param reloadInterval how often the file is checked for changes
     */
    public record Authorization(Path policyFile, @DefaultValue("5s") Duration reloadInterval) {
    }

    /**
     * @param keys           a JWKS file or PEM public keys; none: tokens are not looked at
     * @param issuer         the {@code iss} every token must have
     * @param audience       an audience every token's {@code aud} must hold (needed with keys)
     * @param principalClaim the claim that names the caller
     * @param clockSkew      how far {@code exp} and {@code nbf} may be off this host's clock
     */
    public record Jwt(Path keys, String issuer, String audience, @DefaultValue("sub") String principalClaim,
            @DefaultValue("60s") Duration clockSkew) {
    }
}
