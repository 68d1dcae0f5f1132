package io.switchboard.protocol.soap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolProvider;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.testing.conformance.Conformance;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.junit.jupiter.api.Test;

/**
 * The shortcut switches are a server's own ({@link LibraryInternals}): a provider made with them off
 * serves on the public paths whatever the system properties say, while the provider found by name
 * keeps the shortcuts beside it in the same JVM. The suites run with them off in
 * {@link SoapConformanceShortcutsOffTest} and {@link SoapIdentityShortcutsOffTest}.
 */
class LibraryInternalsSwitchTest {
    private static final int CALLS = 50;

    @Test
    void aServerWithTheShortcutsOffServesEveryCallOnThePublicPaths() {
        try (Served served = Served.by(new SoapProtocolProvider(LibraryInternals.OFF))) {
            assertEquals(HttpConnectionFactory.class, served.server.httpFactory().getClass(), "Jetty's own connections");
            long onThread = SoapEndPoint.HANDLED_ON_THREAD.sum();
            long posts = SoapServlet.POSTS.sum();
            served.callBackToBack();
            assertEquals(onThread, SoapEndPoint.HANDLED_ON_THREAD.sum(), "every wait went through Jetty's selector");
            assertTrue(SoapServlet.POSTS.sum() - posts >= CALLS, "every call went through Axis2's servlet");
        }
    }

    @Test
    void theProviderFoundByNameKeepsItsShortcutsBesideAServerWithThemOff() {
        try (Served off = Served.by(new SoapProtocolProvider(LibraryInternals.OFF));
                Served byName = Served.by(Protocols.get("soap"))) {
            assertEquals(LibraryInternals.DEFAULTS, new LibraryInternals(true, true, true, true),
                    "this module's tests run with no switch set");
            assertEquals(SoapHttpConnection.Factory.class, byName.server.httpFactory().getClass());
            long posts = SoapServlet.POSTS.sum();
            byName.callBackToBack();
            assertEquals(posts, SoapServlet.POSTS.sum(), "the calls went straight into Axis2's engine");
            off.callBackToBack();
            assertTrue(SoapServlet.POSTS.sum() - posts >= CALLS, "the other server still serves through the servlet");
        }
    }

    @Test
    void onlyFalseTurnsASwitchOff() {
        String property = "switchboard.soap.test." + ProcessHandle.current().pid();
        try {
            assertTrue(LibraryInternals.on(property), "unset: on");
            for (String off : new String[] {"false", "FALSE", " False\n"}) {
                System.setProperty(property, off);
                assertFalse(LibraryInternals.on(property), "'" + off + "'");
            }
            for (String on : new String[] {"true", "", "no", "0", "off"}) {
                System.setProperty(property, on);
                assertTrue(LibraryInternals.on(property), "'" + on + "' is not false");
            }
        } finally {
            System.clearProperty(property);
        }
    }

    /** A server of the provider with the conformance component exported, and a client connected to it. */
    private record Served(SoapServer server, ProtocolClient client, Conformance stub) implements AutoCloseable {
        static Served by(ProtocolProvider provider) {
            ProtocolServer server = provider.newServer(ServerSettings.defaults().withBindAddress("127.0.0.1"));
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            ProtocolClient client = provider.newClient(ClientSettings.defaults());
            return new Served((SoapServer) server, client,
                    ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, at)));
        }

        /** Calls back to back on one connection: where the thread that answered may wait for the next. */
        void callBackToBack() {
            for (int i = 0; i < CALLS; i++) {
                stub.ping();
            }
        }

        @Override
        public void close() {
            client.close();
            server.close();
        }
    }
}
