package io.switchboard.protocol.tcp;

/**
 * What the tcp protocol accepts beside the settings every protocol shares: the largest message a
 * frame carries (requests and responses; a larger call is refused before anything is sent, and
 * belongs on gRPC) and the largest {@code RpcMeta}.
 *
 * @param maxFrameBytes         the largest message (a frame's data) sent or accepted; default 4 MiB
 * @param maxMetaBytes          the largest {@code RpcMeta} accepted; default 64 KiB
 * @param maxCallsPerConnection most calls a server runs at once for one connection; one more is
 *                              answered {@code EOVERCROWDED} before it runs; default 1,024, and
 *                              never more than half the server's {@code maxConcurrentCalls}, so
 *                              one connection cannot take every worker
 * @param inlineMicros          a server runs an operation's calls on the event loop that read them
 *                              once its recent runs each took at most this long ({@link InlineRuns});
 *                              0: always on worker threads. Default 100 µs, or
 *                              {@code -Dswitchboard.tcp.inlineMicros}
 * @param policyMaxBytes        the largest call (request and expected response payload) a selection
 *                              policy sends over tcp on its own; larger ones go over gRPC. Default
 *                              2 MiB (measured: tcp is faster than gRPC up to it and beyond,
 *                              docs/tcp-wire.md; half the frame limit, so that a request the size
 *                              estimate undercounts still fits a frame), or
 *                              {@code -Dswitchboard.tcp.policyMaxBytes}
 * @param largeFrameBudgetBytes the bytes a server holds at once in the buffers of large frames
 *                              (256 KiB and more), over all its connections; a frame that finds it
 *                              spent is answered {@code EOVERCROWDED} without being read. 0 (the
 *                              default): a quarter of the heap, at most 256 MiB; never less than
 *                              one frame of the largest size
 */
public record TcpLimits(int maxFrameBytes, int maxMetaBytes, int maxCallsPerConnection, int inlineMicros,
                        long policyMaxBytes, long largeFrameBudgetBytes) {
    /** 4 MiB: messages up to this go over tcp; larger ones belong on gRPC, which streams them in parts. */
    public static final int DEFAULT_MAX_FRAME_BYTES = 4 << 20;
    public static final int DEFAULT_MAX_META_BYTES = 64 << 10;
    public static final int DEFAULT_MAX_CALLS_PER_CONNECTION = 1024;
    public static final int DEFAULT_INLINE_MICROS = 100;
    /** System property that sets {@link #inlineMicros} of the provider found by name. */
    public static final String INLINE_PROPERTY = "switchboard.tcp.inlineMicros";
    /** System property that sets the frame limit of the provider found by name, in bytes. */
    public static final String MAX_FRAME_PROPERTY = "switchboard.tcp.maxFrameBytes";
    public static final long DEFAULT_POLICY_MAX_BYTES = 2 << 20;
    /** System property that sets {@link #policyMaxBytes} of the provider found by name. */
    public static final String POLICY_MAX_PROPERTY = "switchboard.tcp.policyMaxBytes";

    /** The most a server's large-frame budget is by default (see {@link #largeFrameBudgetBytes}). */
    public static final long DEFAULT_MAX_LARGE_FRAME_BUDGET_BYTES = 256L << 20;

    public TcpLimits {
        if (maxFrameBytes <= 0 || maxMetaBytes <= 0 || maxCallsPerConnection <= 0 || inlineMicros < 0
                || maxFrameBytes > Integer.MAX_VALUE - maxMetaBytes - 12 || policyMaxBytes < 0
                || largeFrameBudgetBytes < 0) {
            throw new IllegalArgumentException("tcp limits out of range: frame " + maxFrameBytes + ", meta " + maxMetaBytes
                    + ", calls per connection " + maxCallsPerConnection + ", policy's largest call " + policyMaxBytes);
        }
    }

    /** Limits with the default large-frame budget. */
    public TcpLimits(int maxFrameBytes, int maxMetaBytes, int maxCallsPerConnection, int inlineMicros,
                     long policyMaxBytes) {
        this(maxFrameBytes, maxMetaBytes, maxCallsPerConnection, inlineMicros, policyMaxBytes, 0);
    }

    /** The defaults, with the frame limit of {@link #MAX_FRAME_PROPERTY} when set. */
    public static TcpLimits defaults() {
        return new TcpLimits(Integer.getInteger(MAX_FRAME_PROPERTY, DEFAULT_MAX_FRAME_BYTES), DEFAULT_MAX_META_BYTES,
                DEFAULT_MAX_CALLS_PER_CONNECTION, Integer.getInteger(INLINE_PROPERTY, DEFAULT_INLINE_MICROS),
                Long.getLong(POLICY_MAX_PROPERTY, DEFAULT_POLICY_MAX_BYTES));
    }

    /**
     * The large-frame budget a server uses: the one set, or a quarter of the heap up to 256 MiB;
     * at least one frame of the largest size with its meta.
     */
    long effectiveLargeFrameBudget() {
        long budget = largeFrameBudgetBytes > 0 ? largeFrameBudgetBytes
                : Math.min(DEFAULT_MAX_LARGE_FRAME_BUDGET_BYTES, Runtime.getRuntime().maxMemory() / 4);
        return Math.max(budget, (long) maxFrameBytes + maxMetaBytes + Frame.HEADER_BYTES + (64 << 10));
    }

    /** 0: the default (see {@link #largeFrameBudgetBytes}). */
    public TcpLimits withLargeFrameBudgetBytes(long bytes) {
        return new TcpLimits(maxFrameBytes, maxMetaBytes, maxCallsPerConnection, inlineMicros, policyMaxBytes, bytes);
    }

    public TcpLimits withMaxFrameBytes(int bytes) {
        return new TcpLimits(bytes, maxMetaBytes, maxCallsPerConnection, inlineMicros, policyMaxBytes,
                largeFrameBudgetBytes);
    }

    public TcpLimits withMaxMetaBytes(int bytes) {
        return new TcpLimits(maxFrameBytes, bytes, maxCallsPerConnection, inlineMicros, policyMaxBytes,
                largeFrameBudgetBytes);
    }

    /** 0: every call on a worker thread. */
    public TcpLimits withInlineMicros(int micros) {
        return new TcpLimits(maxFrameBytes, maxMetaBytes, maxCallsPerConnection, micros, policyMaxBytes,
                largeFrameBudgetBytes);
    }

    /** 0: policies pick tcp on their own only for calls without payload. */
    public TcpLimits withPolicyMaxBytes(long bytes) {
        return new TcpLimits(maxFrameBytes, maxMetaBytes, maxCallsPerConnection, inlineMicros, bytes,
                largeFrameBudgetBytes);
    }

    public TcpLimits withMaxCallsPerConnection(int calls) {
        return new TcpLimits(maxFrameBytes, maxMetaBytes, calls, inlineMicros, policyMaxBytes, largeFrameBudgetBytes);
    }
}
