package io.switchboard.codec.message;

/**
 * What a reader accepts: total message bytes, linked nodes, bytes of one string or byte array,
 * and how deeply heterogeneous lists nest. Checked before anything is allocated, so a hostile
 * count cannot make the reader allocate more than the message could hold, nor a hostile nesting
 * make it recurse without bound.
 */
public record MessageLimits(long maxMessageBytes, int maxNodes, int maxStringBytes, int maxListDepth) {
    public MessageLimits {
        if (maxMessageBytes <= 0 || maxNodes < 0 || maxStringBytes < 0 || maxListDepth < 0) {
            throw new IllegalArgumentException("limits must be positive");
        }
    }

    /** Lists nest at most {@link io.switchboard.idl.runtime.HeterogeneousList#MAX_DEPTH} deep. */
    public MessageLimits(long maxMessageBytes, int maxNodes, int maxStringBytes) {
        this(maxMessageBytes, maxNodes, maxStringBytes, io.switchboard.idl.runtime.HeterogeneousList.MAX_DEPTH);
    }

    /** Strings and byte arrays up to 16 MiB, or the message size if smaller. */
    public static MessageLimits of(long maxMessageBytes, int maxNodes) {
        return new MessageLimits(maxMessageBytes, maxNodes, (int) Math.min(maxMessageBytes, 16 << 20));
    }

    public static MessageLimits unlimited() {
        return new MessageLimits(Long.MAX_VALUE, Integer.MAX_VALUE, Integer.MAX_VALUE - 16);
    }
}
