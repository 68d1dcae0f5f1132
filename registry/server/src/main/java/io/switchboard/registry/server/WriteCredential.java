package io.switchboard.registry.server;

import io.switchboard.idl.runtime.DeclaredFault;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/** The shared secret every registry write (bind, rebind, unbind, renew) must carry, when the registry has one. */
final class WriteCredential {
    private final byte[] secret;

    /** {@code secret}: null when writes need none. */
    WriteCredential(String secret) {
        this.secret = secret == null ? null : secret.getBytes(StandardCharsets.UTF_8);
    }

    /** Throws the operation's {@code unauthorized} fault unless {@code credential} is acceptable. */
    <X extends DeclaredFault> void check(String credential, RegistryFault<?, X> fault) throws X {
        String problem = problem(credential);
        if (problem != null) {
            throw fault.of(RegistryFault.UNAUTHORIZED, problem);
        }
    }

    /** Null when the credential is acceptable, else why not. Compared in constant time. */
    private String problem(String credential) {
        if (secret == null) {
            return null;
        }
        if (credential == null) {
            return "this registry needs a credential for writes";
        }
        if (!MessageDigest.isEqual(secret, credential.getBytes(StandardCharsets.UTF_8))) {
            return "the credential is not valid";
        }
        return null;
    }
}
