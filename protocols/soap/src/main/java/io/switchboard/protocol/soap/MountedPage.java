package io.switchboard.protocol.soap;

import io.switchboard.protocol.spi.WebHandler;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ContextHandler;
import org.eclipse.jetty.util.Callback;

/**
 * A {@link WebHandler} as a Jetty handler at its own context path beside Axis2's {@code /axis2}:
 * GET and HEAD only, answers that are never cached, sniffed or framed, and pages that may load
 * scripts and styles from this server alone.
 */
final class MountedPage extends Handler.Abstract {
    private static final HttpField NO_SNIFF = new HttpField("X-Content-Type-Options", "nosniff");
    private static final HttpField NO_STORE = new HttpField(HttpHeader.CACHE_CONTROL, "no-store");
    private static final HttpField POLICY = new HttpField("Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
                    + "frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    private static final HttpField NO_REFERRER = new HttpField("Referrer-Policy", "no-referrer");

    private final WebHandler handler;
    /** Checks a request's bearer token as a call's would be; null: tokens are not verified. */
    private final io.switchboard.protocol.TokenVerifier tokens;

    private MountedPage(WebHandler handler, io.switchboard.protocol.TokenVerifier tokens) {
        this.handler = handler;
        this.tokens = tokens;
    }

    /**
     * The handler as a context at {@code path}, which also answers the bare path (no redirect to
     * {@code path/}); its requests' peers settled with {@code tokens} (null: tokens are not verified).
     */
    static ContextHandler at(String path, WebHandler handler, io.switchboard.protocol.TokenVerifier tokens) {
        ContextHandler context = new ContextHandler(new MountedPage(handler, tokens), path);
        context.setAllowNullPathInContext(true);
        return context;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        boolean head = HttpMethod.HEAD.is(request.getMethod());
        if (!head && !HttpMethod.GET.is(request.getMethod())) {
            response.setStatus(405);
            response.getHeaders().put(HttpHeader.ALLOW, "GET, HEAD");
            callback.succeeded();
            return true;
        }
        String path = Request.getPathInContext(request);
        io.switchboard.protocol.spi.CallerIdentity caller = SoapCallers.of(request, tokens);
        // a token that does not verify is refused, never read as the certificate's or as anonymous
        WebHandler.Response answer = caller.refusal() != null
                ? WebHandler.Response.text(401, "text/plain; charset=utf-8", "the bearer token did not verify\n")
                : handler.get(new WebHandler.Request(path == null ? "" : path, request.getHttpURI().getQuery(),
                        caller.peer()));
        response.setStatus(answer.status());
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, answer.contentType());
        response.getHeaders().add(NO_SNIFF);
        response.getHeaders().add(NO_STORE);
        response.getHeaders().add(POLICY);
        response.getHeaders().add(NO_REFERRER);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, answer.body().length);
        response.write(true, head ? ByteBuffer.allocate(0) : ByteBuffer.wrap(answer.body()), callback);
        return true;
    }
}
