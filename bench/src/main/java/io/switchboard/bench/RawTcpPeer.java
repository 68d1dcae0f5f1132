package io.switchboard.bench;

import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.proto.ProtoInput;
import io.switchboard.codec.proto.ProtoOutput;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Switchboard's tcp server called by a client without its meta-stub or tcp client: each request a
 * {@code baidu_std} frame made once per payload (the echo service's {@code empty} or
 * {@code echoDoubles}, correlation id 1, a fixed call id and a 30 s timeout: the bytes the
 * meta-stub sends), written to the server's Unix socket in one write and its answer read with
 * blocking reads, as the {@code socket-unix} row does. Beside {@code socket-unix} (the same client
 * loop and a raw server) and {@code tcp-unix} (the meta-stub and tcp client against the same
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
    /** The echo answers of the bench's cells are far below this; a larger frame is not read. */
    private static final int MAX_ANSWER_BYTES = 64 << 20;
    private static final MessageLimits LIMITS = MessageLimits.of(MAX_ANSWER_BYTES, 1);

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
        if (body < metaBytes || metaBytes < 0 || body > MAX_ANSWER_BYTES) {
            throw new IOException("a frame of " + body + " bytes, " + metaBytes + " of them meta");
        }
        byte[] b = new byte[body];
        in.readFully(b);
        ProtoInput meta = new ProtoInput(b, 0, metaBytes, LIMITS);
        for (int tag = meta.readTag(); tag != 0; tag = meta.readTag()) {
            if (tag >>> 3 != 2) {   // RpcMeta.response: an error code means the call failed
                meta.skipField(tag);
                continue;
            }
            int outer = meta.beginMessage(meta.readLength());
            for (int t = meta.readTag(); t != 0; t = meta.readTag()) {
                if (t >>> 3 == 1 && meta.readVarint32() != 0) {
                    throw new IOException("the server answered with an error code");
                } else if (t >>> 3 != 1) {
                    meta.skipField(t);
                }
            }
            meta.endMessage(outer);
        }
        if (p.workload() != Workload.DOUBLES) {
            return null;
        }
        ProtoInput data = new ProtoInput(b, metaBytes, body, LIMITS);
        double[] values = new double[0];
        int[] count = {0};
        for (int tag = data.readTag(); tag != 0; tag = data.readTag()) {
            if (tag >>> 3 == 1) {
                values = data.appendDoubles(tag, values, count);
            } else {
                data.skipField(tag);
            }
        }
        return java.util.Arrays.copyOf(values, count[0]);
    }

    /**
     * The request frame of {@code p}: header, {@code RpcMeta}, the request message, written with
     * the protobuf primitives Switchboard's codecs use (no meta-stub, no tcp client).
     */
    private static byte[] frame(Payload p) throws Failure {
        if (p.workload() != Workload.EMPTY && p.workload() != Workload.DOUBLES) {
            throw new Failure(NAME + " sends empty calls and double[] only");
        }
        ProtoOutput request = new ProtoOutput(128);
        request.writeString(1, SERVICE);
        request.writeString(2, p.workload() == Workload.EMPTY ? "empty" : "echoDoubles");
        // what the meta-stub's tcp client sends too: a call id (echo's operations are idempotent, so
        // the server remembers none) and the time left, so the server does the same work per call
        request.writeString(7, CALL_ID);
        request.writeUInt32(8, TIMEOUT_MILLIS);
        ProtoOutput meta = new ProtoOutput(160);
        meta.writeBytes(1, request.array(), 0, request.size());
        meta.writeUInt32(4, 1);   // correlation_id 1: one call at a time
        ProtoOutput data = new ProtoOutput(16);
        if (p.workload() == Workload.DOUBLES) {
            data.writePackedDoubles(1, p.doubles(), 0, p.doubles().length);
        }
        ByteBuffer f = ByteBuffer.allocate(HEADER + meta.size() + data.size());
        f.putInt(MAGIC).putInt(meta.size() + data.size()).putInt(meta.size());
        f.put(meta.array(), 0, meta.size()).put(data.array(), 0, data.size());
        return f.array();
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
