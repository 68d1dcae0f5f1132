package io.switchboard.testing;

import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoOutput;
import java.util.ArrayList;
import java.util.List;

/**
 * A message as the parts a protobuf writer cuts it into, as the streaming protocols send it.
 *
 * <pre>{@code
 * List<byte[]> parts = ProtoParts.of(codec.writer("echoDoubles", request, 1000), 64);
 * }</pre>
 */
public final class ProtoParts {
    private ProtoParts() {
    }

    /** Every part {@code writer} writes when asked for about {@code target} bytes at a time, until it has no more. */
    public static List<byte[]> of(ProtoCodec.Writer writer, int target) {
        List<byte[]> parts = new ArrayList<>();
        ProtoOutput out = new ProtoOutput(Math.min(target, ProtoCodec.PART_BYTES) + 64);
        do {
            out.reset();
            writer.writePart(out, target);
            parts.add(out.toByteArray());
        } while (writer.hasMore());
        return parts;
    }
}
