package io.switchboard.examples.bench;

import io.switchboard.protocol.spi.PhaseMarks;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicLong;

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
final class ObjectStreamPeer implements Peer {
    private static final int BUFFER = 64 * 1024;

    private final int port;
    private final AtomicLong sent = new AtomicLong();
    private Socket socket;
    private ObjectOutputStream out;
    private ObjectInputStream in;

    ObjectStreamPeer(int port) {
        this.port = port;
    }

    @Override
    public String name() {
        return "oos";
    }

    @Override
    public Object roundTrip(Payload p) throws Exception {
        if (socket == null) {
            socket = new Socket(InetAddress.getLoopbackAddress(), port);
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(Sweep.CALL_TIMEOUT_MILLIS);
            out = new ObjectOutputStream(new BufferedOutputStream(new CountingOutputStream(socket.getOutputStream(), sent), BUFFER));
            out.flush();
            in = new ObjectInputStream(new BufferedInputStream(socket.getInputStream(), BUFFER));
        }
        try {
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
        } catch (StackOverflowError e) {
            close();
            throw new Failure("StackOverflowError in the client (Java serialization recurses per node)");
        } catch (Exception e) {
            close();   // the streams are out of step now; the next call reconnects
            throw e;
        }
    }

    @Override
    public long requestBytes(Payload p) throws Exception {
        long before = sent.get();
        roundTrip(p);
        return sent.get() - before;
    }

    @Override
    public void close() {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing a loopback socket; nothing to do
            }
            socket = null;
        }
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
