package io.switchboard.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code serve --authz} and {@code registry --authz}: a policy that does not parse stops the start, naming its line. */
class AuthzOptionTest {
    @Test
    void aBrokenPolicyStopsServeAndRegistryWithItsLineAndReason(@TempDir Path dir) throws Exception {
        Path policy = dir.resolve("authz.json");
        Files.writeString(policy, "{\n  \"name\": \"p\",\n  \"allow_rules\": [{\"name\": \"a\", \"surprise\": 1}]\n}\n");
        String registry = CommandOutput.stderr(1, "registry", "--port", "0", "--authz", policy.toString());
        assertTrue(registry.contains("line 3") && registry.contains("unknown field \"surprise\""), registry);
        String serve = CommandOutput.stderr(1, "serve", "echo", "--registry", "http://127.0.0.1:1/axis2/services/Registry",
                "--authz", policy.toString());
        assertTrue(serve.contains("line 3") && serve.contains("unknown field \"surprise\""), serve);
    }
}
