package io.switchboard.bench;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Switchboard's tcp server called by a hand-written client: each request a {@code baidu_std} frame
 * made once per payload (the echo service's {@code empty} or {@code echoDoubles}, correlation id 1,
 * a fixed call id and a 30 s timeout: the bytes the meta-stub sends), written to the server's Unix
 * socket in one write and its answer read
 * with blocking reads, as the {@code socket-unix} row does. Beside {@code socket-unix} (the same
 * client loop and a raw server) and {@code tcp-unix} (the meta-stub and tcp client against the same
 * server) it splits a call's time between the two sides. Empty calls and {@code double[]} only.
 *
 * <pre>{@code
 * try (RawTcpPeer peer = new RawTcpPeer(unixSocketPath)) {
 *     Object back = peer.roundTrip(Payload.of(Workload.DOUBLES, 10));
 * }
 * }</pre>
 */
final class RawTcpPeer implements Peer {
    static final String NAME = "tcp-raw";
    private static final String SERVICE = "switchboard.echo.Echo";
    private static final int HEADER = 12;
    private static final int MAGIC = ('P' << 24) | ('R' << 16) | ('P' << 8) | 'C';
    private static final String CALL_ID = "0123456789abcdef0123456789abcdef";
    private static final int TIMEOUT_MILLIS = 30_000;

    private final Path socket;
    private final AtomicLong sent = new AtomicLong();
    private final byte[] header = new byte[HEADER];
    private SocketChannel channel;
    private OutputStream out;
    private DataInputStream in;
    private Payload framed;
    private byte[] frame;

    RawTcpPeer(Path socket) {
        this.socket = socket;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Object roundTrip(Payload p) throws Exception {
        if (channel == null) {
            channel = SocketChannel.open(StandardProtocolFamily.UNIX);
            channel.connect(UnixDomainSocketAddress.of(socket));
            out = new CountingOutputStream(Channels.newOutputStream(channel), sent);
            in = new DataInputStream(Channels.newInputStream(channel));
        }
        if (framed != p) {
            frame = frame(p);
            framed = p;
        }
        try {
            out.write(frame);
            return answer(p);
        } catch (IOException | RuntimeException e) {
            close();   // out of step now; the next call connects again
            throw e;
        }
    }

    private Object answer(Payload p) throws IOException {
        in.readFully(header);
        ByteBuffer h = ByteBuffer.wrap(header);
        if (h.getInt() != MAGIC) {
            throw new IOException("not a baidu_std frame");
        }
        int body = h.getInt();
        int metaBytes = h.getInt();
        byte[] b = new byte[body];
        in.readFully(b);
        ProtoReader meta = new ProtoReader(b, 0, metaBytes);
        while (meta.more()) {
            int tag = meta.varint32();
            if (tag == (2 << 3 | 2)) {   // response: an error code means the call failed
                ProtoReader response = meta.message();
                while (response.more()) {
                    int t = response.varint32();
                    if (t == (1 << 3) && response.varint32() != 0) {
                        throw new IOException("the server answered with error code");
                    } else if (t != (1 << 3)) {
                        response.skip(t);
                    }
                }
            } else {
                meta.skip(tag);
            }
        }
        if (p.workload() != Workload.DOUBLES) {
            return null;
        }
        ProtoReader data = new ProtoReader(b, metaBytes, body);
        double[] values = new double[0];
        while (data.more()) {
            int tag = data.varint32();
            if (tag == (1 << 3 | 2)) {
                int length = data.varint32();
                values = new double[length / 8];
                ByteBuffer.wrap(b, data.at, length).order(ByteOrder.LITTLE_ENDIAN).asDoubleBuffer().get(values);
                data.at += length;
            } else {
                data.skip(tag);
            }
        }
        return values;
    }

    /** The request frame of {@code p}: header, {@code RpcMeta}, the request message. */
    private static byte[] frame(Payload p) throws Failure {
        if (p.workload() != Workload.EMPTY && p.workload() != Workload.DOUBLES) {
            throw new Failure(NAME + " sends empty calls and double[] only");
        }
        ByteBuffer request = ByteBuffer.allocate(112);
        field(request, 1, SERVICE.getBytes(StandardCharsets.UTF_8));
        field(request, 2, (p.workload() == Workload.EMPTY ? "empty" : "echoDoubles").getBytes(StandardCharsets.UTF_8));
        // what the meta-stub's tcp client sends too: a call id (echo's operations are idempotent, so
        // the server remembers none) and the time left, so the server does the same work per call
        field(request, 7, CALL_ID.getBytes(StandardCharsets.US_ASCII));
        varint(request, 8 << 3);
        varint(request, TIMEOUT_MILLIS);
        ByteBuffer meta = ByteBuffer.allocate(128);
        field(meta, 1, java.util.Arrays.copyOf(request.array(), request.position()));
        meta.put((byte) (4 << 3)).put((byte) 1);   // correlation_id 1: one call at a time
        byte[] data = new byte[0];
        if (p.workload() == Workload.DOUBLES && p.doubles().length > 0) {
            ByteBuffer packed = ByteBuffer.allocate(p.doubles().length * 8).order(ByteOrder.LITTLE_ENDIAN);
            packed.asDoubleBuffer().put(p.doubles());
            ByteBuffer d = ByteBuffer.allocate(packed.capacity() + 16);
            field(d, 1, packed.array());
            data = java.util.Arrays.copyOf(d.array(), d.position());
        }
        ByteBuffer f = ByteBuffer.allocate(HEADER + meta.position() + data.length);
        f.putInt(MAGIC).putInt(meta.position() + data.length).putInt(meta.position());
        f.put(meta.array(), 0, meta.position()).put(data);
        return f.array();
    }

    private static void field(ByteBuffer out, int number, byte[] value) {
        varint(out, number << 3 | 2);
        varint(out, value.length);
        out.put(value);
    }

    private static void varint(ByteBuffer out, int v) {
        while ((v & ~0x7F) != 0) {
            out.put((byte) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        out.put((byte) v);
    }

    /** Just enough of protobuf's reading for a meta and a packed array. */
    private static final class ProtoReader {
        private final byte[] b;
        private final int end;
        int at;

        ProtoReader(byte[] b, int from, int to) {
            this.b = b;
            this.at = from;
            this.end = to;
        }

        boolean more() {
            return at < end;
        }

        int varint32() throws IOException {
            int v = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                if (at >= end) {
                    throw new EOFException("a varint runs past its message");
                }
                byte x = b[at++];
                if (shift < 32) {
                    v |= (x & 0x7F) << shift;
                }
                if ((x & 0x80) == 0) {
                    return v;
                }
            }
            throw new IOException("a varint of more than 10 bytes");
        }

        ProtoReader message() throws IOException {
            int length = varint32();
            ProtoReader m = new ProtoReader(b, at, at + length);
            at += length;
            return m;
        }

        void skip(int tag) throws IOException {
            switch (tag & 7) {
                case 0 -> varint32();
                case 1 -> at += 8;
                case 2 -> at += varint32();
                case 5 -> at += 4;
                default -> throw new IOException("wire type " + (tag & 7));
            }
        }
    }

    @Override
    public long requestBytes(Payload payload) throws Exception {
        long before = sent.get();
        roundTrip(payload);
        return sent.get() - before;
    }

    @Override
    public void close() {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // closing a local socket; nothing to do
            }
            channel = null;
        }
    }
}
