package io.switchboard.protocol.grpc;

import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.protocol.spi.PhaseMarks;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Merges the parts of one incoming message into its codec's reader, made at the first part (the
 * headers, with the announced size that sizes the message's arrays, came before it). One thread
 * at a time: the reading thread, or gRPC's event loop when the parts are read on arrival
 * ({@link PartQueue#readOnArrival}); {@link #finish} after the message's end.
 */
final class MessageReader implements Consumer<Part> {
    private final Supplier<ProtoCodec.Reader> readers;
    private final Part.Scratch scratch = new Part.Scratch();
    private ProtoCodec.Reader reader;

    MessageReader(Supplier<ProtoCodec.Reader> readers) {
        this.readers = readers;
    }

    @Override
    public void accept(Part part) {
        if (reader == null) {
            reader = readers.get();
        }
        PhaseMarks.mark(PhaseMarks.Phase.DECODE_START);
        part.readInto(reader, scratch);
    }

    /** The whole message; throws the codec's refusal of an incomplete one. */
    Object finish() {
        if (reader == null) {
            reader = readers.get();
        }
        return reader.finish();
    }
}
