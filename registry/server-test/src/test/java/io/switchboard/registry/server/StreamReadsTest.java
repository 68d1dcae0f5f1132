package io.switchboard.registry.server;

import static io.switchboard.registry.server.RegistryWatchTest.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.search.Search;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.server.ServerCallStats;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Lookups and lists go to the registry's stream listener in protobuf when it has one, and over
 * SOAP when it has none, with the same answers.
 */
class StreamReadsTest {
    private static List<String> read(RegistryServer registry) {
        try (RegistryClient client = RegistryClient.connect(registry.endpoint())) {
            client.bind(entry("Read", "r1", 4001, 0));
            client.bind(entry("Read", "r2", 4002, 0));
            client.bind(entry("Other", "o1", 4003, 0));
            List<ComponentEntry> found = client.lookup("Read");
            assertEquals(2, found.size());
            assertEquals(entry("Read", "r1", 4001, 0).interfaceSchema(), found.get(0).interfaceSchema(),
                    "a lookup carries the schema");
            List<ComponentEntry> all = client.list();
            assertEquals(null, all.get(0).interfaceSchema(), "a list does not");
            return all.stream().map(e -> e.name() + "/" + e.instanceId()).sorted().toList();
        }
    }

    private static long soapReads(SimpleMeterRegistry meters) {
        return Search.in(meters).name(ServerCallStats.CALLS).tag("protocol", "soap").timers().stream()
                .filter(t -> List.of("lookup", "listEntries").contains(t.getId().getTag("operation")))
                .mapToLong(io.micrometer.core.instrument.Timer::count).sum();
    }

    @Test
    void readsGoToTheStreamListenerAndOverSoapWithoutOne() {
        SimpleMeterRegistry streamed = new SimpleMeterRegistry();
        SimpleMeterRegistry soapOnly = new SimpleMeterRegistry();
        List<String> viaStream;
        List<String> viaSoap;
        try (RegistryServer registry = RegistryServer.builder().meterRegistry(streamed).start()) {
            viaStream = read(registry);
        }
        try (RegistryServer registry = RegistryServer.builder().meterRegistry(soapOnly).watchStream(false).start()) {
            viaSoap = read(registry);
        }
        assertEquals(List.of("Other/o1", "Read/r1", "Read/r2"), viaStream);
        assertEquals(viaStream, viaSoap);
        assertEquals(0, soapReads(streamed), "no read went over SOAP when the registry has a stream");
        assertEquals(2, soapReads(soapOnly), "without a stream, the lookup and the list went over SOAP");
    }

    /** A memory store that answers lookups at once or never, and notes the threads its lookups ran on. */
    private static final class ThreadNotingStore implements io.switchboard.registry.store.RegistryStore {
        private final io.switchboard.registry.store.InMemoryRegistryStore entries =
                new io.switchboard.registry.store.InMemoryRegistryStore();
        private final boolean withoutWaiting;
        final java.util.Set<String> lookupThreads = java.util.concurrent.ConcurrentHashMap.newKeySet();

        ThreadNotingStore(boolean withoutWaiting) {
            this.withoutWaiting = withoutWaiting;
        }

        @Override
        public List<ComponentEntry> lookupNow(String name) {
            return withoutWaiting ? lookup(name) : null;
        }

        @Override
        public void bind(ComponentEntry entry) throws io.switchboard.registry.store.RegistryStore.AlreadyBoundException {
            entries.bind(entry);
        }

        @Override
        public void rebind(ComponentEntry entry) {
            entries.rebind(entry);
        }

        @Override
        public int unbind(String name, String instanceId) {
            return entries.unbind(name, instanceId);
        }

        @Override
        public List<ComponentEntry> lookup(String name) {
            lookupThreads.add(Thread.currentThread().getName().replaceAll("[-0-9]+$", ""));
            return entries.lookup(name);
        }

        @Override
        public List<ComponentEntry> list() {
            return entries.list();
        }

        @Override
        public void close() {
        }
    }

    @Test
    void aLeanLookupIsAnsweredOnTheEventLoopOnlyWhenTheStoreCanAnswerAtOnce() {
        for (boolean withoutWaiting : List.of(true, false)) {
            ThreadNotingStore store = new ThreadNotingStore(withoutWaiting);
            try (RegistryServer registry = RegistryServer.builder().store(store).start();
                 RegistryClient client = RegistryClient.connect(registry.endpoint())) {
                client.bind(entry("Read", "r1", 4001, 0));
                for (int i = 0; i < 3; i++) {   // the first answer carries the schema, the next ones name it
                    assertEquals(List.of("r1"), client.lookup("Read").stream().map(ComponentEntry::instanceId).toList());
                }
                assertEquals(java.util.Set.of(withoutWaiting ? "registry-watch-io" : "registry-watch-calls"),
                        store.lookupThreads, "lookups ran on " + store.lookupThreads);
            }
        }
    }
}
