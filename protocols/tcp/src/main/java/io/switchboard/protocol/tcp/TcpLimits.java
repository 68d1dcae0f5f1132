package io.switchboard.protocol.tcp;

/**
 * What the tcp protocol accepts beside the settings every protocol shares: the largest message a
 * frame carries (requests and responses; a larger call is refused before anything is sent, and
 * belongs on gRPC) and the largest {@code RpcMeta}.
 *
 * @param maxFrameBytes the largest message (a frame's data) sent or accepted; default 4 MiB
 * @param maxMetaBytes  the largest {@code RpcMeta} accepted; default 64 KiB
 */
public record TcpLimits(int maxFrameBytes, int maxMetaBytes) {
    /** 4 MiB: messages up to this go over tcp; larger ones belong on gRPC, which streams them in parts. */
    public static final int DEFAULT_MAX_FRAME_BYTES = 4 << 20;
    public static final int DEFAULT_MAX_META_BYTES = 64 << 10;
    /** System property that sets the frame limit of the provider found by name, in bytes. */
    public static final String MAX_FRAME_PROPERTY = "switchboard.tcp.maxFrameBytes";

    public TcpLimits {
        if (maxFrameBytes <= 0 || maxMetaBytes <= 0 || maxFrameBytes > Integer.MAX_VALUE - maxMetaBytes - 12) {
            throw new IllegalArgumentException("tcp limits out of range: frame " + maxFrameBytes + ", meta " + maxMetaBytes);
        }
    }

    /** The defaults, with the frame limit of {@link #MAX_FRAME_PROPERTY} when set. */
    public static TcpLimits defaults() {
        return new TcpLimits(Integer.getInteger(MAX_FRAME_PROPERTY, DEFAULT_MAX_FRAME_BYTES), DEFAULT_MAX_META_BYTES);
    }

    public TcpLimits withMaxFrameBytes(int bytes) {
        return new TcpLimits(bytes, maxMetaBytes);
    }
}
