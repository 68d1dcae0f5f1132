package io.switchboard.protocol.soap;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import org.apache.hc.client5.http.classic.ExecChain;
import org.apache.hc.client5.http.classic.ExecChainHandler;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.io.entity.HttpEntityWrapper;

/**
 * Sends a small request in one write. Axis2 flushes a chunked request's body as soon as it has
 * written it, and the HTTP client only then closes the body with its last chunk and flushes
 * again: two writes, the second arriving after the server has begun to answer from the first.
 * The body's own flush is dropped here; the HTTP client flushes once the body is closed, and a
 * large body still goes out as the client's buffers fill.
 */
final class DeferredFlush implements ExecChainHandler {
    static final String NAME = "switchboard-deferred-flush";

    @Override
    public ClassicHttpResponse execute(ClassicHttpRequest request, ExecChain.Scope scope, ExecChain chain)
            throws IOException, HttpException {
        HttpEntity body = request.getEntity();
        if (body != null && body.isChunked()) {
            request.setEntity(new HttpEntityWrapper(body) {
                @Override
                public void writeTo(OutputStream out) throws IOException {
                    super.writeTo(new FilterOutputStream(out) {
                        @Override
                        public void write(byte[] b, int off, int len) throws IOException {
                            out.write(b, off, len);
                        }

                        @Override
                        public void flush() {
                            // the HTTP client flushes after the last chunk
                        }

                        @Override
                        public void close() {
                            // the HTTP client closes its own stream
                        }
                    });
                }
            });
        }
        return chain.proceed(request, scope);
    }
}
