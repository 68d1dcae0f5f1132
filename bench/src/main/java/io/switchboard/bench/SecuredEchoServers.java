package io.switchboard.bench;

import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoService;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.server.ComponentServer;
import io.switchboard.server.authz.AuthorizationPolicy;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The server side of the security cost rows, in {@link BenchServer}: the echo component on two
 * more component servers, both requiring mutual TLS, the second also asking
 * {@link #POLICY_RESOURCE} (20 rules, the last allow rule the one that lets the bench's client
 * in) about every call. Their tcp endpoints are given to the client on the ready line, not bound
 * in the registry, so the rows reach exactly these servers.
 *
 * <pre>{@code
 * try (SecuredEchoServers secured = SecuredEchoServers.start(TlsSettings.of(serverKeys, trust, password))) {
 *     out.println("READY ... " + secured.readyFields());   // tcp-mtls=tcp:tcps://127.0.0.1:PORT/Echo,soap:https://... tcp-mtls-authz=...
 * }
 * }</pre>
 */
final class SecuredEchoServers implements AutoCloseable {
    /** The policy of the {@link MutualTlsPeer#AUTHZ} row, in gRPC's authorization policy form. */
    static final String POLICY_RESOURCE = "authz-20-rules.json";

    private final List<ComponentServer> servers = new ArrayList<>();
    private final List<String> fields = new ArrayList<>();

    private SecuredEchoServers() {
    }

    /** Starts both servers with {@code serverTls} (a key and a trust store: client certificates required). */
    static SecuredEchoServers start(TlsSettings serverTls) {
        if (!serverTls.requiresTrustedPeer()) {
            throw new IllegalArgumentException("the security rows measure mutual TLS: the server needs a trust store");
        }
        SecuredEchoServers secured = new SecuredEchoServers();
        try {
            ServerSettings settings = ServerSettings.defaults().withMaxMessageBytes(BenchServer.MAX_MESSAGE_BYTES)
                    .withTls(serverTls);
            secured.serve(MutualTlsPeer.PLAIN, ComponentServer.builder().settings(settings));
            secured.serve(MutualTlsPeer.AUTHZ, ComponentServer.builder().settings(settings).authorization(policy()));
            return secured;
        } catch (RuntimeException e) {
            secured.close();
            throw e;
        }
    }

    /** The 20-rule policy of the {@link MutualTlsPeer#AUTHZ} row. */
    static AuthorizationPolicy policy() {
        try (InputStream in = SecuredEchoServers.class.getResourceAsStream(POLICY_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("no " + POLICY_RESOURCE + " on the class path");
            }
            return AuthorizationPolicy.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void serve(String row, ComponentServer.Builder builder) {
        // SOAP too: every component server speaks the failsafe; the row is pinned to tcp
        ComponentServer server = builder.protocols("soap", "tcp").lease(java.time.Duration.ZERO).build();
        servers.add(server);
        ComponentEntry entry = server.export(EchoComponent.skeleton(new EchoService()));
        // the same de-duplication as the tcp row's server, so the rows differ by TLS and policy alone
        if (!entry.has(ComponentEntry.CALL_IDS)) {
            throw new IllegalStateException(row + ": the server does not recognise call ids");
        }
        fields.add(row + "=" + MutualTlsPeer.format(entry.endpoints()));
    }

    /** {@code tcp-mtls=ENDPOINTS tcp-mtls-authz=ENDPOINTS} ({@link MutualTlsPeer#format}), for the ready line. */
    String readyFields() {
        return String.join(" ", fields);
    }

    @Override
    public void close() {
        servers.forEach(ComponentServer::close);
    }
}
