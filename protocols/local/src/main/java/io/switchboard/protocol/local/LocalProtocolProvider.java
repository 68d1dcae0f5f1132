package io.switchboard.protocol.local;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.ServerSettings;
import java.net.URI;
import java.util.UUID;

/**
 * The in-process protocol (key {@code local}): a call to a component exported in the same JVM
 * runs the component's skeleton on the caller's thread, with no socket, no thread hand-off and no
 * text or byte stream.
 *
 * <p><b>Value semantics by default.</b> Every remote protocol gives the component its own copy of
 * the request and the caller its own copy of the response; the meta-stub switches protocols per
 * call, so the local protocol keeps that meaning: it deep-copies the request, the response and a
 * declared fault's content through the component's protobuf codec, the gRPC wire's (iterative, so a
 * 10^6-node list or a cycle is copied without touching the stack; doubles keep their bits). A
 * component that sorts its input array in place, or keeps the object it was given, behaves the
 * same whichever protocol carried the call. An operation marked
 * {@code <sb:operation name="op" byReference="true"/>} in the interface schema declares that it
 * neither keeps nor changes what it is given and that its results are not changed afterwards:
 * its request and response objects are handed over as they are, shared, which makes the call
 * cost what a method call costs.
 *
 * <p><b>Endpoints</b> look like {@code local://<jvm-id>/<server>/<Component>}. The jvm-id is a
 * random UUID drawn once per JVM (per class loader that loads this class): a client elsewhere
 * that reads the endpoint from the registry sees that it is not its own ({@link #isLocal}), and a
 * transport to it fails at once with {@code TransportException} {@code NOT_DELIVERED}, so the
 * meta-stub falls back to another protocol without the call having run.
 *
 * <p>Other behaviour: undeclared exceptions from the component become
 * {@code RemoteInvocationException} (cause attached), as on the wire; call ids reach the skeleton
 * so a {@code DeduplicatingSkeleton} works; deadlines are not enforced (the component runs on the
 * caller's thread, as a method call would); one-way operations also run on the caller's thread and
 * return when the component returns; server and client settings (ports, limits) do not apply.
 *
 * <pre>{@code
 * ProtocolServer server = Protocols.get("local").newServer(ServerSettings.defaults());
 * Endpoint at = server.export(EchoComponent.skeleton(new EchoService()));   // local://9f1c.../s1/Echo
 * if (LocalProtocolProvider.isLocal(at)) {
 *     Transport t = Protocols.get("local").newClient(ClientSettings.defaults()).connect(EchoComponent.DESCRIPTOR, at);
 *     double[] back = EchoComponent.stub(t).echoDoubles(new double[] {1, 2, 3});
 * }
 * }</pre>
 */
public final class LocalProtocolProvider implements ProtocolProvider {
    public static final String NAME = "local";
    /** URI scheme of local endpoints. */
    public static final String SCHEME = "local";

    /**
     * The name a local call's caller goes by: the component or client that makes the call sets it
     * on its call options, and the called operation sees it as its peer's principal (an
     * {@code IN_PROCESS} peer). Without it: the client's {@link ClientSettings#callerName()} (a
     * component's settings from its host name the component), else {@link #DEFAULT_CALLER}.
     *
     * <pre>{@code
     * billing.withOptions(CallOptions.DEFAULT.with(LocalProtocolProvider.CALLER, "reports")).total(month);
     * }</pre>
     */
    public static final io.switchboard.protocol.CallOptions.Key<String> CALLER =
            io.switchboard.protocol.CallOptions.Key.of("switchboard.local.caller", null);
    /** The principal of a local call whose caller did not name itself ({@link #CALLER}). */
    public static final String DEFAULT_CALLER = "in-process";

    /** Identifies this JVM (strictly: this class loader's copy of the protocol) in endpoint addresses. */
    private static final String JVM_ID = UUID.randomUUID().toString();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public ProtocolServer newServer(ServerSettings settings) {
        return new LocalServer();
    }

    @Override
    public ProtocolClient newClient(ClientSettings settings) {
        return new LocalClient(settings.callerName());
    }

    /** Local endpoints lead nowhere from another JVM. */
    @Override
    public boolean inProcessOnly() {
        return true;
    }

    /** {@link #isExported}: the endpoint is this JVM's and a component is served there now. */
    @Override
    public boolean reachableInProcess(Endpoint endpoint) {
        return isExported(endpoint);
    }

    /** {@code local://JVM-ID/...}: it names a JVM, not a host and a port; only clients in that JVM use it. */
    @Override
    public String checkAddress(String address) {
        if (address.length() > io.switchboard.protocol.spi.Endpoints.MAX_ADDRESS_CHARS) {
            return "is longer than " + io.switchboard.protocol.spi.Endpoints.MAX_ADDRESS_CHARS + " characters";
        }
        try {
            URI uri = new URI(address);
            return SCHEME.equals(uri.getScheme()) && uri.getRawAuthority() != null ? null
                    : "is not a local endpoint (local://JVM-ID/...)";
        } catch (java.net.URISyntaxException e) {
            return "is not a URI";
        }
    }

    /** The id of this JVM as local endpoints carry it. */
    public static String jvmId() {
        return JVM_ID;
    }

    /**
     * Whether {@code endpoint} is a local endpoint of this JVM, so that a call through it runs in
     * process. Cheap (a string comparison); says nothing about whether the component is still
     * exported, which a call finds out ({@code NOT_DELIVERED} when it is not).
     */
    public static boolean isLocal(Endpoint endpoint) {
        if (endpoint == null || !NAME.equals(endpoint.protocol())) {
            return false;
        }
        String jvm = jvmIdOf(endpoint);
        return JVM_ID.equals(jvm);
    }

    /** Whether a component is exported at {@code endpoint} in this JVM right now. */
    public static boolean isExported(Endpoint endpoint) {
        return isLocal(endpoint) && LocalExports.get(endpoint.address()) != null;
    }

    /** The jvm-id part of a local endpoint, or null when the address is not one. */
    static String jvmIdOf(Endpoint endpoint) {
        URI uri = endpoint.uri();
        if (!SCHEME.equals(uri.getScheme())) {
            return null;
        }
        return uri.getAuthority();
    }
}
