package io.switchboard.protocol.soap;

import io.switchboard.protocol.WireBytes;
import java.io.FilterInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import org.apache.hc.client5.http.classic.ExecChain;
import org.apache.hc.client5.http.classic.ExecChainHandler;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.io.entity.HttpEntityWrapper;

/**
 * Counts the HTTP body bytes of a SOAP call as the HTTP client writes and reads them. Axis2 sends
 * and receives on the calling thread, so {@link SoapTransport} names the call's counter for that
 * thread ({@link #begin}); the response body is counted as it is read, by whoever reads it.
 */
final class WireCounting implements ExecChainHandler {
    static final String NAME = "switchboard-wire-bytes";
    private static final ThreadLocal<WireBytes> CURRENT = new ThreadLocal<>();

    static void begin(WireBytes wire) {
        if (wire != null) {
            CURRENT.set(wire);
        }
    }

    static void end() {
        CURRENT.remove();
    }

    @Override
    public ClassicHttpResponse execute(ClassicHttpRequest request, ExecChain.Scope scope, ExecChain chain)
            throws IOException, HttpException {
        WireBytes wire = CURRENT.get();
        if (wire == null) {
            return chain.proceed(request, scope);
        }
        HttpEntity body = request.getEntity();
        if (body != null) {
            request.setEntity(new HttpEntityWrapper(body) {
                @Override
                public void writeTo(OutputStream out) throws IOException {
                    super.writeTo(new FilterOutputStream(out) {
                        @Override
                        public void write(int b) throws IOException {
                            out.write(b);
                            wire.addSent(1);
                        }

                        @Override
                        public void write(byte[] b, int off, int len) throws IOException {
                            out.write(b, off, len);
                            wire.addSent(len);
                        }
                    });
                }
            });
        }
        ClassicHttpResponse response = chain.proceed(request, scope);
        HttpEntity answer = response.getEntity();
        if (answer != null) {
            wire.addReceived(0);
            response.setEntity(new HttpEntityWrapper(answer) {
                private InputStream counted;

                @Override
                public InputStream getContent() throws IOException {
                    if (counted == null) {
                        counted = new CountingInput(super.getContent(), wire);
                    }
                    return counted;
                }
            });
        }
        return response;
    }

    private static final class CountingInput extends FilterInputStream {
        private final WireBytes wire;

        CountingInput(InputStream in, WireBytes wire) {
            super(in);
            this.wire = wire;
        }

        @Override
        public int read() throws IOException {
            int b = in.read();
            if (b >= 0) {
                wire.addReceived(1);
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = in.read(b, off, len);
            if (n > 0) {
                wire.addReceived(n);
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = in.skip(n);
            wire.addReceived(skipped);
            return skipped;
        }
    }
}
