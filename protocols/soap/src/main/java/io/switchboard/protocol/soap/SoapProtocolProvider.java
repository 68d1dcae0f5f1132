package io.switchboard.protocol.soap;

import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import java.util.Map;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.ServerSettings;

/**
 * SOAP 1.1, document/literal wrapped, over HTTP, on an embedded Apache Axis2: the protocol every
 * Switchboard party speaks, used for control and small messages and as the failsafe.
 *
 * <pre>{@code
 * ProtocolServer server = Protocols.get("soap").newServer(ServerSettings.defaults().withPort(8081));
 * Endpoint endpoint = server.export(EchoComponent.skeleton(new EchoService()));
 * // endpoint.address() is http://127.0.0.1:8081/axis2/services/Echo; add ?wsdl for the WSDL
 * }</pre>
 *
 * With {@link ServerSettings#tls} the endpoint is {@code https://}, and with a trust store in it
 * callers need a trusted client certificate; the client presents its {@link ClientSettings#tls} key.
 */
public final class SoapProtocolProvider implements ProtocolProvider {
    public static final String NAME = "soap";

    private final LibraryInternals shortcuts;

    /** The provider {@code Protocols.get("soap")} finds: its servers take the shortcuts the system properties leave on. */
    public SoapProtocolProvider() {
        this(LibraryInternals.DEFAULTS);
    }

    /** A provider whose servers take these shortcuts, whatever the system properties say. */
    SoapProtocolProvider(LibraryInternals shortcuts) {
        this.shortcuts = shortcuts;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public ProtocolServer newServer(ServerSettings settings) {
        return new SoapServer(settings, shortcuts);
    }

    @Override
    public ProtocolClient newClient(ClientSettings settings) {
        return new SoapClient(settings);
    }

    @Override
    public boolean failsafe() {
        return true;
    }

    /** An {@code https://} endpoint. */
    @Override
    public boolean protectedEndpoint(Endpoint endpoint) {
        return "https".equalsIgnoreCase(endpoint.uri().getScheme());
    }

    /** The address of the component's WSDL, served by Axis2 with the endpoint's real address in it. */
    @Override
    public Map<String, String> published(ServiceDescriptor descriptor, Endpoint endpoint) {
        return Map.of(ServiceDescriptor.WSDL, endpoint.address() + "?wsdl");
    }
}
