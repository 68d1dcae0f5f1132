package io.switchboard.bench;

import io.switchboard.protocol.spi.PhaseMarks;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.net.ServerSocket;

/**
 * Java serialization without RMI: {@link ObjectOutputStream} and {@link ObjectInputStream} over a
 * plain socket. Java serialization recurses once per list node, so deep lists overflow the stack of
 * whichever side writes or reads them first; that is reported as the cell's failure, not a crash.
 *
 * <pre>{@code
 * try (ObjectStreamPeer peer = new ObjectStreamPeer(port)) {
 *     Object back = peer.roundTrip(Payload.of(Workload.LIST, 100));
 * }
 * }</pre>
 */
final class ObjectStreamPeer extends SocketPeer {
    private static final int BUFFER = 64 * 1024;

    private ObjectOutputStream out;
    private ObjectInputStream in;

    ObjectStreamPeer(int port) {
        super(port, "Java serialization recurses per node");
    }

    @Override
    public String name() {
        return "oos";
    }

    @Override
    protected void opened(OutputStream out, InputStream in) throws IOException {
        this.out = new ObjectOutputStream(new BufferedOutputStream(out, BUFFER));
        this.out.flush();
        this.in = new ObjectInputStream(new BufferedInputStream(in, BUFFER));
    }

    @Override
    protected Object exchange(Payload p) throws Exception {
        PhaseMarks.mark(PhaseMarks.Phase.ENCODE_START);
        out.writeObject(p.javaValue());
        out.reset();   // else the next call would send only a back-reference to the same array
        PhaseMarks.mark(PhaseMarks.Phase.ENCODE_END);   // into the 64 KiB buffer, which it may have flushed already
        out.flush();
        PhaseMarks.mark(PhaseMarks.Phase.SEND_END);
        Object back = in.readObject();   // waits for and decodes the answer in one: no arrival mark
        PhaseMarks.mark(PhaseMarks.Phase.DECODE_END);
        if (back instanceof ServerFailure) {
            throw new Failure(((ServerFailure) back).reason);
        }
        return back;
    }

    /** Server side, in the forked JVM: reads an object, writes it back. */
    static void serve(ServerSocket listener) {
        BenchServer.acceptLoop(listener, "object-stream", s -> {
            s.setTcpNoDelay(true);
            ObjectOutputStream out = new ObjectOutputStream(new BufferedOutputStream(s.getOutputStream(), BUFFER));
            out.flush();
            ObjectInputStream in = new ObjectInputStream(new BufferedInputStream(s.getInputStream(), BUFFER));
            while (true) {
                Object value;
                try {
                    value = in.readObject();
                    PhaseMarks.mark(PhaseMarks.Phase.DECODE_END);
                } catch (EOFException e) {
                    return;
                } catch (StackOverflowError e) {
                    // The request is half read; tell the client why, then drop the connection.
                    out.reset();
                    out.writeObject(new ServerFailure("StackOverflowError in the server (Java serialization recurses per node)"));
                    out.flush();
                    return;
                }
                try {
                    PhaseMarks.mark(PhaseMarks.Phase.ENCODE_START);
                    out.writeObject(value);
                } catch (StackOverflowError e) {
                    return;   // half a response is on the wire: closing is all that is left
                }
                out.reset();
                PhaseMarks.mark(PhaseMarks.Phase.ENCODE_END);
                out.flush();
                PhaseMarks.mark(PhaseMarks.Phase.SEND_END);
            }
        });
    }

    /** Sent instead of an answer when the server could not read the request. */
    static final class ServerFailure implements Serializable {
        private static final long serialVersionUID = 1L;
        final String reason;

        ServerFailure(String reason) {
            this.reason = reason;
        }
    }
}
