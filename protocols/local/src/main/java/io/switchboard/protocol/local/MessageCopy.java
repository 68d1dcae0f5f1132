package io.switchboard.protocol.local;

import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoOutput;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.function.LongConsumer;

/**
 * Deep copies of message beans through a component's protobuf codec, the one the gRPC wire speaks:
 * written part by part and each part read back in memory at once. The codec walks linked
 * structures through a node table, so a copy of any length, with cycles or shared nodes, needs no
 * stack depth and keeps its shape; numbers keep their exact bits (NaN payloads, -0.0), date-times
 * their offsets, and null stays apart from empty. A large primitive array passes through one part
 * buffer of at most {@link ProtoCodec#PART_BYTES} into the new array, which the reader allocates
 * once, at its final size.
 *
 * <p>Writer and reader may be the codecs of two class loaders' copies of the same interface, which
 * is how a call crosses class loaders within a JVM.
 */
final class MessageCopy {
    /** No limits in process: they protect a server from what arrives over a network. */
    private static final MessageLimits NO_LIMITS = MessageLimits.unlimited();

    private MessageCopy() {
    }

    /**
     * A copy of {@code message}, the message named {@code element}; {@code copied} (if not null)
     * is told how many bytes of its protobuf encoding it went through.
     *
     * @throws io.switchboard.codec.message.WireFormatException when the message cannot be encoded
     */
    static Object copy(ProtoCodec from, Object message, ProtoCodec to, String element, LongConsumer copied) {
        ProtoCodec.Writer writer = from.writer(element, message, Integer.MAX_VALUE);
        long size = writer.size();
        if (copied != null) {
            copied.accept(size);
        }
        ProtoCodec.Reader reader = to.reader(element, NO_LIMITS, size);
        ProtoOutput part = new ProtoOutput((int) Math.min(size, ProtoCodec.PART_BYTES) + 16);
        OutputStream intoReader = new OutputStream() {
            @Override
            public void write(byte[] b, int off, int len) {
                reader.readPart(b, off, off + len);   // the part buffer itself, not a copy of it
            }

            @Override
            public void write(int b) {
                throw new UnsupportedOperationException("parts are handed over whole");
            }
        };
        try {
            do {
                part.reset();
                writer.writePart(part, ProtoCodec.PART_BYTES);
                part.writeTo(intoReader);
            } while (writer.hasMore());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return reader.finish();
    }
}
