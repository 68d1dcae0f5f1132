package io.switchboard.registry.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.switchboard.client.Switchboard;
import io.switchboard.protocol.Peer;
import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.ServerCallContext;
import io.switchboard.protocol.local.LocalProtocolProvider;
import io.switchboard.server.ComponentContext;
import io.switchboard.server.ComponentServer;
import io.switchboard.server.authz.AuthorizationPolicy;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A call in process names its caller without the caller setting {@link LocalProtocolProvider#CALLER}:
 * a component calling another through the meta-stub from inside an operation, with the settings
 * its host gave it ({@link ComponentContext#named}), is that component to the one it calls; a plain
 * client's {@code Switchboard} is the name it was built with. The back component's policy decides
 * by those names: the front component and the report client are allowed, a client named otherwise
 * and an unnamed one are denied.
 */
class InProcessCallerTest {
    private static final String SECRET = "t";

    @Test
    void aComponentsCallsCarryItsNameAndAClientsItsConfiguredName() throws Exception {
        AuthorizationPolicy frontAndReports = AuthorizationPolicy.parse("""
                {"name": "in-process", "allow_rules": [{"name": "known",
                  "source": {"principals": ["Front", "reports"]}}]}""");
        Recorder back = new Recorder();
        try (RegistryServer registry = RegistryServer.builder().secret(SECRET).start();
             // one interface twice: a server of its own for each (the local protocol exports an interface once)
             ComponentServer backServer = ComponentServer.builder().protocols("local", "soap")
                     .registry(registry.endpoint(), SECRET).authorization(frontAndReports).build();
             ComponentServer frontServer = ComponentServer.builder().protocols("local", "soap")
                     .registry(registry.endpoint(), SECRET).build()) {
            ComponentContext hosted = ComponentContext.of(registry.endpoint(), SECRET, null).named("Front");
            try (Front front = new Front(hosted)) {
                backServer.export("Back", ConformanceComponent.skeleton(back));
                frontServer.export("Front", ConformanceComponent.skeleton(front));

                try (Switchboard reports = client(registry, "reports")) {
                    reports.lookup("Front", ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub).ping();
                    assertEquals(inProcess("reports"), front.seen.get(), "the client is the name it was built with");
                    assertEquals(inProcess("Front"), back.seen.get(), "the component is its own name to the next");

                    reports.lookup("Back", ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub).ping();
                    assertEquals(inProcess("reports"), back.seen.get());
                }
                back.seen.set(null);
                try (Switchboard mallory = client(registry, "mallory")) {
                    ConformanceStub toBack = mallory.lookup("Back", ConformanceComponent.DESCRIPTOR,
                            ConformanceComponent::stub);
                    assertThrows(PermissionDeniedException.class, toBack::ping, "a name the policy does not allow");
                    assertEquals(null, back.seen.get(), "the denied call did not run");
                }
                try (Switchboard unnamed = Switchboard.builder(registry.endpoint()).protocols("local", "soap").connect()) {
                    assertThrows(PermissionDeniedException.class, () -> unnamed.lookup("Back",
                            ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub).ping(),
                            "an unnamed client is " + LocalProtocolProvider.DEFAULT_CALLER);
                }
            }
        }
    }

    private static Switchboard client(RegistryServer registry, String name) {
        return Switchboard.builder(registry.endpoint()).protocols("local", "soap").name(name).connect();
    }

    private static Peer inProcess(String name) {
        return Peer.of(name, Peer.Authentication.IN_PROCESS, null);
    }

    /** Notes who called its {@code ping}. */
    private static class Recorder extends ConformanceImpl {
        final AtomicReference<Peer> seen = new AtomicReference<>();

        @Override
        public void ping() {
            seen.set(ServerCallContext.peer());
        }
    }

    /** A component whose {@code ping} calls {@code Back}'s, through a switchboard with its host's settings. */
    private static final class Front extends Recorder implements AutoCloseable {
        private final Switchboard switchboard;

        Front(ComponentContext context) {
            switchboard = Switchboard.builder(context.registryUrl()).settings(context.clientSettings())
                    .protocols("local", "soap").connect();
        }

        @Override
        public void ping() {
            super.ping();
            ConformanceStub next = switchboard.lookup("Back", ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub);
            assertNotNull(next);
            next.ping();
        }

        @Override
        public void close() {
            switchboard.close();
        }
    }
}
