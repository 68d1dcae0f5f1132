package io.switchboard.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.registry.wire.LookupResponse;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A registry whose stream listener predates {@code lookupLean} (it answers {@code lookup} only):
 * the client reads in full there, with the same entries, and stops asking for the lean form.
 */
class LeanLookupFallbackTest {
    @Test
    void aListenerWithoutTheLeanFormIsReadInFull() throws Exception {
        String schema = ConformanceComponent.DESCRIPTOR.schema();
        AtomicInteger plainLookups = new AtomicInteger();
        try (RegistryServer registry = RegistryServer.builder().watchStream(false).start()) {
            // the older listener: lookup only, answered from the same registry
            ServerServiceDefinition older = ServerServiceDefinition.builder(WatchStreamMethod.SERVICE)
                    .addMethod(WatchStreamMethod.LOOKUP, ServerCalls.asyncUnaryCall((request, answer) -> {
                        plainLookups.incrementAndGet();
                        LookupResponse r = new LookupResponse();
                        r.setEntries(registry.service().lookup(request.getName()));
                        answer.onNext(r);
                        answer.onCompleted();
                    })).build();
            AtomicInteger unknown = new AtomicInteger();
            Server listener = NettyServerBuilder.forPort(0).addService(older)
                    .fallbackHandlerRegistry(new io.grpc.HandlerRegistry() {
                        @Override
                        public io.grpc.ServerMethodDefinition<?, ?> lookupMethod(String method, String authority) {
                            unknown.incrementAndGet();   // a method the older listener does not have
                            return null;
                        }
                    }).build().start();
            String at = "grpc://127.0.0.1:" + listener.getPort();
            StreamAddresses.Key key = new StreamAddresses.Key(List.of(registry.endpoint()), null);
            try {
                // where the client's JVM was told the stream is, as an older registry's watch answer would say
                StreamAddresses.get(key, start -> new StreamAddresses.Answer(Optional.of(at), 0));
                try (RegistryClient client = RegistryClient.connect(registry.endpoint())) {
                    client.bind(new ComponentEntry("Old", "o1", List.of(new Endpoint("soap",
                            "http://127.0.0.1:4100/axis2/services/Old")), schema, null, null, null, List.of(), 0));
                    for (int i = 1; i <= 3; i++) {
                        List<ComponentEntry> found = client.lookup("Old");
                        assertEquals(1, found.size());
                        assertEquals(schema, found.get(0).interfaceSchema(), "read in full");
                        assertEquals(i, plainLookups.get(), "every lookup read on the older listener");
                    }
                    assertEquals(1, unknown.get(), "the lean form asked for once, then no more");
                }
            } finally {
                listener.shutdownNow();
                StreamAddresses.failed(key, at);
            }
        }
    }
}
