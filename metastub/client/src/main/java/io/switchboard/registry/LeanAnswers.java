package io.switchboard.registry;

import io.switchboard.protocol.Endpoint;
import io.switchboard.registry.wire.Entry;
import io.switchboard.registry.wire.LookupLeanResponse;
import io.switchboard.registry.wire.SchemaText;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Internal: the interface documents a client was sent by {@code lookupLean}, kept by digest, and
 * the digests each name's instances carried last, which the next lookup of the name lists as
 * known. A document is kept only once its text matches its digest; both maps are bounded (the
 * least recently used go first), and a document gone from them is simply asked for again.
 */
final class LeanAnswers {
    /** Documents kept: a client usually looks up a few dozen components, of a few schemas each. */
    static final int DOCUMENTS_KEPT = 256;
    private static final int NAMES_KEPT = 4_096;
    private static final int ENDPOINTS_KEPT = 4_096;
    private final SizedLru<String, String> documents = SizedLru.ofEntries(DOCUMENTS_KEPT);
    private final SizedLru<String, List<String>> digestsOfName = SizedLru.ofEntries(NAMES_KEPT);
    /** The last answer read per name, each at most this long (a few dozen instances), ... */
    static final int MAX_KEPT_ANSWER_BYTES = 16 << 10;
    /** ... and all of them at most this long: a thousand names of ten instances each. */
    static final long KEPT_ANSWER_BYTES = 8 << 20;
    /** Each kept answer's map entry, name and record, counted beside its bytes. */
    private static final int KEPT_ENTRY_BYTES = 256;
    private final SizedLru<String, ReadAnswer> answers = new SizedLru<>(KEPT_ANSWER_BYTES,
            a -> a.wire.length + KEPT_ENTRY_BYTES);
    /**
     * The endpoints of the instances read last, by protocol and address: the same instances come
     * back on every lookup of a name, and making an endpoint parses its address as a URI.
     */
    private final SizedLru<List<String>, Endpoint> endpoints = SizedLru.ofEntries(ENDPOINTS_KEPT);

    /** The digests to list as known when looking {@code name} up: those its instances carried last, still kept. */
    synchronized List<String> known(String name) {
        List<String> last = digestsOfName.get(name);
        if (last == null) {
            return List.of();
        }
        List<String> out = new ArrayList<>(last.size());
        for (String d : last) {
            if (documents.containsKey(d) && out.size() < SchemaDigests.MAX_KNOWN) {
                out.add(d);
            }
        }
        return out;
    }

    /**
     * {@link #read(String, LookupLeanResponse)} of an answer in wire form. An answer the same,
     * byte for byte, as the last one read for {@code name} gives the entries read then, without
     * decoding it again: a registry sends the same bytes while the name's instances stay as they
     * are, and the entries (immutable) carry their documents already.
     */
    List<ComponentEntry> read(String name, byte[] answer) {
        ReadAnswer last = answers.get(name);
        if (last != null && java.util.Arrays.equals(last.wire, answer)) {
            return new ArrayList<>(last.entries);
        }
        List<ComponentEntry> out = read(name, WatchStreamMethod.decodeLookupLean(answer));
        if (out != null && answer.length <= MAX_KEPT_ANSWER_BYTES) {
            answers.put(name, new ReadAnswer(answer, List.copyOf(out)));
        }
        return out;
    }

    /** An answer as it came and the entries read from it. */
    private record ReadAnswer(byte[] wire, List<ComponentEntry> entries) {
    }

    /**
     * The entries of {@code answer}, each with its documents' text; null when an entry names a
     * digest that neither the answer nor this client holds (it was let go meanwhile: ask again
     * listing none as known).
     *
     * @throws RegistryException ({@code invalid}) a document does not match its digest
     */
    List<ComponentEntry> read(String name, LookupLeanResponse answer) {
        Map<String, String> sent = new HashMap<>();
        if (answer.getSchemas() != null) {
            for (SchemaText s : answer.getSchemas()) {
                if (s == null || !SchemaDigests.isDigest(s.getDigest()) || !SchemaDigests.matches(s.getDigest(), s.getText())) {
                    throw new RegistryException("invalid", "lookup " + name
                            + ": the registry sent an interface document that does not match its digest");
                }
                sent.put(s.getDigest(), s.getText());
            }
        }
        List<ComponentEntry> out = new ArrayList<>();
        List<String> carried = new ArrayList<>();
        synchronized (this) {
            sent.forEach(documents::put);
            if (answer.getEntries() != null) {
                for (Entry w : answer.getEntries()) {
                    String schema = text(w.getInterfaceSchemaDigest(), sent, carried);
                    String proto = text(w.getInterfaceProtoDigest(), sent, carried);
                    if (schema == null && w.getInterfaceSchemaDigest() != null
                            || proto == null && w.getInterfaceProtoDigest() != null) {
                        return null;
                    }
                    w.setInterfaceSchema(schema);
                    w.setInterfaceProto(proto);
                    out.add(Entries.fromWire(w, this::endpoint));
                }
            }
            digestsOfName.put(name, List.copyOf(carried));
        }
        return out;
    }

    /** The endpoint made before for this protocol and address, else a new one (which checks the address). */
    private Endpoint endpoint(String protocol, String address) {
        List<String> key = List.of(protocol, address);
        Endpoint e = endpoints.get(key);
        if (e == null) {
            e = new Endpoint(protocol, address);
            endpoints.put(key, e);
        }
        return e;
    }

    /** How many documents are kept now; for tests. */
    synchronized int documentsKept() {
        return documents.size();
    }

    private String text(String digest, Map<String, String> sent, List<String> carried) {
        if (digest == null) {
            return null;
        }
        if (!carried.contains(digest)) {
            carried.add(digest);
        }
        String t = sent.get(digest);
        return t != null ? t : documents.get(digest);
    }
}
