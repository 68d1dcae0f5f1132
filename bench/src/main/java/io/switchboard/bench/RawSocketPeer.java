package io.switchboard.bench;

import io.switchboard.protocol.spi.PhaseMarks;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.nio.ByteBuffer;

/**
 * The baseline: a hand-written protocol over a plain socket, what a careful programmer would write
 * without a framework. A message is a type byte and a count; doubles travel packed (8 bytes each,
 * converted through a {@link ByteBuffer} in 64 KiB blocks), list nodes field by field, encoded and
 * decoded in a loop so that list depth never touches the stack.
 *
 * <pre>{@code
 * try (RawSocketPeer peer = new RawSocketPeer(port)) {
 *     Object back = peer.roundTrip(Payload.of(Workload.DOUBLES, 1000));
 * }
 * }</pre>
 */
final class RawSocketPeer extends SocketPeer {
    private static final int EMPTY = 0;
    private static final int DOUBLES = 1;
    private static final int LIST = 2;
    private static final int BLOCK = 64 * 1024;
    /** The longest array either side reads: what the other protocols' servers accept in the bench, in doubles. */
    private static final int MAX_DOUBLES = (int) (BenchServer.MAX_MESSAGE_BYTES / 8);

    /** The row over a Unix domain socket: the floor for {@code tcp-unix} as {@code socket} is for {@code tcp}. */
    static final String UNIX_NAME = "socket-unix";

    private final Codec codec = new Codec();
    private final String name;
    private DataOutputStream out;
    private DataInputStream in;

    RawSocketPeer(int port) {
        super(port, null);
        this.name = "socket";
    }

    RawSocketPeer(java.nio.file.Path unixSocket) {
        super(unixSocket, null);
        this.name = UNIX_NAME;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    protected void opened(OutputStream out, InputStream in) {
        this.out = new DataOutputStream(new BufferedOutputStream(out, BLOCK));
        this.in = new DataInputStream(new BufferedInputStream(in, BLOCK));
    }

    @Override
    protected Object exchange(Payload p) throws IOException {
        codec.send(out, p.javaValue());
        return codec.read(in);
    }

    /** Server side, in the forked JVM: decodes each request into objects and encodes them back. */
    static void serve(ServerSocket listener) {
        BenchServer.acceptLoop(listener, "raw-socket", s -> {
            s.setTcpNoDelay(true);
            echo(s.getInputStream(), s.getOutputStream());
        });
    }

    /**
     * The same over a Unix domain socket at {@code path} (its directory the caller's), a thread per
     * connection blocked in its reads as over TCP.
     */
    static void serve(java.nio.file.Path path) throws IOException {
        java.nio.channels.ServerSocketChannel listener = java.nio.channels.ServerSocketChannel.open(
                java.net.StandardProtocolFamily.UNIX);
        listener.bind(java.net.UnixDomainSocketAddress.of(path));
        BenchServer.acceptLoop(listener, UNIX_NAME, c -> echo(java.nio.channels.Channels.newInputStream(c),
                java.nio.channels.Channels.newOutputStream(c)));
    }

    /** Answers each request with its own value until the client closes. */
    private static void echo(InputStream input, OutputStream output) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(input, BLOCK));
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(output, BLOCK));
        Codec codec = new Codec();
        while (true) {
            Object value;
            try {
                value = codec.read(in);
            } catch (EOFException e) {
                return;
            }
            codec.send(out, value);
        }
    }

    /** The wire format, with its scratch block; one per connection (plain gRPC's marshaller uses it too). */
    static final class Codec {
        private final byte[] block = new byte[BLOCK];
        private final ByteBuffer buffer = ByteBuffer.wrap(block);

        /** Encodes into the stream's buffer (64 KiB: a 1,000-node list fits, so encoding and sending are apart), then flushes. */
        void send(DataOutputStream out, Object value) throws IOException {
            PhaseMarks.mark(PhaseMarks.Phase.ENCODE_START);
            write(out, value);
            PhaseMarks.mark(PhaseMarks.Phase.ENCODE_END);
            out.flush();
            PhaseMarks.mark(PhaseMarks.Phase.SEND_END);
        }

        /** A double[] as its length and then each value's 8 bytes, packed (the layout of every array in this protocol). */
        void writeDoubles(DataOutputStream out, double[] values) throws IOException {
            out.writeInt(values.length);
            for (int off = 0; off < values.length; off += BLOCK / 8) {
                int n = Math.min(BLOCK / 8, values.length - off);
                buffer.clear();
                buffer.asDoubleBuffer().put(values, off, n);
                out.write(block, 0, n * 8);
            }
        }

        /** Reads what {@link #writeDoubles} wrote; an IOException, before allocating, for a length over {@code max}. */
        double[] readDoubles(DataInputStream in, int max) throws IOException {
            int length = in.readInt();
            if (length < 0 || length > max) {
                throw new IOException("an array of " + length + " doubles (at most " + max + " accepted)");
            }
            double[] values = new double[length];
            for (int off = 0; off < values.length; off += BLOCK / 8) {
                int n = Math.min(BLOCK / 8, values.length - off);
                in.readFully(block, 0, n * 8);
                buffer.clear();
                buffer.asDoubleBuffer().get(values, off, n);
            }
            return values;
        }

        void write(DataOutputStream out, Object value) throws IOException {
            if (value instanceof double[]) {
                out.writeByte(DOUBLES);
                writeDoubles(out, (double[]) value);
            } else if (value instanceof JavaLinkEntry) {
                int count = 0;
                for (JavaLinkEntry e = (JavaLinkEntry) value; e != null; e = e.nextLink) {
                    count++;
                }
                out.writeByte(LIST);
                out.writeInt(count);
                for (JavaLinkEntry e = (JavaLinkEntry) value; e != null; e = e.nextLink) {
                    out.writeLong(e.llong);
                    out.writeShort(e.sshort);
                    out.writeInt(e.iint);
                    out.writeFloat(e.ffloat);
                    out.writeDouble(e.ddouble);
                    out.writeUTF(e.sstring);
                }
            } else {
                out.writeByte(EMPTY);
            }
        }

        Object read(DataInputStream in) throws IOException {
            int type = in.read();
            if (type < 0) {
                throw new EOFException();
            }
            PhaseMarks.mark(PhaseMarks.Phase.ARRIVED);   // the reading thread has the first byte: arrival and decoding start at once
            PhaseMarks.mark(PhaseMarks.Phase.DECODE_START);
            Object value = readBody(type, in);
            PhaseMarks.mark(PhaseMarks.Phase.DECODE_END);
            return value;
        }

        private Object readBody(int type, DataInputStream in) throws IOException {
            if (type == DOUBLES) {
                return readDoubles(in, MAX_DOUBLES);
            }
            if (type == LIST) {
                int count = in.readInt();
                JavaLinkEntry head = null;
                JavaLinkEntry tail = null;
                for (int i = 0; i < count; i++) {
                    JavaLinkEntry e = new JavaLinkEntry();
                    e.llong = in.readLong();
                    e.sshort = in.readShort();
                    e.iint = in.readInt();
                    e.ffloat = in.readFloat();
                    e.ddouble = in.readDouble();
                    e.sstring = in.readUTF();
                    if (tail == null) {
                        head = e;
                    } else {
                        tail.nextLink = e;
                    }
                    tail = e;
                }
                return head;
            }
            if (type != EMPTY) {
                throw new IOException("unknown message type " + type);
            }
            return null;
        }
    }
}
