package io.switchboard.protocol.grpc;

/**
 * The switches of this module's shortcuts through grpc-java's and Netty's insides, each on unless
 * its system property is {@code false} (read once, when the class loads). With one off, the module
 * takes the public path instead: slower where the shortcut gained, the same on the wire. Which
 * library version each was checked against, and the test that fails when a library no longer
 * behaves as the shortcut assumes: docs/architecture.md, "Library internals we rely on".
 */
final class LibraryInternals {
    /**
     * {@link NettyTuning#channel} and {@link NettyTuning#server}: grpc-java's {@code @Internal}
     * negotiator classes to reach each connection's HTTP/2 handler (the composite cumulator), and a
     * private field of Netty's handler (the largest frame announced). Off: the credentials as given,
     * gRPC's handler as gRPC configures it (frames of 16 KiB, reads merged by copying).
     */
    static final boolean NETTY_TUNING = on("switchboard.grpc.nettyTuning");

    static boolean on(String property) {
        return !"false".equalsIgnoreCase(System.getProperty(property, "true").strip());
    }

    private LibraryInternals() {
    }
}
