package io.switchboard.protocol.tcp;

import io.switchboard.protocol.CallOptions;

/**
 * The compressions of brpc's {@code RpcMeta.compress_type}, by their wire numbers. A server takes
 * requests in any of them and answers in the request's; a client compresses a call's request when
 * the call asks for it with {@link #OPTION}:
 *
 * <pre>{@code
 * CallOptions options = CallOptions.DEFAULT.with(TcpCompression.OPTION, TcpCompression.GZIP);
 * }</pre>
 *
 * Worth it only for large, repetitive messages on a slow link: on a local network compressing costs
 * more time than it saves. Limits apply to the message as decompressed.
 */
public enum TcpCompression {
    NONE(0),
    /** Snappy's raw format (not framed), as brpc's C++ and Java implementations write it. */
    SNAPPY(1),
    /** The gzip format (RFC 1952). */
    GZIP(2),
    /** The zlib format (RFC 1950). */
    ZLIB(3);

    /** Call option: the compression of the call's request over tcp, and so of its answer; default none. */
    public static final CallOptions.Key<TcpCompression> OPTION = CallOptions.Key.of("switchboard.tcp.compression", NONE);

    private final int wireType;

    TcpCompression(int wireType) {
        this.wireType = wireType;
    }

    /** Its {@code compress_type}. */
    public int wireType() {
        return wireType;
    }

    /** The compression of a {@code compress_type}, or null for one this implementation does not know. */
    public static TcpCompression ofWireType(int type) {
        for (TcpCompression c : values()) {
            if (c.wireType == type) {
                return c;
            }
        }
        return null;
    }
}
