package io.switchboard.protocol.grpc;

import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.buffer.ByteBufAllocator;
import io.grpc.netty.shaded.io.netty.buffer.CompositeByteBuf;
import io.grpc.netty.shaded.io.netty.handler.codec.ByteToMessageDecoder;

/**
 * Cumulates an HTTP/2 connection's socket reads for its frame decoder: a read of at least
 * {@link #MIN_COMPOSED_BYTES} is added to the bytes not yet decoded as a component of a
 * {@link CompositeByteBuf}, without copying it; a smaller read is copied (Netty's
 * {@link ByteToMessageDecoder#MERGE_CUMULATOR}). A DATA frame's payload is then a slice over the
 * reads it arrived in, and the message's bytes are copied once, from them into the value.
 *
 * <p>The components stay few: a frame is decoded as soon as its last byte arrives, so the bytes
 * held are at most one frame, in pieces of at least {@link #MIN_COMPOSED_BYTES} (a sender that
 * trickles bytes gets the copying cumulator's behaviour, as gRPC's own adaptive cumulator does).
 *
 * <pre>{@code
 * http2ConnectionHandler.setCumulator(new ComposingCumulator());
 * }</pre>
 */
final class ComposingCumulator implements ByteToMessageDecoder.Cumulator {
    /** Reads this large or larger are composed; smaller ones copied. */
    static final int MIN_COMPOSED_BYTES = 4 << 10;

    @Override
    public ByteBuf cumulate(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
        if (!cumulation.isReadable()) {
            cumulation.release();
            return in;
        }
        if (in.readableBytes() < MIN_COMPOSED_BYTES) {
            return ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(alloc, cumulation, in);
        }
        CompositeByteBuf composite = null;
        try {
            if (cumulation instanceof CompositeByteBuf c && c.refCnt() == 1) {
                composite = c;
                // a merge may have left writable room in the last component: components go after the written bytes
                if (composite.writerIndex() != composite.capacity()) {
                    composite.capacity(composite.writerIndex());
                }
            } else {
                // frames decoded from the cumulation hold it (retained slices): a new composite over
                // its unread bytes leaves them valid
                composite = alloc.compositeBuffer(Integer.MAX_VALUE).addFlattenedComponents(true, cumulation);
            }
            composite.addFlattenedComponents(true, in);
            in = null;
            return composite;
        } finally {
            if (in != null) {
                // as Netty's composite cumulator: what could not be added is released, and the cumulation with it
                in.release();
                if (composite != null && composite != cumulation) {
                    composite.release();
                }
            }
        }
    }
}
