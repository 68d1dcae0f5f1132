package io.switchboard.registry.server;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.Entries;
import io.switchboard.registry.SchemaDigests;
import io.switchboard.registry.SizedLru;
import io.switchboard.registry.WatchStreamMethod;
import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.wire.Entry;
import io.switchboard.registry.wire.LookupLeanFaultException;
import io.switchboard.registry.wire.LookupLeanResponse;
import io.switchboard.registry.wire.SchemaText;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Lookups and listings: open to every caller, answered from the store as it is now. */
final class RegistryReads {
    /** Documents whose digests are kept: far more distinct schemas than a registry usually holds. */
    private static final int DIGESTS_KEPT = 4_096;
    private final RegistryStore store;
    private final SchemaDigests.Memo digests = new SchemaDigests.Memo(DIGESTS_KEPT);
    /** Lean answers kept encoded, in bytes over every name; the least recently looked up are let go first. */
    static final long KEPT_ANSWER_BYTES = 16 << 20;
    /** What keeping one answer costs beside its bytes (map entry, name, record, list of instances). */
    static final int KEPT_ENTRY_BYTES = 256;
    /** A larger answer (hundreds of instances under one name) is encoded per lookup rather than kept. */
    static final int MAX_KEPT_ANSWER_BYTES = 64 << 10;
    private final SizedLru<String, EncodedAnswer> encoded;

    RegistryReads(RegistryStore store) {
        this(store, KEPT_ANSWER_BYTES);
    }

    /** {@code keptAnswerBytes}: lean answers kept encoded, in bytes over every name. */
    RegistryReads(RegistryStore store, long keptAnswerBytes) {
        this.store = store;
        // each kept answer counts its map entry, name and record too: many small answers stay bounded
        this.encoded = new SizedLru<>(keptAnswerBytes, a -> a.entries.length + KEPT_ENTRY_BYTES);
    }

    /** Every instance bound under {@code name}, with its interface documents. */
    List<Entry> lookup(String name) {
        List<Entry> out = new ArrayList<>();
        for (ComponentEntry e : store.lookup(name)) {
            out.add(Entries.toWire(e));
        }
        return out;
    }

    /**
     * {@link #lookup} with each interface document once: entries name theirs by digest, and the
     * answer carries the text of every digest the caller does not list in {@code known}.
     */
    LookupLeanResponse lookupLean(String name, List<String> known) throws LookupLeanFaultException {
        Set<String> sent = knownDigests(known);   // a request out of bounds is refused before the store is read
        List<SchemaText> schemas = new ArrayList<>();
        LookupLeanResponse answer = new LookupLeanResponse();
        answer.setEntries(leanEntries(store.lookup(name), sent, schemas));
        answer.setSchemas(schemas);
        return answer;
    }

    /**
     * The instances as wire entries that name their documents by digest; each document's text
     * joins {@code documents} once, unless {@code named} holds its digest already.
     */
    private List<Entry> leanEntries(List<ComponentEntry> instances, Set<String> named, List<SchemaText> documents) {
        List<Entry> entries = new ArrayList<>(instances.size());
        for (ComponentEntry e : instances) {
            Entry w = withoutDocuments(e);
            w.setInterfaceSchemaDigest(document(e.interfaceSchema(), named, documents));
            w.setInterfaceProtoDigest(document(e.interfaceProto(), named, documents));
            entries.add(w);
        }
        return entries;
    }

    /**
     * {@link #lookupLean} in wire form, as {@code WatchStreamMethod.encodeLookupLean} would write
     * it, byte for byte. The entries' part is kept per name with the instances it was made from,
     * and sent again while the store answers with the same instances (entries are immutable, so
     * the same instances are the same content): a name looked up over and over is encoded once per
     * change, not once per lookup. Documents the caller lacks are encoded per request and follow
     * the entries' part, as the field order of a whole answer puts them.
     */
    byte[] lookupLeanWire(String name, List<String> known) throws LookupLeanFaultException {
        Set<String> sent = knownDigests(known);
        return lookupLeanWire(name, sent, store.lookup(name));
    }

    /** {@link #lookupLeanWire} if the store can answer at once ({@link RegistryStore#lookupNow}); null if not. */
    byte[] lookupLeanWireNow(String name, List<String> known) throws LookupLeanFaultException {
        Set<String> sent = knownDigests(known);
        List<ComponentEntry> now = store.lookupNow(name);
        return now == null ? null : lookupLeanWire(name, sent, now);
    }

    private byte[] lookupLeanWire(String name, Set<String> sent, List<ComponentEntry> now) {
        EncodedAnswer kept = encoded.get(name);
        if (kept == null || !kept.madeFrom(now)) {
            kept = encode(now);
            // a name with no instances is not kept: names a caller makes up must not fill the memory
            if (!now.isEmpty() && kept.entries.length <= MAX_KEPT_ANSWER_BYTES) {
                encoded.put(name, kept);
            }
        }
        List<SchemaText> missing = new ArrayList<>();
        for (SchemaText s : kept.documents) {
            if (sent.add(s.getDigest())) {
                missing.add(s);
            }
        }
        if (missing.isEmpty()) {
            return kept.entries;
        }
        LookupLeanResponse documents = new LookupLeanResponse();
        documents.setEntries(List.of());
        documents.setSchemas(missing);
        byte[] tail = WatchStreamMethod.encodeLookupLean(documents);
        byte[] out = java.util.Arrays.copyOf(kept.entries, kept.entries.length + tail.length);
        System.arraycopy(tail, 0, out, kept.entries.length, tail.length);
        return out;
    }

    /** Bytes of lean answers kept encoded now; for tests. */
    long keptAnswerBytes() {
        return encoded.bytes();
    }

    /** The entries' part of a lean answer for {@code instances}, and each of their documents once, in the order first named. */
    private EncodedAnswer encode(List<ComponentEntry> instances) {
        List<SchemaText> documents = new ArrayList<>();
        LookupLeanResponse answer = new LookupLeanResponse();
        answer.setEntries(leanEntries(instances, new HashSet<>(), documents));
        answer.setSchemas(List.of());
        return new EncodedAnswer(List.copyOf(instances), WatchStreamMethod.encodeLookupLean(answer), List.copyOf(documents));
    }

    /** A lean answer's entries in wire form, the instances they were made from and the documents they name. */
    private record EncodedAnswer(List<ComponentEntry> from, byte[] entries, List<SchemaText> documents) {
        boolean madeFrom(List<ComponentEntry> instances) {
            if (instances == from) {
                return true;   // a store that answers the same list while nothing changed
            }
            if (instances.size() != from.size()) {
                return false;
            }
            for (int i = 0; i < from.size(); i++) {
                if (instances.get(i) != from.get(i)) {
                    return false;
                }
            }
            return true;
        }
    }

    private static Set<String> knownDigests(List<String> known) throws LookupLeanFaultException {
        if (known == null) {
            return new HashSet<>();
        }
        if (known.size() > SchemaDigests.MAX_KNOWN) {
            throw RegistryFault.LOOKUP_LEAN.of(RegistryFault.INVALID, known.size()
                    + " known schemas listed; at most " + SchemaDigests.MAX_KNOWN);
        }
        Set<String> out = new HashSet<>();
        for (String d : known) {
            if (!SchemaDigests.isDigest(d)) {
                throw RegistryFault.LOOKUP_LEAN.of(RegistryFault.INVALID,
                        "a known schema is named by its SHA-256 in 64 lower-case hex digits");
            }
            out.add(d);
        }
        return out;
    }

    /** The digest of {@code text}, whose text joins {@code schemas} unless sent or known already. */
    private String document(String text, Set<String> sent, List<SchemaText> schemas) {
        if (text == null) {
            return null;
        }
        String d = digests.of(text);
        if (sent.add(d)) {
            SchemaText s = new SchemaText();
            s.setDigest(d);
            s.setText(text);
            schemas.add(s);
        }
        return d;
    }

    /** Every entry, without interface documents: a listing is for finding names, a lookup fetches the schema. */
    List<Entry> list() {
        List<ComponentEntry> all = store.list();
        List<Entry> out = new ArrayList<>(all.size());
        for (ComponentEntry e : all) {
            out.add(withoutDocuments(e));
        }
        return out;
    }

    /** The wire entry without its interface documents, made without a copy of the entry first (10,000 per list). */
    private static Entry withoutDocuments(ComponentEntry e) {
        Entry w = Entries.toWire(e);
        w.setInterfaceSchema(null);
        w.setInterfaceProto(null);
        return w;
    }
}
