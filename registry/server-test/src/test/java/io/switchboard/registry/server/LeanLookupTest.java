package io.switchboard.registry.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.SchemaDigests;
import io.switchboard.registry.WatchStreamMethod;
import io.switchboard.registry.store.InMemoryRegistryStore;
import io.switchboard.registry.wire.Entry;
import io.switchboard.registry.wire.LookupLean;
import io.switchboard.registry.wire.LookupLeanFaultException;
import io.switchboard.registry.wire.LookupLeanResponse;
import io.switchboard.registry.wire.SchemaText;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.net.URI;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code lookupLean}: each interface document once per answer, named by digest, and none the
 * caller lists as known; the plain {@code lookup} answers as before; requests out of bounds are
 * refused with {@code invalid}.
 */
class LeanLookupTest {
    private static final String SCHEMA = ConformanceComponent.DESCRIPTOR.schema();
    private static final String OTHER_SCHEMA = SCHEMA.replace("</xs:schema>", "<!-- v2 --></xs:schema>");
    private static final String PROTO = "syntax = \"proto3\"; // lean lookup test";

    private static ComponentEntry entry(String name, String instance, String schema) {
        return new ComponentEntry(name, instance, List.of(new Endpoint("soap", "http://127.0.0.1:4" + instance.length()
                + "00/axis2/services/" + name)), schema, PROTO, null, null, List.of(), 0);
    }

    private static LookupLeanResponse lean(ManagedChannel channel, String name, List<String> known) {
        LookupLean request = new LookupLean();
        request.setName(name);
        request.setKnownSchemas(known == null ? null : new ArrayList<>(known));
        return ClientCalls.blockingUnaryCall(channel, WatchStreamMethod.LOOKUP_LEAN, CallOptions.DEFAULT, request);
    }

    private static ManagedChannel channel(RegistryServer registry) {
        URI at = URI.create(registry.watchStream().address());
        return NettyChannelBuilder.forAddress(at.getHost(), at.getPort()).usePlaintext().build();
    }

    @Test
    void eachDocumentIsSentOnceAndNotAtAllWhenKnown() {
        try (RegistryServer registry = RegistryServer.builder().start();
             RegistryClient client = RegistryClient.connect(registry.endpoint())) {
            client.bind(entry("Lean", "a", SCHEMA));
            client.bind(entry("Lean", "b", SCHEMA));
            client.bind(entry("Lean", "c", OTHER_SCHEMA));
            ManagedChannel channel = channel(registry);
            try {
                LookupLeanResponse first = lean(channel, "Lean", null);
                assertEquals(3, first.getEntries().size());
                for (Entry e : first.getEntries()) {
                    assertNull(e.getInterfaceSchema(), "no entry carries the text");
                    assertNull(e.getInterfaceProto());
                }
                assertEquals(SchemaDigests.of(SCHEMA), first.getEntries().get(0).getInterfaceSchemaDigest());
                assertEquals(SchemaDigests.of(SCHEMA), first.getEntries().get(1).getInterfaceSchemaDigest());
                assertEquals(SchemaDigests.of(OTHER_SCHEMA), first.getEntries().get(2).getInterfaceSchemaDigest());
                assertEquals(SchemaDigests.of(PROTO), first.getEntries().get(2).getInterfaceProtoDigest());
                // two schemas and one .proto, each once, whose text matches its digest
                List<String> digests = first.getSchemas().stream().map(SchemaText::getDigest).sorted().toList();
                assertEquals(List.of(SchemaDigests.of(SCHEMA), SchemaDigests.of(OTHER_SCHEMA), SchemaDigests.of(PROTO))
                        .stream().sorted().toList(), digests);
                first.getSchemas().forEach(s -> assertTrue(SchemaDigests.matches(s.getDigest(), s.getText())));

                LookupLeanResponse again = lean(channel, "Lean", List.of(SchemaDigests.of(SCHEMA), SchemaDigests.of(PROTO)));
                assertEquals(List.of(SchemaDigests.of(OTHER_SCHEMA)),
                        again.getSchemas().stream().map(SchemaText::getDigest).toList(), "only the one not known");
                assertEquals(3, again.getEntries().size());
            } finally {
                channel.shutdownNow();
            }

            // the client's lookups, the first and one that lists what it holds, give the whole entries
            for (int i = 0; i < 2; i++) {
                List<ComponentEntry> found = client.lookup("Lean");
                assertEquals(List.of(SCHEMA, SCHEMA, OTHER_SCHEMA), found.stream().map(ComponentEntry::interfaceSchema).toList());
                assertEquals(PROTO, found.get(1).interfaceProto());
                assertEquals(List.of("a", "b", "c"), found.stream().map(ComponentEntry::instanceId).toList());
            }
        }
    }

    @Test
    void thePlainLookupStillCarriesEveryDocumentAndNoDigest() {
        RegistryService registry = new RegistryService(new InMemoryRegistryStore(), null, Clock.systemUTC());
        registry.store().rebind(entry("Plain", "a", SCHEMA));
        List<Entry> found = registry.lookup("Plain");
        assertEquals(SCHEMA, found.get(0).getInterfaceSchema());
        assertEquals(PROTO, found.get(0).getInterfaceProto());
        assertNull(found.get(0).getInterfaceSchemaDigest(), "an older client's answer is as it was");
        assertNull(found.get(0).getInterfaceProtoDigest());
    }

    @Test
    void tooManyOrMalformedKnownDigestsAreRefused() throws Exception {
        RegistryService registry = new RegistryService(new InMemoryRegistryStore(), null, Clock.systemUTC());
        registry.store().rebind(entry("Bounded", "a", SCHEMA));
        List<String> atLimit = new ArrayList<>(Collections.nCopies(SchemaDigests.MAX_KNOWN, SchemaDigests.of(SCHEMA)));
        assertTrue(registry.lookupLean("Bounded", atLimit).getSchemas().stream()
                .noneMatch(s -> s.getDigest().equals(SchemaDigests.of(SCHEMA))), "at the limit: answered");
        List<String> over = new ArrayList<>(atLimit);
        over.add(SchemaDigests.of(PROTO));
        LookupLeanFaultException tooMany = assertThrows(LookupLeanFaultException.class,
                () -> registry.lookupLean("Bounded", over));
        assertEquals("invalid", tooMany.getFaultInfo().getCode());
        assertTrue(tooMany.getFaultInfo().getReason().contains("at most " + SchemaDigests.MAX_KNOWN),
                tooMany.getFaultInfo().getReason());
        for (String bad : List.of("", "xyz", SchemaDigests.of(SCHEMA).toUpperCase(), SchemaDigests.of(SCHEMA) + "0")) {
            LookupLeanFaultException malformed = assertThrows(LookupLeanFaultException.class,
                    () -> registry.lookupLean("Bounded", List.of(bad)), bad);
            assertEquals("invalid", malformed.getFaultInfo().getCode());
        }
    }

    @Test
    void theListenerRefusesAnOutOfBoundsRequestWithTheFaultsReason() {
        try (RegistryServer registry = RegistryServer.builder().start()) {
            ManagedChannel channel = channel(registry);
            try {
                List<String> over = Collections.nCopies(SchemaDigests.MAX_KNOWN + 1, SchemaDigests.of(SCHEMA));
                StatusRuntimeException refused = assertThrows(StatusRuntimeException.class,
                        () -> lean(channel, "Any", over));
                assertEquals(Status.Code.INVALID_ARGUMENT, refused.getStatus().getCode());
                assertNotNull(refused.getStatus().getDescription());
                assertTrue(refused.getStatus().getDescription().startsWith("invalid: "), refused.getStatus().getDescription());
                assertEquals(0, lean(channel, "Nothing", null).getEntries().size(), "the listener still answers");
            } finally {
                channel.shutdownNow();
            }
        }
    }

    /** What {@code lookupLean} answers, encoded whole: what the listener's answer must be, byte for byte. */
    private static byte[] whole(RegistryReads reads, String name, List<String> known) throws LookupLeanFaultException {
        return WatchStreamMethod.encodeLookupLean(reads.lookupLean(name, known));
    }

    @Test
    void theListenersAnswerIsTheWholeAnswerByteForByteAndFollowsEveryChange() throws Exception {
        InMemoryRegistryStore store = new InMemoryRegistryStore();
        RegistryReads reads = new RegistryReads(store);
        store.rebind(entry("Kept", "a", SCHEMA));
        // no .proto, no WSDL, a feature and a bind time: fields absent, null and set alike
        store.rebind(new ComponentEntry("Kept", "b", List.of(new Endpoint("tcp", "tcp://127.0.0.1:4100"),
                new Endpoint("soap", "http://127.0.0.1:4101/axis2/services/Kept")), OTHER_SCHEMA, null,
                "http://127.0.0.1:4101/axis2/services/Kept?wsdl", java.time.Instant.parse("2026-11-29T10:00:00Z"),
                List.of(ComponentEntry.CALL_IDS), 30));
        store.rebind(entry("Kept", "c", SCHEMA));
        List<List<String>> knowns = new ArrayList<>();
        knowns.add(null);
        knowns.add(List.of());
        knowns.add(List.of(SchemaDigests.of(SCHEMA)));
        knowns.add(List.of(SchemaDigests.of(PROTO), SchemaDigests.of(OTHER_SCHEMA)));
        knowns.add(List.of(SchemaDigests.of(SCHEMA), SchemaDigests.of(OTHER_SCHEMA), SchemaDigests.of(PROTO)));
        for (int round = 0; round < 2; round++) {   // made, then kept
            for (List<String> known : knowns) {
                assertArrayEquals(whole(reads, "Kept", known), reads.lookupLeanWire("Kept", known), "known " + known);
            }
        }
        byte[] allKnown = reads.lookupLeanWire("Kept", knowns.get(4));
        assertEquals(3, WatchStreamMethod.decodeLookupLean(allKnown).getEntries().size());
        assertArrayEquals(whole(reads, "Nobody", null), reads.lookupLeanWire("Nobody", null), "a name not bound");

        store.rebind(entry("Kept", "b", SCHEMA));   // an instance replaced
        byte[] afterRebind = reads.lookupLeanWire("Kept", knowns.get(4));
        assertFalse(java.util.Arrays.equals(allKnown, afterRebind), "a changed instance changes the answer");
        assertArrayEquals(whole(reads, "Kept", knowns.get(4)), afterRebind);
        assertNull(WatchStreamMethod.decodeLookupLean(afterRebind).getEntries().get(1).getWsdlUrl());

        store.unbind("Kept", "c");
        byte[] afterUnbind = reads.lookupLeanWire("Kept", null);
        assertArrayEquals(whole(reads, "Kept", null), afterUnbind);
        assertEquals(List.of("a", "b"), WatchStreamMethod.decodeLookupLean(afterUnbind).getEntries().stream()
                .map(Entry::getInstanceId).toList());

        assertThrows(LookupLeanFaultException.class, () -> reads.lookupLeanWire("Kept", List.of("xyz")),
                "a malformed known digest is refused on the wire path as on SOAP's");
    }

    @Test
    void answersKeptEncodedStayWithinTheirBytes() throws Exception {
        InMemoryRegistryStore store = new InMemoryRegistryStore();
        long budget = 8 << 10;
        RegistryReads reads = new RegistryReads(store, budget);
        for (int i = 0; i < 64; i++) {
            store.rebind(entry("Name" + i, "a", SCHEMA));
            store.rebind(entry("Name" + i, "b", SCHEMA));
            byte[] answer = reads.lookupLeanWire("Name" + i, List.of(SchemaDigests.of(SCHEMA), SchemaDigests.of(PROTO)));
            assertArrayEquals(whole(reads, "Name" + i, List.of(SchemaDigests.of(SCHEMA), SchemaDigests.of(PROTO))), answer);
            assertTrue(reads.keptAnswerBytes() <= budget, "kept " + reads.keptAnswerBytes() + " bytes");
        }
        assertTrue(reads.keptAnswerBytes() > budget / 2, "answers are kept: " + reads.keptAnswerBytes());
        long before = reads.keptAnswerBytes();
        for (int i = 0; i < 10_000; i++) {   // names a caller makes up: answered, never kept
            assertArrayEquals(whole(reads, "Made-up" + i, null), reads.lookupLeanWire("Made-up" + i, null));
        }
        assertEquals(before, reads.keptAnswerBytes(), "an answer with no instances is not kept");
        // a name let go is encoded again, and still right
        assertArrayEquals(whole(reads, "Name0", null), reads.lookupLeanWire("Name0", null));
    }
}
