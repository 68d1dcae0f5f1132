package io.switchboard.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.registry.wire.EndpointInfo;
import io.switchboard.registry.wire.Entry;
import io.switchboard.registry.wire.LookupLeanResponse;
import io.switchboard.registry.wire.SchemaText;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a client accepts of a lean lookup's answer, and what it keeps for the next one. */
class LeanAnswersTest {
    private static final String SCHEMA = "<xs:schema xmlns:xs='http://www.w3.org/2001/XMLSchema'/>";

    private static Entry entry(String instance, String schemaDigest) {
        Entry e = new Entry();
        e.setName("Lean");
        e.setInstanceId(instance);
        EndpointInfo ep = new EndpointInfo();
        ep.setProtocol("soap");
        ep.setAddress("http://127.0.0.1:4000/axis2/services/Lean");
        e.setEndpoints(new ArrayList<>(List.of(ep)));
        e.setInterfaceSchemaDigest(schemaDigest);
        return e;
    }

    private static SchemaText text(String digest, String text) {
        SchemaText s = new SchemaText();
        s.setDigest(digest);
        s.setText(text);
        return s;
    }

    private static LookupLeanResponse answer(List<SchemaText> schemas, Entry... entries) {
        LookupLeanResponse r = new LookupLeanResponse();
        r.setEntries(new ArrayList<>(List.of(entries)));
        r.setSchemas(new ArrayList<>(schemas));
        return r;
    }

    @Test
    void entriesGetTheirDocumentsAndTheNextLookupListsThemAsKnown() {
        LeanAnswers lean = new LeanAnswers();
        String d = SchemaDigests.of(SCHEMA);
        assertEquals(List.of(), lean.known("Lean"));
        List<ComponentEntry> first = lean.read("Lean", answer(List.of(text(d, SCHEMA)), entry("a", d), entry("b", d)));
        assertEquals(List.of(SCHEMA, SCHEMA), first.stream().map(ComponentEntry::interfaceSchema).toList());
        assertEquals(List.of(d), lean.known("Lean"));
        // the registry leaves out what the client listed: the client fills it in from what it kept
        List<ComponentEntry> next = lean.read("Lean", answer(List.of(), entry("a", d), entry("c", null)));
        assertEquals(SCHEMA, next.get(0).interfaceSchema());
        assertNull(next.get(1).interfaceSchema(), "an instance without a schema stays without");
    }

    @Test
    void aDocumentThatDoesNotMatchItsDigestIsRefusedAndNotKept() {
        LeanAnswers lean = new LeanAnswers();
        String d = SchemaDigests.of(SCHEMA);
        String forged = SCHEMA.replace("/>", "><xs:element name='x'/></xs:schema>");
        RegistryException refused = assertThrows(RegistryException.class,
                () -> lean.read("Lean", answer(List.of(text(d, forged)), entry("a", d))));
        assertEquals("invalid", refused.code());
        assertTrue(refused.getMessage().contains("does not match its digest"), refused.getMessage());
        assertEquals(0, lean.documentsKept());
        assertEquals(List.of(), lean.known("Lean"));
        for (String notADigest : List.of("", "abc", d.toUpperCase())) {
            assertThrows(RegistryException.class,
                    () -> lean.read("Lean", answer(List.of(text(notADigest, SCHEMA)), entry("a", notADigest))), notADigest);
        }
        assertThrows(RegistryException.class, () -> lean.read("Lean", answer(List.of(text(d, null)), entry("a", d))));
    }

    @Test
    void anEntryNamingADocumentNeitherSentNorKeptAsksForAnotherAnswer() {
        LeanAnswers lean = new LeanAnswers();
        assertNull(lean.read("Lean", answer(List.of(), entry("a", SchemaDigests.of(SCHEMA)))));
    }

    @Test
    void keptDocumentsAreBounded() {
        LeanAnswers lean = new LeanAnswers();
        for (int i = 0; i <= LeanAnswers.DOCUMENTS_KEPT; i++) {
            String schema = SCHEMA.replace("/>", "><!-- " + i + " --></xs:schema>");
            String d = SchemaDigests.of(schema);
            lean.read("Lean" + i, answer(List.of(text(d, schema)), entry("a", d)));
        }
        assertEquals(LeanAnswers.DOCUMENTS_KEPT, lean.documentsKept());
        assertEquals(List.of(), lean.known("Lean0"), "the oldest was let go, and is not listed as known");
        assertFalse(lean.known("Lean" + LeanAnswers.DOCUMENTS_KEPT).isEmpty());
    }

    @Test
    void anEndpointReadAgainIsTheOneMadeBeforeAndABadAddressIsStillRefused() {
        LeanAnswers lean = new LeanAnswers();
        ComponentEntry first = lean.read("Lean", answer(List.of(), entry("a", null))).get(0);
        ComponentEntry again = lean.read("Lean", answer(List.of(), entry("a", null))).get(0);
        assertEquals(first, again);
        org.junit.jupiter.api.Assertions.assertSame(first.endpoints().get(0), again.endpoints().get(0),
                "the same protocol and address: the endpoint made before, its address not parsed again");
        Entry moved = entry("a", null);
        moved.getEndpoints().get(0).setAddress("http://127.0.0.1:4001/axis2/services/Lean");
        assertEquals("http://127.0.0.1:4001/axis2/services/Lean",
                lean.read("Lean", answer(List.of(), moved)).get(0).endpoints().get(0).address());
        Entry bad = entry("a", null);
        bad.getEndpoints().get(0).setAddress("http://[not a uri");
        assertThrows(IllegalArgumentException.class, () -> lean.read("Lean", answer(List.of(), bad)));
        assertThrows(IllegalArgumentException.class, () -> lean.read("Lean", answer(List.of(), bad)),
                "a refused address is not kept as if it had been made");
    }

    @Test
    void anAnswerTheSameAsTheLastGivesTheEntriesReadThenAndAnotherIsRead() {
        LeanAnswers lean = new LeanAnswers();
        String d = SchemaDigests.of(SCHEMA);
        byte[] first = WatchStreamMethod.encodeLookupLean(answer(List.of(text(d, SCHEMA)), entry("a", d), entry("b", d)));
        List<ComponentEntry> read = lean.read("Lean", first);
        assertEquals(List.of("a", "b"), read.stream().map(ComponentEntry::instanceId).toList());
        assertEquals(SCHEMA, read.get(1).interfaceSchema());
        byte[] lean1 = WatchStreamMethod.encodeLookupLean(answer(List.of(), entry("a", d), entry("b", d)));
        List<ComponentEntry> fromKnown = lean.read("Lean", lean1);
        assertEquals(read, fromKnown, "the documents filled in from what the client kept");
        List<ComponentEntry> again = lean.read("Lean", lean1.clone());
        assertEquals(fromKnown, again);
        org.junit.jupiter.api.Assertions.assertSame(fromKnown.get(0), again.get(0),
                "the same bytes again: the entries read before, not decoded again");
        again.clear();   // the caller's own list: clearing it does not touch what is kept
        assertEquals(2, lean.read("Lean", lean1).size());

        byte[] changed = WatchStreamMethod.encodeLookupLean(answer(List.of(), entry("a", d), entry("c", d)));
        assertEquals(List.of("a", "c"), lean.read("Lean", changed).stream().map(ComponentEntry::instanceId).toList());
        // another name with bytes the same as a kept answer of the first: read for its own name
        assertEquals(List.of("a", "c"), lean.read("Other", changed).stream().map(ComponentEntry::instanceId).toList());
    }

    @Test
    void aForgedAnswerIsRefusedEveryTimeAndALargeOneIsNotKept() {
        LeanAnswers lean = new LeanAnswers();
        String d = SchemaDigests.of(SCHEMA);
        byte[] forged = WatchStreamMethod.encodeLookupLean(answer(List.of(text(d, SCHEMA + " ")), entry("a", d)));
        assertThrows(RegistryException.class, () -> lean.read("Lean", forged));
        assertThrows(RegistryException.class, () -> lean.read("Lean", forged), "a refused answer is not kept as read");
        assertThrows(RuntimeException.class, () -> lean.read("Lean", new byte[] {(byte) 0xff, 0x01}),
                "bytes that are no answer are refused");

        List<Entry> many = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            many.add(entry("i" + i, null));
        }
        byte[] large = WatchStreamMethod.encodeLookupLean(answer(List.of(), many.toArray(new Entry[0])));
        assertTrue(large.length > LeanAnswers.MAX_KEPT_ANSWER_BYTES, "the answer is over the bound: " + large.length);
        ComponentEntry once = lean.read("Many", large).get(0);
        ComponentEntry twice = lean.read("Many", large).get(0);
        assertEquals(once, twice);
        assertFalse(once == twice, "an answer over the bound is read again, not kept");
    }
}
