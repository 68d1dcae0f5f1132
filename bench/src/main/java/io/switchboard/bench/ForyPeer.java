package io.switchboard.bench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import org.apache.fory.Fory;
import org.apache.fory.config.Language;

/**
 * Apache Fory, a fast object serializer, over a plain socket: each message is a length and Fory's
 * bytes. Reference tracking is on (a list may share nodes) and the depth limit is lifted, so a list
 * goes as deep as Fory's recursion allows on the thread's stack; past that the cell fails with the
 * reason, as Java serialization's does.
 *
 * <pre>{@code
 * try (ForyPeer peer = new ForyPeer(port)) {
 *     Object back = peer.roundTrip(Payload.of(Workload.LIST, 1000));
 * }
 * }</pre>
 */
final class ForyPeer extends SocketPeer {
    static final String NAME = "fory";
    private static final int BUFFER = 64 * 1024;
    /** Deeper than the sweep's longest list; Fory sizes a table by it, so not Integer.MAX_VALUE. */
    private static final int MAX_DEPTH = 1_100_000;

    private final Fory fory = newFory();
    private DataOutputStream out;
    private DataInputStream in;

    ForyPeer(int port) {
        super(port, "Fory recurses per node");
    }

    /** One per thread: a {@link Fory} instance is not thread-safe. */
    static Fory newFory() {
        Fory f = Fory.builder().withLanguage(Language.JAVA).withRefTracking(true).requireClassRegistration(true)
                .withMaxDepth(MAX_DEPTH).build();
        f.register(JavaLinkEntry.class);
        return f;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    protected void opened(OutputStream out, InputStream in) {
        this.out = new DataOutputStream(new BufferedOutputStream(out, BUFFER));
        this.in = new DataInputStream(new BufferedInputStream(in, BUFFER));
    }

    @Override
    protected Object exchange(Payload p) throws Exception {
        write(out, fory.serialize(p.javaValue()));
        int length = in.readInt();
        if (length < 0) {   // the server could not read the request: the reason's length, negated, and the reason
            throw new Failure(new String(readBytes(in, -length), StandardCharsets.UTF_8));
        }
        return fory.deserialize(readBytes(in, length));
    }

    private static void write(DataOutputStream out, byte[] bytes) throws IOException {
        out.writeInt(bytes.length);
        out.write(bytes);
        out.flush();
    }

    private static byte[] readBytes(DataInputStream in, int length) throws IOException {
        byte[] bytes = new byte[length];
        in.readFully(bytes);
        return bytes;
    }

    /** Server side, in the forked JVM: reads a message, writes it back through Fory. */
    static void serve(ServerSocket listener) {
        BenchServer.acceptLoop(listener, "fory", s -> {
            s.setTcpNoDelay(true);
            DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), BUFFER));
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), BUFFER));
            Fory fory = newFory();
            while (true) {
                byte[] request;
                try {
                    request = readBytes(in, in.readInt());
                } catch (EOFException e) {
                    return;
                }
                byte[] answer;
                try {
                    answer = fory.serialize(fory.deserialize(request));
                } catch (StackOverflowError e) {
                    byte[] reason = "StackOverflowError in the server (Fory recurses per node)".getBytes(StandardCharsets.UTF_8);
                    out.writeInt(-reason.length);
                    out.write(reason);
                    out.flush();
                    fory = newFory();   // its depth and reference state are undefined after the overflow
                    continue;
                }
                write(out, answer);
            }
        });
    }
}
