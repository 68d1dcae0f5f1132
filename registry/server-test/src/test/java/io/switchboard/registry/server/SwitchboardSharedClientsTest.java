package io.switchboard.registry.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.client.Switchboard;
import io.switchboard.metastub.FixedPolicy;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.wire.RegistryComponent;
import io.switchboard.registry.store.InMemoryRegistryStore;
import io.switchboard.server.ComponentServer;
import io.switchboard.testing.FaultProxy;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.ConformanceStub;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every meta-stub one {@code Switchboard} builds shares its protocol clients: two components served
 * by one server (the conformance component and a registry service, under another name) are reached
 * over one gRPC connection; closing one channel leaves the other working; closing the switchboard
 * closes both.
 */
class SwitchboardSharedClientsTest {
    @Test
    void channelsToTwoComponentsOnOneServerShareTheClientsUntilTheSwitchboardCloses() throws Exception {
        try (RegistryServer registry = RegistryServer.builder().start();
             RegistryClient writer = RegistryClient.connect(registry.endpoint());
             ComponentServer server = ComponentServer.builder().protocols("grpc", "soap").build()) {
            ComponentEntry conformance = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            ComponentEntry directory = server.export("Directory",
                    RegistryComponent.skeleton(new RegistryService(new InMemoryRegistryStore(), null, Clock.systemUTC())));
            Endpoint grpc = conformance.endpoint("grpc").orElseThrow();
            assertEquals(grpc.uri().getPort(), directory.endpoint("grpc").orElseThrow().uri().getPort(), "one server");
            try (FaultProxy proxy = FaultProxy.to(grpc)) {   // counts the connections to the gRPC server
                writer.bind(throughProxy(conformance, proxy));
                writer.bind(throughProxy(directory, proxy));
                try (Switchboard sb = Switchboard.builder(registry.endpoint()).protocols("grpc", "soap")
                        .policy(new FixedPolicy("grpc")).follow(false).connect()) {
                    MetaStub toConformance = sb.channel("Conformance", ConformanceComponent.DESCRIPTOR);
                    MetaStub toDirectory = sb.channel("Directory", RegistryComponent.DESCRIPTOR);
                    ConformanceStub conformanceStub = ConformanceComponent.stub(toConformance);
                    conformanceStub.ping();
                    assertTrue(RegistryComponent.stub(toDirectory).lookup("Nothing").isEmpty());

                    assertSame(toConformance.clients(), toDirectory.clients());
                    assertSame(toConformance.clients().get("grpc"), toDirectory.clients().get("grpc"));
                    assertEquals(1, proxy.connections(), "one gRPC channel to the server's address for both");

                    toDirectory.close();
                    assertEquals(4, conformanceStub.increment(4), "closing one channel leaves the other working");

                    sb.close();
                    assertThrows(IllegalStateException.class, conformanceStub::ping, "closed with the switchboard");
                    assertThrows(IllegalStateException.class, () -> toConformance.clients().get("soap"));
                }
            }
        }
    }

    private static ComponentEntry throughProxy(ComponentEntry e, FaultProxy proxy) {
        List<Endpoint> endpoints = e.endpoints().stream()
                .map(p -> p.protocol().equals("grpc") ? proxy.route(p) : p).toList();
        return new ComponentEntry(e.name(), e.instanceId(), endpoints, e.interfaceSchema(), e.interfaceProto(),
                e.wsdlUrl(), null, e.features(), 0);
    }
}
