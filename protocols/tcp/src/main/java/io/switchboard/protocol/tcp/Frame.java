package io.switchboard.protocol.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoInput;
import io.switchboard.codec.proto.ProtoOutput;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;

/**
 * One {@code baidu_std} frame as read off a connection: its meta and its data (the protobuf
 * message; a slice of the connection's buffer, released by whoever reads it), or, for a frame
 * whose data was over the reader's limit, only the meta and the size it announced (its data was
 * skipped). On the wire:
 *
 * <pre>
 * "PRPC" | body size (uint32, big-endian) | meta size (uint32, big-endian) | RpcMeta | data
 * </pre>
 *
 * where the body is the meta and the data together.
 */
final class Frame {
    /** {@code PRPC} as a big-endian int. */
    static final int MAGIC = ('P' << 24) | ('R' << 16) | ('P' << 8) | 'C';
    static final int HEADER_BYTES = 12;

    final RpcMeta meta;
    /** The data, or null for a frame skipped as over the limit. */
    final ByteBuf data;
    /** The data's size as the header announced it (meta excluded). */
    final long dataBytes;
    /** The whole frame's bytes on the wire: header, meta and data. */
    final long wireBytes;

    /** A frame without data because the server's budget for large frames was spent (not over the limit). */
    final boolean overBudget;

    Frame(RpcMeta meta, ByteBuf data, long dataBytes, long wireBytes) {
        this(meta, data, dataBytes, wireBytes, false);
    }

    private Frame(RpcMeta meta, ByteBuf data, long dataBytes, long wireBytes, boolean overBudget) {
        this.meta = meta;
        this.data = data;
        this.dataBytes = dataBytes;
        this.wireBytes = wireBytes;
        this.overBudget = overBudget;
    }

    /** A frame whose data was skipped because no buffer could be had for it from the server's budget. */
    static Frame overBudget(RpcMeta meta, long dataBytes, long wireBytes) {
        return new Frame(meta, null, dataBytes, wireBytes, true);
    }

    /** Over the frame limit: its data was not read. */
    boolean oversized() {
        return data == null && !overBudget;
    }

    /** Frees the data, if any. */
    void release() {
        if (data != null) {
            data.release();
        }
    }


    /**
     * A frame of {@code meta} and the message {@code writer} writes (null: no data), in one buffer.
     * The caller has checked the size against the frame limit.
     */
    static ByteBuf encode(ByteBufAllocator alloc, byte[] meta, ProtoCodec.Writer writer) {
        long dataBytes = writer == null ? 0 : writer.size();
        int body = (int) (meta.length + dataBytes);
        ByteBuf buf = alloc.buffer(HEADER_BYTES + body);
        try {
            buf.writeInt(MAGIC).writeInt(body).writeInt(meta.length).writeBytes(meta);   // the header, as header() makes it
            if (writer != null) {
                ProtoOutput out = ProtoOutput.into(new ByteBufOutputStream(buf),
                        new byte[(int) Math.min(dataBytes, 8 << 10) + 16]);
                writer.writePart(out, Integer.MAX_VALUE);
                out.flush();
            }
            return buf;
        } catch (RuntimeException | Error e) {
            buf.release();
            throw e;
        }
    }

    /**
     * A request frame, header, meta and message, written straight into one array of at least its
     * size: the first {@link ProtoOutput#size()} bytes of the output's {@link ProtoOutput#array()},
     * which the caller gives back ({@link FrameArrays#give}) once it has written them. The caller
     * has checked the message's size against the frame limit.
     *
     * @param names the operation's {@link RpcMeta#names}, encoded once
     */
    static ProtoOutput request(byte[] names, String requestId, int timeoutMillis, long correlationId,
                               Map<String, String> userFields, String authentication, ProtoCodec.Writer writer) {
        int meta = RpcMeta.requestBytes(names, 0, requestId, timeoutMillis, correlationId, userFields, authentication);
        int data = (int) writer.size();
        // slack for the varint writers, which make room for their longest form; a large frame's
        // array is a kept one, given back once the frame is written
        ProtoOutput out = ProtoOutput.over(FrameArrays.SHARED.take(HEADER_BYTES + meta + data + 16));
        out.writeRaw(header(meta, data), 0, HEADER_BYTES);
        RpcMeta.writeRequest(out, names, 0, requestId, timeoutMillis, correlationId, userFields, authentication);
        writer.writePart(out, Integer.MAX_VALUE);
        if (writer.hasMore() || out.size() != HEADER_BYTES + meta + data) {
            throw new IllegalStateException("a request frame of " + out.size() + " bytes, not the "
                    + (HEADER_BYTES + meta + data) + " its sizes announced");
        }
        return out;
    }

    /** A frame of {@code meta} and {@code data} as they are (a compressed message), in one buffer. */
    static ByteBuf encodeRaw(ByteBufAllocator alloc, byte[] meta, byte[] data) {
        ByteBuf buf = alloc.buffer(HEADER_BYTES + meta.length + data.length);
        return buf.writeBytes(header(meta.length, data.length)).writeBytes(meta).writeBytes(data);
    }

    /**
     * A request frame whose message is compressed: as {@link #request(byte[], String, int, long, Map, String,
     * ProtoCodec.Writer)}, with {@code compress_type} in its meta. The caller has checked the message's size,
     * uncompressed, against the frame limit.
     */
    static ProtoOutput request(byte[] names, String requestId, int timeoutMillis, long correlationId,
                               Map<String, String> userFields, String authentication, TcpCompression compression,
                               ProtoCodec.Writer writer) {
        byte[] data = compressed(compression, writer);
        int meta = RpcMeta.requestBytes(names, 0, requestId, timeoutMillis, correlationId, userFields, authentication)
                + 1 + ProtoOutput.varint64Size(compression.wireType());
        ProtoOutput out = new ProtoOutput(HEADER_BYTES + meta + data.length + 16);
        out.writeRaw(header(meta, data.length), 0, HEADER_BYTES);
        RpcMeta.writeRequest(out, names, 0, requestId, timeoutMillis, correlationId, userFields, authentication);
        out.writeInt32(3, compression.wireType());
        out.writeRaw(data, 0, data.length);
        if (out.size() != HEADER_BYTES + meta + data.length) {
            throw new IllegalStateException("a request frame of " + out.size() + " bytes, not the "
                    + (HEADER_BYTES + meta + data.length) + " its sizes announced");
        }
        return out;
    }

    /** The message {@code writer} writes, compressed. */
    static byte[] compressed(TcpCompression compression, ProtoCodec.Writer writer) {
        ProtoOutput plain = new ProtoOutput((int) writer.size() + 16);
        writer.writePart(plain, Integer.MAX_VALUE);
        return FrameCompression.compress(compression, plain.array(), 0, plain.size());
    }

    /** A frame of {@code meta} alone (a cancel), as bytes. */
    static byte[] bytes(byte[] meta) {
        byte[] frame = Arrays.copyOf(header(meta.length, 0), HEADER_BYTES + meta.length);
        System.arraycopy(meta, 0, frame, HEADER_BYTES, meta.length);
        return frame;
    }

    /** The header of a frame whose meta and data have these sizes. */
    private static byte[] header(int metaBytes, int dataBytes) {
        return ByteBuffer.allocate(HEADER_BYTES).putInt(MAGIC).putInt(metaBytes + dataBytes).putInt(metaBytes).array();
    }

    /**
     * Reads a frame's data into {@code reader}: in place from a heap buffer's array, else through a
     * {@link ProtoInput.Source} over the buffer's memory.
     */
    static void readInto(ProtoCodec.Reader reader, ByteBuf data) {
        int n = data.readableBytes();
        if (data.hasArray()) {
            int from = data.arrayOffset() + data.readerIndex();
            reader.readPart(data.array(), from, from + n);
            data.skipBytes(n);
        } else {
            reader.readPart(source(data), n);
        }
    }

    /**
     * This frame with its data in a buffer of its own, if that is at most {@code maxCopyBytes}, and
     * the connection's buffer it was a slice of freed; else this frame. A small answer copied lets a
     * reader reuse its receive buffer rather than allocate a new one for every read.
     */
    Frame detached(int maxCopyBytes) {
        if (data == null || data.readableBytes() > maxCopyBytes) {
            return this;
        }
        byte[] copy = new byte[data.readableBytes()];
        data.getBytes(data.readerIndex(), copy);
        data.release();
        return new Frame(meta, io.netty.buffer.Unpooled.wrappedBuffer(copy), dataBytes, wireBytes);
    }

    /** The data of a frame as the protobuf codecs read it, straight from the connection's buffer. */
    static ProtoInput.Source source(ByteBuf data) {
        return new ProtoInput.Source() {
            @Override
            public ByteBuffer next() {
                return data.nioBuffer();
            }

            @Override
            public void skip(int n) {
                data.skipBytes(Math.min(n, data.readableBytes()));
            }
        };
    }
}
