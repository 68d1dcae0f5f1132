package io.switchboard.protocol.tcp;

/**
 * What the tcp protocol accepts beside the settings every protocol shares: the largest message a
 * frame carries (requests and responses; a larger call is refused before anything is sent, and
 * belongs on gRPC) and the largest {@code RpcMeta}.
 *
 * @param maxFrameBytes         the largest message (a frame's data) sent or accepted; default 4 MiB
 * @param maxMetaBytes          the largest {@code RpcMeta} accepted; default 64 KiB
 * @param maxCallsPerConnection most calls a server runs at once for one connection; one more is
 *                              answered {@code EOVERCROWDED} before it runs; default 1,024
 * @param inlineMicros          a server runs an operation's calls on the event loop that read them
 *                              once its recent runs each took at most this long ({@link InlineRuns});
 *                              0: always on worker threads. Default 100 µs, or
 *                              {@code -Dswitchboard.tcp.inlineMicros}
 */
public record TcpLimits(int maxFrameBytes, int maxMetaBytes, int maxCallsPerConnection, int inlineMicros) {
    /** 4 MiB: messages up to this go over tcp; larger ones belong on gRPC, which streams them in parts. */
    public static final int DEFAULT_MAX_FRAME_BYTES = 4 << 20;
    public static final int DEFAULT_MAX_META_BYTES = 64 << 10;
    public static final int DEFAULT_MAX_CALLS_PER_CONNECTION = 1024;
    public static final int DEFAULT_INLINE_MICROS = 100;
    /** System property that sets {@link #inlineMicros} of the provider found by name. */
    public static final String INLINE_PROPERTY = "switchboard.tcp.inlineMicros";
    /** System property that sets the frame limit of the provider found by name, in bytes. */
    public static final String MAX_FRAME_PROPERTY = "switchboard.tcp.maxFrameBytes";

    public TcpLimits {
        if (maxFrameBytes <= 0 || maxMetaBytes <= 0 || maxCallsPerConnection <= 0 || inlineMicros < 0
                || maxFrameBytes > Integer.MAX_VALUE - maxMetaBytes - 12) {
            throw new IllegalArgumentException("tcp limits out of range: frame " + maxFrameBytes + ", meta " + maxMetaBytes
                    + ", calls per connection " + maxCallsPerConnection);
        }
    }

    /** The defaults, with the frame limit of {@link #MAX_FRAME_PROPERTY} when set. */
    public static TcpLimits defaults() {
        return new TcpLimits(Integer.getInteger(MAX_FRAME_PROPERTY, DEFAULT_MAX_FRAME_BYTES), DEFAULT_MAX_META_BYTES,
                DEFAULT_MAX_CALLS_PER_CONNECTION, Integer.getInteger(INLINE_PROPERTY, DEFAULT_INLINE_MICROS));
    }

    public TcpLimits withMaxFrameBytes(int bytes) {
        return new TcpLimits(bytes, maxMetaBytes, maxCallsPerConnection, inlineMicros);
    }

    public TcpLimits withMaxMetaBytes(int bytes) {
        return new TcpLimits(maxFrameBytes, bytes, maxCallsPerConnection, inlineMicros);
    }

    /** 0: every call on a worker thread. */
    public TcpLimits withInlineMicros(int micros) {
        return new TcpLimits(maxFrameBytes, maxMetaBytes, maxCallsPerConnection, micros);
    }

    public TcpLimits withMaxCallsPerConnection(int calls) {
        return new TcpLimits(maxFrameBytes, maxMetaBytes, calls, inlineMicros);
    }
}
