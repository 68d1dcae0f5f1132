package io.switchboard.registry.server;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.Entries;
import io.switchboard.registry.SchemaDigests;
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

    RegistryReads(RegistryStore store) {
        this.store = store;
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
        Set<String> sent = knownDigests(known);
        LookupLeanResponse answer = new LookupLeanResponse();
        List<Entry> entries = new ArrayList<>();
        List<SchemaText> schemas = new ArrayList<>();
        for (ComponentEntry e : store.lookup(name)) {
            Entry w = withoutDocuments(e);
            w.setInterfaceSchemaDigest(document(e.interfaceSchema(), sent, schemas));
            w.setInterfaceProtoDigest(document(e.interfaceProto(), sent, schemas));
            entries.add(w);
        }
        answer.setEntries(entries);
        answer.setSchemas(schemas);
        return answer;
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
