package io.switchboard.protocol.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.DecoderException;
import io.switchboard.codec.binary.WireFormatException;
import io.switchboard.codec.proto.ProtoInput;
import java.util.List;

/**
 * Cuts a connection's bytes into {@link Frame}s, within limits checked on the header before any
 * buffer grows: a frame whose data is over {@code maxDataBytes} is not buffered; its meta is read
 * (so that the call it belongs to can be answered or failed by its correlation id) and its data
 * skipped as it arrives. Anything else that breaks the framing (not {@code PRPC}, a meta larger
 * than the body or than {@code maxMetaBytes}, a meta that does not parse) ends the connection with
 * a {@link FrameException}: the stream cannot be resynchronised.
 */
final class FrameDecoder extends ByteToMessageDecoder {
    private final long maxDataBytes;
    private final int maxMetaBytes;
    /** Data bytes of an oversized frame still to skip. */
    private long discarding;

    FrameDecoder(long maxDataBytes, int maxMetaBytes) {
        this.maxDataBytes = maxDataBytes;
        this.maxMetaBytes = maxMetaBytes;
    }

    /** The framing of a connection broke: its bytes cannot be read on. */
    static final class FrameException extends DecoderException {
        FrameException(String message) {
            super(message);
        }
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (discarding > 0) {
            int n = (int) Math.min(discarding, in.readableBytes());
            in.skipBytes(n);
            discarding -= n;
            if (discarding > 0) {
                return;
            }
        }
        if (in.readableBytes() < Frame.HEADER_BYTES) {
            return;
        }
        int at = in.readerIndex();
        if (in.getInt(at) != Frame.MAGIC) {
            throw new FrameException("not a baidu_std frame: the first bytes are not PRPC");
        }
        long body = in.getUnsignedInt(at + 4);
        long metaBytes = in.getUnsignedInt(at + 8);
        if (metaBytes > body) {
            throw new FrameException("a meta of " + metaBytes + " bytes in a body of " + body);
        }
        if (metaBytes > maxMetaBytes) {
            throw new FrameException("a meta of " + metaBytes + " bytes is over the limit of " + maxMetaBytes);
        }
        long dataBytes = body - metaBytes;
        boolean oversized = dataBytes > maxDataBytes;
        long needed = Frame.HEADER_BYTES + (oversized ? metaBytes : body);
        if (in.readableBytes() < needed) {
            return;
        }
        RpcMeta meta = meta(in, at + Frame.HEADER_BYTES, (int) metaBytes);
        in.skipBytes(Frame.HEADER_BYTES + (int) metaBytes);
        if (oversized) {
            discarding = dataBytes;
            int n = (int) Math.min(discarding, in.readableBytes());
            in.skipBytes(n);
            discarding -= n;
            out.add(new Frame(meta, null, dataBytes, Frame.HEADER_BYTES + body));
            return;
        }
        out.add(new Frame(meta, in.readRetainedSlice((int) dataBytes), dataBytes, Frame.HEADER_BYTES + body));
    }

    private RpcMeta meta(ByteBuf in, int at, int length) {
        byte[] bytes = new byte[length];
        in.getBytes(at, bytes);
        try {
            return RpcMeta.decode(new ProtoInput(bytes, 0, length, RpcMeta.limits(maxMetaBytes)));
        } catch (WireFormatException e) {
            throw new FrameException("a malformed RpcMeta: " + e.getMessage());
        }
    }
}
