package io.switchboard.protocol.soap;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/** Counts bytes and fails once more than {@code limit} bytes have been read. */
final class LimitedInputStream extends FilterInputStream {
    private final long limit;
    private long count;

    LimitedInputStream(InputStream in, long limit) {
        super(in);
        this.limit = limit;
    }

    @Override
    public int read() throws IOException {
        int b = super.read();
        if (b >= 0) {
            add(1);
        }
        return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        int n = super.read(b, off, len);
        if (n > 0) {
            add(n);
        }
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        long s = super.skip(n);
        add(s);
        return s;
    }

    private void add(long n) throws RequestTooLargeException {
        count += n;
        if (count > limit) {
            throw new RequestTooLargeException("Request body exceeds the limit of " + limit + " bytes", limit);
        }
    }
}
