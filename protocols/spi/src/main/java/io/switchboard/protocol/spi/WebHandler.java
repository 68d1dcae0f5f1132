package io.switchboard.protocol.spi;

import io.switchboard.protocol.Peer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A read-only HTTP resource served beside a protocol, on the listener's own port and with its TLS:
 * the registry's console, a {@code /metrics} scrape. Only {@code GET} and {@code HEAD} reach it;
 * the listener answers any other method with 405. It must not block for long: it runs on one of the
 * listener's request threads.
 *
 * <pre>{@code
 * soap.mount("/metrics", request -> WebHandler.Response.text(200, prometheus.scrape()));
 * }</pre>
 *
 * @see ProtocolServer#mount(String, WebHandler)
 */
@FunctionalInterface
public interface WebHandler {
    /** Answers one request; never null. */
    Response get(Request request);

    /**
     * One request.
     *
     * @param path  the path below the mount point: {@code ""} for the mount point itself, else
     *              starting with {@code /} (e.g. {@code /live.json}); already percent-decoded
     * @param query the raw query string, or null
     * @param peer  who asked, settled as the listener settles a call's caller (client certificate,
     *              verified bearer token, else anonymous at its address); a request whose token does
     *              not verify never reaches the handler
     */
    record Request(String path, String query, Peer peer) {
        public Request {
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(peer, "peer");
        }

        /** A request from a caller not known ({@link Peer#UNKNOWN}). */
        public Request(String path, String query) {
            this(path, query, Peer.UNKNOWN);
        }
    }

    /** One answer: its status, content type (with charset for text) and body. */
    record Response(int status, String contentType, byte[] body) {
        public Response {
            Objects.requireNonNull(contentType, "contentType");
            Objects.requireNonNull(body, "body");
        }

        public static Response text(int status, String contentType, String body) {
            return new Response(status, contentType, body.getBytes(StandardCharsets.UTF_8));
        }

        public static Response notFound() {
            return text(404, "text/plain; charset=utf-8", "not found\n");
        }
    }
}
