package io.switchboard.bench;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.concurrent.atomic.AtomicLong;

/** Counts the bytes written through it into a shared counter: how the peers measure wire bytes. */
final class CountingOutputStream extends FilterOutputStream {
    private final AtomicLong count;

    CountingOutputStream(OutputStream out, AtomicLong count) {
        super(out);
        this.count = count;
    }

    @Override
    public void write(int b) throws IOException {
        out.write(b);
        count.incrementAndGet();
    }

    // FilterOutputStream would write byte by byte; pass blocks through.
    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        out.write(b, off, len);
        count.addAndGet(len);
    }
}
