package io.switchboard.registry.store;

import io.switchboard.registry.ComponentEntry;
import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import io.switchboard.protocol.Endpoint;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.CodingErrorAction;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * The JSON form of registry entries, shared by the file store (a snapshot document and a journal
 * of changes) and the ZooKeeper store (one entry per znode). An entry, version 1:
 *
 * <pre>{@code
 * {"name": "Echo", "instanceId": "…", "endpoints": [{"protocol": "soap", "address": "http://…"}],
 *  "interfaceSchema": "…", "interfaceProto": "…", "wsdlUrl": "…", "boundAt": "2026-11-22T10:00:00Z",
 *  "features": ["call-ids"], "leaseSeconds": 30}
 * }</pre>
 *
 * The file store's snapshot, document version 2, keeps each interface schema and {@code .proto}
 * text once, by its SHA-256, and entries name it ({@code "interfaceSchemaRef"},
 * {@code "interfaceProtoRef"}); {@code generation} names the journal that continues it:
 *
 * <pre>{@code
 * {"format": "switchboard-registry", "version": 2, "generation": 7,
 *  "texts": {"3f1c…": "<xs:schema …"}, "entries": [{"name": "Echo", …, "interfaceSchemaRef": "3f1c…"}]}
 * }</pre>
 *
 * Version 1 (a single file with every text inline and no journal) is still read, as generation 0.
 * A journal record ({@link #encodeChange}) is one change: {@code {"op": "put", "entry": {…},
 * "texts": {…}}} carrying the texts its journal has not carried yet, or {@code {"op": "unbind",
 * "name": "…", "instanceId": "…"}}.
 *
 * <p>Optional members may be absent or null. Decoding is strict: a missing required member, a wrong
 * type, a reference to an unknown text or another format or version is an
 * {@link IllegalArgumentException}, never a skipped entry.
 */
public final class StoreFormat {
    public static final String FORMAT = "switchboard-registry";
    /** The version of an entry (a ZooKeeper node, a journal record) and of the single-file document. */
    public static final int VERSION = 1;
    /** The version of the file store's snapshot document (texts by hash, a generation). */
    public static final int SNAPSHOT_VERSION = 2;
    /** More entries than any registry holds; a bound on what a corrupt or hostile file can cost. */
    public static final int MAX_ENTRIES = 1_000_000;

    private StoreFormat() {
    }

    /** A decoded snapshot: its document version, the generation of its journal, its entries and texts. */
    public record Snapshot(int version, long generation, List<ComponentEntry> entries, Texts texts) {
    }

    /** One change in a journal. */
    public sealed interface Change {
    }

    /** The instance is bound now as {@code entry} (a bind or a rebind). */
    public record Put(ComponentEntry entry) implements Change {
    }

    /** The instance, or every instance of {@code name} when {@code instanceId} is null, left. */
    public record Unbind(String name, String instanceId) implements Change {
    }

    /**
     * Interface texts (schemas and {@code .proto} files) by their SHA-256, so that many entries of
     * one interface store its text once. Not thread-safe.
     */
    public static final class Texts {
        private final Map<String, String> byHash = new HashMap<>();
        private final Map<String, String> hashOf = new HashMap<>();

        /** Whether every text of {@code e} is here already (a record of it adds none). */
        public boolean holds(ComponentEntry e) {
            return (e.interfaceSchema() == null || hashOf.containsKey(e.interfaceSchema()))
                    && (e.interfaceProto() == null || hashOf.containsKey(e.interfaceProto()));
        }

        public Texts copy() {
            Texts c = new Texts();
            c.byHash.putAll(byHash);
            c.hashOf.putAll(hashOf);
            return c;
        }

        String ref(String text, JsonObject added) {
            String hash = hashOf.get(text);
            if (hash == null) {
                hash = sha256(text);
                put(hash, text);
                if (added != null) {
                    added.addProperty(hash, text);
                }
            }
            return hash;
        }

        void put(String hash, String text) {
            byHash.put(hash, text);
            hashOf.put(text, hash);
        }

        String text(String hash) {
            String text = byHash.get(hash);
            if (text == null) {
                throw new IllegalArgumentException("refers to text " + hash + ", which is not in the store");
            }
            return text;
        }

        void read(JsonElement texts) {
            if (texts == null || texts.isJsonNull()) {
                return;
            }
            if (!texts.isJsonObject()) {
                throw new IllegalArgumentException("'texts' is not an object");
            }
            for (Map.Entry<String, JsonElement> t : texts.getAsJsonObject().entrySet()) {
                JsonElement v = t.getValue();
                if (!v.isJsonPrimitive() || !v.getAsJsonPrimitive().isString()) {
                    throw new IllegalArgumentException("text " + t.getKey() + " is not a string");
                }
                if (!t.getKey().equals(sha256(v.getAsString()))) {
                    throw new IllegalArgumentException("text " + t.getKey() + " does not match its hash");
                }
                put(t.getKey(), v.getAsString());
            }
        }

        private static String sha256(String text) {
            try {
                return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                        .digest(text.getBytes(StandardCharsets.UTF_8)));
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("every Java platform has SHA-256", e);
            }
        }
    }

    /** The single-file document, version 1 (every text inline); what older registries read. */
    public static byte[] encodeDocument(List<ComponentEntry> entries) {
        JsonObject doc = header(VERSION);
        JsonArray all = new JsonArray();
        entries.forEach(e -> all.add(toJson(e)));
        doc.add("entries", all);
        return PRETTY.toJson(doc).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The file store's snapshot, version 2: each text once, entries naming it by hash. The texts
     * written are added to {@code table} (pass an empty one: a journal that continues this
     * snapshot starts from them).
     */
    public static byte[] encodeSnapshot(List<ComponentEntry> entries, long generation, Texts table) {
        JsonObject doc = header(SNAPSHOT_VERSION);
        doc.addProperty("generation", generation);
        JsonObject texts = new JsonObject();
        doc.add("texts", texts);
        JsonArray all = new JsonArray();
        entries.forEach(e -> all.add(toJson(e, table, texts)));
        doc.add("entries", all);
        return PRETTY.toJson(doc).getBytes(StandardCharsets.UTF_8);
    }

    /** The entries of a document of either version. */
    public static List<ComponentEntry> decodeDocument(byte[] bytes) {
        return decodeSnapshot(bytes).entries();
    }

    /** A document of either version; a version 1 document is generation 0. */
    public static Snapshot decodeSnapshot(byte[] bytes) {
        JsonObject doc = object(parse(bytes), "the document");
        String format = string(doc, "format", true);
        if (!FORMAT.equals(format)) {
            throw new IllegalArgumentException("format is '" + format + "', not '" + FORMAT + "'");
        }
        JsonElement v = doc.get("version");
        int version = v != null && v.isJsonPrimitive() && v.getAsJsonPrimitive().isNumber()
                ? v.getAsInt() : -1;
        if (version != VERSION && version != SNAPSHOT_VERSION) {
            throw new IllegalArgumentException("version " + v + " is not one this registry reads (it reads "
                    + VERSION + " and " + SNAPSHOT_VERSION + ")");
        }
        long generation = 0;
        Texts texts = new Texts();
        if (version == SNAPSHOT_VERSION) {
            JsonElement g = doc.get("generation");
            if (g == null || !g.isJsonPrimitive() || !g.getAsJsonPrimitive().isNumber() || g.getAsLong() < 0) {
                throw new IllegalArgumentException("'generation' is missing or not a count");
            }
            generation = g.getAsLong();
            texts.read(doc.get("texts"));
        }
        JsonElement entries = doc.get("entries");
        if (entries == null || !entries.isJsonArray()) {
            throw new IllegalArgumentException("'entries' is missing or not an array");
        }
        if (entries.getAsJsonArray().size() > MAX_ENTRIES) {
            throw new IllegalArgumentException("more than " + MAX_ENTRIES + " entries");
        }
        List<ComponentEntry> out = new ArrayList<>();
        int i = 0;
        for (JsonElement e : entries.getAsJsonArray()) {
            try {
                out.add(fromJson(object(e, "an entry"), version == SNAPSHOT_VERSION ? texts : null));
            } catch (IllegalArgumentException ex) {
                throw new IllegalArgumentException("entry " + i + ": " + ex.getMessage(), ex);
            }
            i++;
        }
        return new Snapshot(version, generation, out, texts);
    }

    /**
     * One journal record. A put carries the texts that {@code known} (what the snapshot and the
     * journal before it hold) lacks, and adds them there.
     */
    public static byte[] encodeChange(Change change, Texts known) {
        JsonObject o = new JsonObject();
        if (change instanceof Put put) {
            o.addProperty("op", "put");
            JsonObject added = new JsonObject();
            o.add("entry", toJson(put.entry(), known, added));
            if (!added.isEmpty()) {
                o.add("texts", added);
            }
        } else {
            Unbind u = (Unbind) change;
            o.addProperty("op", "unbind");
            o.addProperty("name", u.name());
            o.addProperty("instanceId", u.instanceId());
        }
        o.addProperty("version", VERSION);
        return COMPACT.toJson(o).getBytes(StandardCharsets.UTF_8);
    }

    /** One journal record, its texts added to {@code known}. */
    public static Change decodeChange(byte[] bytes, Texts known) {
        JsonObject o = object(parse(bytes), "the record");
        JsonElement version = o.get("version");
        if (version == null || !(version.isJsonPrimitive() && version.getAsJsonPrimitive().isNumber()
                && version.getAsInt() == VERSION)) {
            throw new IllegalArgumentException("record version " + version + " is not one this registry reads");
        }
        String op = string(o, "op", true);
        switch (op) {
            case "put" -> {
                known.read(o.get("texts"));
                return new Put(fromJson(object(o.get("entry"), "the entry"), known));
            }
            case "unbind" -> {
                return new Unbind(string(o, "name", true), string(o, "instanceId", false));
            }
            default -> throw new IllegalArgumentException("op '" + op + "' is not one this registry reads");
        }
    }

    public static byte[] encodeEntry(ComponentEntry e) {
        JsonObject o = toJson(e);
        o.addProperty("version", VERSION);
        return COMPACT.toJson(o).getBytes(StandardCharsets.UTF_8);
    }

    public static ComponentEntry decodeEntry(byte[] bytes) {
        JsonObject o = object(parse(bytes), "the entry");
        JsonElement version = o.get("version");
        if (version != null && !(version.isJsonPrimitive() && version.getAsJsonPrimitive().isNumber()
                && version.getAsInt() == VERSION)) {
            throw new IllegalArgumentException("entry version " + version + " is not one this registry reads");
        }
        return fromJson(o);
    }

    private static JsonObject header(int version) {
        JsonObject doc = new JsonObject();
        doc.addProperty("format", FORMAT);
        doc.addProperty("version", version);
        return doc;
    }

    /** An entry naming its texts by hash; texts new to {@code known} are added to it and to {@code added}. */
    private static JsonObject toJson(ComponentEntry e, Texts known, JsonObject added) {
        JsonObject o = toJson(e);
        if (e.interfaceSchema() != null) {
            o.remove("interfaceSchema");
            o.addProperty("interfaceSchemaRef", known.ref(e.interfaceSchema(), added));
        }
        if (e.interfaceProto() != null) {
            o.remove("interfaceProto");
            o.addProperty("interfaceProtoRef", known.ref(e.interfaceProto(), added));
        }
        return o;
    }

    private static JsonObject toJson(ComponentEntry e) {
        JsonObject o = new JsonObject();
        o.addProperty("name", e.name());
        o.addProperty("instanceId", e.instanceId());
        JsonArray eps = new JsonArray();
        for (Endpoint ep : e.endpoints()) {
            JsonObject j = new JsonObject();
            j.addProperty("protocol", ep.protocol());
            j.addProperty("address", ep.address());
            eps.add(j);
        }
        o.add("endpoints", eps);
        o.addProperty("interfaceSchema", e.interfaceSchema());
        o.addProperty("interfaceProto", e.interfaceProto());
        o.addProperty("wsdlUrl", e.wsdlUrl());
        o.addProperty("boundAt", e.boundAt() == null ? null : e.boundAt().toString());
        JsonArray features = new JsonArray();
        e.features().forEach(features::add);
        o.add("features", features);
        o.addProperty("leaseSeconds", e.leaseSeconds());
        return o;
    }

    private static ComponentEntry fromJson(JsonObject o) {
        return fromJson(o, null);
    }

    private static String text(JsonObject o, String member, Texts known) {
        String ref = known == null ? null : string(o, member + "Ref", false);
        return ref == null ? string(o, member, false) : known.text(ref);
    }

    private static ComponentEntry fromJson(JsonObject o, Texts known) {
        String name = string(o, "name", true);
        List<Endpoint> endpoints = new ArrayList<>();
        JsonElement eps = o.get("endpoints");
        if (eps == null || !eps.isJsonArray() || eps.getAsJsonArray().isEmpty()) {
            throw new IllegalArgumentException(name + ": 'endpoints' is missing or empty");
        }
        for (JsonElement ep : eps.getAsJsonArray()) {
            JsonObject j = object(ep, "an endpoint of " + name);
            endpoints.add(new Endpoint(string(j, "protocol", true), string(j, "address", true)));
        }
        String boundAt = string(o, "boundAt", false);
        Instant when;
        try {
            when = boundAt == null ? null : Instant.parse(boundAt);
        } catch (DateTimeParseException ex) {
            throw new IllegalArgumentException(name + ": boundAt '" + boundAt + "' is not an instant");
        }
        List<String> features = new ArrayList<>();
        JsonElement fs = o.get("features");
        if (fs != null && !fs.isJsonNull()) {
            if (!fs.isJsonArray()) {
                throw new IllegalArgumentException(name + ": 'features' is not an array");
            }
            for (JsonElement f : fs.getAsJsonArray()) {
                if (!f.isJsonPrimitive() || !f.getAsJsonPrimitive().isString()) {
                    throw new IllegalArgumentException(name + ": a feature is not a string");
                }
                features.add(f.getAsString());
            }
        }
        JsonElement lease = o.get("leaseSeconds");
        int leaseSeconds = 0;
        if (lease != null && !lease.isJsonNull()) {
            if (!lease.isJsonPrimitive() || !lease.getAsJsonPrimitive().isNumber() || lease.getAsDouble() < 0
                    || lease.getAsDouble() > Integer.MAX_VALUE || lease.getAsDouble() != Math.rint(lease.getAsDouble())) {
                throw new IllegalArgumentException(name + ": leaseSeconds " + lease + " is not a count of seconds");
            }
            leaseSeconds = lease.getAsInt();
        }
        return new ComponentEntry(name, string(o, "instanceId", true), endpoints, text(o, "interfaceSchema", known),
                text(o, "interfaceProto", known), string(o, "wsdlUrl", false), when, features, leaseSeconds);
    }

    private static final Gson PRETTY = new GsonBuilder().disableHtmlEscaping().setPrettyPrinting().create();
    private static final Gson COMPACT = new GsonBuilder().disableHtmlEscaping().create();

    private static JsonElement parse(byte[] bytes) {
        try {
            // strict UTF-8: a torn or foreign file is an error, not text with replacement characters
            String text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
            JsonReader reader = new JsonReader(new StringReader(text));
            reader.setStrictness(Strictness.STRICT);
            JsonElement root = JsonParser.parseReader(reader);
            if (reader.peek() != com.google.gson.stream.JsonToken.END_DOCUMENT) {
                throw new IllegalArgumentException("text follows the JSON document");
            }
            return root;
        } catch (JsonParseException | java.io.IOException | IllegalStateException e) {
            throw new IllegalArgumentException("not valid JSON (" + e.getMessage() + ")", e);
        }
    }

    private static JsonObject object(JsonElement e, String what) {
        if (e == null || !e.isJsonObject()) {
            throw new IllegalArgumentException(what + " is not a JSON object");
        }
        return e.getAsJsonObject();
    }

    private static String string(JsonObject o, String member, boolean required) {
        JsonElement e = o.get(member);
        if (e == null || e.isJsonNull()) {
            if (required) {
                throw new IllegalArgumentException("'" + member + "' is missing");
            }
            return null;
        }
        if (!e.isJsonPrimitive() || !e.getAsJsonPrimitive().isString()) {
            throw new IllegalArgumentException("'" + member + "' is not a string");
        }
        return e.getAsString();
    }
}
