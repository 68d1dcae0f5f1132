package io.switchboard.protocol.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.Unpooled;
import io.switchboard.codec.message.WireFormatException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.InflaterInputStream;
import org.xerial.snappy.Snappy;

/**
 * Compresses and decompresses a frame's message for {@code compress_type}. Decompression is
 * bounded while it runs: gzip and zlib are read into a buffer that grows to at most one byte past
 * the limit, and snappy's declared length is checked before its buffer is allocated, so a small
 * frame that inflates past the limit costs at most the limit, never its inflated size.
 */
final class FrameCompression {
    private static final String FIELD = "RpcMeta.compress_type";

    private FrameCompression() {
    }

    /**
     * The message of {@code data} as decompressed, in a heap buffer of its own; {@code data} is
     * read and left to its owner to free.
     *
     * @throws WireFormatException {@code size-limit} when it inflates past {@code maxBytes}, else
     *                             {@code malformed} when it is not in the compression it claims
     */
    static ByteBuf decompress(TcpCompression compression, ByteBuf data, long maxBytes) {
        int max = (int) Math.min(maxBytes, Integer.MAX_VALUE - 16);
        try {
            return switch (compression) {
                case NONE -> data.retainedSlice();
                case SNAPPY -> unsnappy(data, max);
                case GZIP -> Unpooled.wrappedBuffer(inflate(new GZIPInputStream(new ByteBufInputStream(data)),
                        data.readableBytes(), max));
                case ZLIB -> {
                    try (InputStream in = new InflaterInputStream(new ByteBufInputStream(data))) {
                        yield Unpooled.wrappedBuffer(inflate(in, data.readableBytes(), max));
                    }
                }
            };
        } catch (IOException e) {
            throw WireFormatException.malformed(FIELD, "the message is not valid " + compression + " data: "
                    + e.getMessage());
        }
    }

    /** Reads {@code in} to its end into an array of exactly its size; more than {@code max} bytes is refused. */
    private static byte[] inflate(InputStream in, int compressedBytes, int max) throws IOException {
        try (in) {
            byte[] buf = new byte[(int) Math.min(max + 1L, Math.max(4096L, compressedBytes * 4L))];
            int n = 0;
            while (true) {
                if (n == buf.length) {
                    if (n > max) {
                        throw overLimit(max);
                    }
                    buf = Arrays.copyOf(buf, (int) Math.min(max + 1L, buf.length * 2L));
                }
                int r = in.read(buf, n, buf.length - n);
                if (r < 0) {
                    break;
                }
                n += r;
            }
            if (n > max) {
                throw overLimit(max);
            }
            return n == buf.length ? buf : Arrays.copyOf(buf, n);
        }
    }

    /** Raw snappy: its header declares the inflated length, which is checked before anything is allocated. */
    private static ByteBuf unsnappy(ByteBuf data, int max) throws IOException {
        byte[] in;
        int from;
        int length = data.readableBytes();
        if (data.hasArray()) {
            in = data.array();
            from = data.arrayOffset() + data.readerIndex();
        } else {
            in = new byte[length];
            data.getBytes(data.readerIndex(), in);
            from = 0;
        }
        int declared = Snappy.uncompressedLength(in, from, length);   // the header alone: nothing inflated yet
        if (declared < 0 || declared > max) {
            throw overLimit(max);
        }
        if (!Snappy.isValidCompressedBuffer(in, from, length)) {
            throw new IOException("not raw snappy");
        }
        byte[] out = new byte[declared];
        int n = Snappy.uncompress(in, from, length, out, 0);
        return Unpooled.wrappedBuffer(out, 0, n);
    }

    private static WireFormatException overLimit(int max) {
        return new WireFormatException(WireFormatException.SIZE_LIMIT, FIELD, "the message inflates past the limit of "
                + max + " bytes; decompression stopped there");
    }

    /** {@code length} bytes of {@code data} from {@code from}, compressed. */
    static byte[] compress(TcpCompression compression, byte[] data, int from, int length) {
        try {
            switch (compression) {
                case NONE -> {
                    return Arrays.copyOfRange(data, from, from + length);
                }
                case SNAPPY -> {
                    byte[] out = new byte[Snappy.maxCompressedLength(length)];
                    int n = Snappy.compress(data, from, length, out, 0);
                    return Arrays.copyOf(out, n);
                }
                default -> {
                    ByteArrayOutputStream bytes = new ByteArrayOutputStream(Math.max(64, length / 2));
                    try (OutputStream out = compression == TcpCompression.GZIP ? new GZIPOutputStream(bytes)
                            : new DeflaterOutputStream(bytes)) {
                        out.write(data, from, length);
                    }
                    return bytes.toByteArray();
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot compress with " + compression, e);
        }
    }
}
