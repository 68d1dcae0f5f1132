package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.hc.client5.http.classic.ExecChain;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.io.entity.AbstractHttpEntity;
import org.apache.hc.core5.http.message.BasicClassicHttpRequest;
import org.apache.hc.core5.http.message.BasicClassicHttpResponse;
import org.junit.jupiter.api.Test;

class DeferredFlushTest {

    /** A body written as Axis2 writes one: in pieces, then flushed. */
    private static final class FlushingBody extends AbstractHttpEntity {
        FlushingBody(boolean chunked) {
            super(ContentType.TEXT_XML, null, chunked);
        }

        @Override
        public void writeTo(OutputStream out) throws IOException {
            out.write("<a>".getBytes(StandardCharsets.US_ASCII));
            out.write('x');
            out.write("</a>".getBytes(StandardCharsets.US_ASCII));
            out.flush();
        }

        @Override
        public java.io.InputStream getContent() {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean isStreaming() {
            return true;
        }

        @Override
        public long getContentLength() {
            return -1;
        }

        @Override
        public void close() {
        }
    }

    /** The HTTP client's side: writes the entity into a stream that records each flush by the bytes before it. */
    private static List<String> send(HttpEntity body) throws Exception {
        ClassicHttpRequest request = new BasicClassicHttpRequest("POST", "/axis2/services/X");
        request.setEntity(body);
        List<String> flushes = new ArrayList<>();
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        ExecChain chain = (req, scope) -> {
            req.getEntity().writeTo(new OutputStream() {
                @Override
                public void write(int b) {
                    wire.write(b);
                }

                @Override
                public void flush() {
                    flushes.add(wire.toString(StandardCharsets.US_ASCII));
                }
            });
            flushes.add("end: " + wire.toString(StandardCharsets.US_ASCII));
            return new BasicClassicHttpResponse(200);
        };
        ClassicHttpResponse response = new DeferredFlush().execute(request, null, chain);
        assertEquals(200, response.getCode());
        return flushes;
    }

    @Test
    void aChunkedBodyReachesTheClientWholeWithoutItsOwnFlush() throws Exception {
        assertEquals(List.of("end: <a>x</a>"), send(new FlushingBody(true)));
    }

    @Test
    void aBodyOfKnownLengthIsLeftAsItIs() throws Exception {
        FlushingBody body = new FlushingBody(false);
        assertEquals(List.of("<a>x</a>", "end: <a>x</a>"), send(body));
    }

    @Test
    void aRequestWithoutBodyPassesThrough() throws Exception {
        ClassicHttpRequest request = new BasicClassicHttpRequest("GET", "/axis2/services/X?wsdl");
        ClassicHttpResponse answer = new BasicClassicHttpResponse(200);
        assertSame(answer, new DeferredFlush().execute(request, null, (req, scope) -> answer));
    }
}
