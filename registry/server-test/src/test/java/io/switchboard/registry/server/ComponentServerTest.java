package io.switchboard.registry.server;

import io.switchboard.client.Switchboard;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.server.ComponentServer;
import io.switchboard.idl.runtime.ServiceDescriptor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.metastub.CallRecord;
import io.switchboard.testing.conformance.Conformance;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import io.switchboard.testing.conformance.Values;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** A component exported through a ComponentServer is found through the registry and called. */
class ComponentServerTest {
    @Test
    void entryCarriesBothEndpointsTheWsdlAddressAndTheProto() {
        try (RegistryServer registry = RegistryServer.builder().start();
             ComponentServer server = ComponentServer.builder().protocols("grpc", "soap").registry(registry.endpoint(), null).build();
             RegistryClient reader = RegistryClient.connect(registry.endpoint())) {
            server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            ComponentEntry e = reader.lookup("Conformance").get(0);
            assertEquals(List.of("grpc", "soap"), e.endpoints().stream().map(io.switchboard.protocol.Endpoint::protocol)
                    .toList());
            assertEquals(ConformanceComponent.DESCRIPTOR.document(ServiceDescriptor.PROTO), e.interfaceProto());
            assertEquals(ConformanceComponent.DESCRIPTOR.schema(), e.interfaceSchema());
            assertTrue(e.has(ComponentEntry.CALL_IDS));
            assertTrue(e.wsdlUrl().endsWith("?wsdl"));
        }
    }

    @Test
    void exportBindLookupCallAndUnbindOnClose() {
        try (RegistryServer registry = RegistryServer.builder().secret("s").start()) {
            ConformanceImpl impl = new ConformanceImpl();
            List<CallRecord> calls = new CopyOnWriteArrayList<>();
            try (ComponentServer server = ComponentServer.builder().protocols("soap")
                    .registry(registry.endpoint(), "s").build()) {
                ComponentEntry entry = server.export(ConformanceComponent.skeleton(impl));
                assertEquals("Conformance", entry.name());
                assertTrue(entry.wsdlUrl().endsWith("/axis2/services/Conformance?wsdl"), entry.wsdlUrl());

                try (Switchboard sb = Switchboard.builder(registry.endpoint()).listener(calls::add).connect()) {
                    Conformance c = sb.lookup(ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub);
                    Values.assertSameDoubles(Values.EDGE_DOUBLES, c.echoDoubles(Values.EDGE_DOUBLES));
                    assertEquals(7, c.increment(7));
                }
                assertEquals(1, impl.increments.get());
                assertEquals(List.of("echoDoubles", "increment"), calls.stream().map(CallRecord::operation).toList());
                assertTrue(calls.stream().allMatch(r -> r.protocol().equals("soap") && r.succeeded()));
            }
            assertTrue(RegistryClient.connect(registry.endpoint()).lookup("Conformance").isEmpty(),
                    "closing the server unbinds it");
            try (Switchboard sb = Switchboard.connect(registry.endpoint())) {
                assertThrows(Switchboard.NotBoundException.class,
                        () -> sb.lookup(ConformanceComponent.DESCRIPTOR, ConformanceComponent::stub));
            }
        }
    }
}
