package io.switchboard.registry.store;

import io.switchboard.registry.ComponentEntry;
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
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;

/**
 * The JSON form of registry entries, shared by the file store (a whole document) and the
 * ZooKeeper store (one entry per znode). Version 1:
 *
 * <pre>{@code
 * {"format": "switchboard-registry", "version": 1, "entries": [
 *   {"name": "Echo", "instanceId": "…", "endpoints": [{"protocol": "soap", "address": "http://…"}],
 *    "interfaceSchema": "…", "interfaceProto": "…", "wsdlUrl": "…", "boundAt": "2026-11-22T10:00:00Z",
 *    "features": ["call-ids"], "leaseSeconds": 30}]}
 * }</pre>
 *
 * Optional members may be absent or null. Decoding is strict: a missing required member, a wrong
 * type or another format or version is an {@link IllegalArgumentException}, never a skipped entry.
 */
public final class StoreFormat {
    public static final String FORMAT = "switchboard-registry";
    public static final int VERSION = 1;
    /** More entries than any registry holds; a bound on what a corrupt or hostile file can cost. */
    public static final int MAX_ENTRIES = 1_000_000;

    private StoreFormat() {
    }

    public static byte[] encodeDocument(List<ComponentEntry> entries) {
        JsonObject doc = new JsonObject();
        doc.addProperty("format", FORMAT);
        doc.addProperty("version", VERSION);
        JsonArray all = new JsonArray();
        entries.forEach(e -> all.add(toJson(e)));
        doc.add("entries", all);
        return new GsonBuilder().disableHtmlEscaping().setPrettyPrinting().create().toJson(doc)
                .getBytes(StandardCharsets.UTF_8);
    }

    public static List<ComponentEntry> decodeDocument(byte[] bytes) {
        JsonObject doc = object(parse(bytes), "the document");
        String format = string(doc, "format", true);
        if (!FORMAT.equals(format)) {
            throw new IllegalArgumentException("format is '" + format + "', not '" + FORMAT + "'");
        }
        JsonElement version = doc.get("version");
        if (version == null || !version.isJsonPrimitive() || !version.getAsJsonPrimitive().isNumber()
                || version.getAsInt() != VERSION) {
            throw new IllegalArgumentException("version " + version + " is not one this registry reads (it reads "
                    + VERSION + ")");
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
                out.add(fromJson(object(e, "an entry")));
            } catch (IllegalArgumentException ex) {
                throw new IllegalArgumentException("entry " + i + ": " + ex.getMessage(), ex);
            }
            i++;
        }
        return out;
    }

    public static byte[] encodeEntry(ComponentEntry e) {
        JsonObject o = toJson(e);
        o.addProperty("version", VERSION);
        return new GsonBuilder().disableHtmlEscaping().create().toJson(o).getBytes(StandardCharsets.UTF_8);
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
        return new ComponentEntry(name, string(o, "instanceId", true), endpoints, string(o, "interfaceSchema", false),
                string(o, "interfaceProto", false), string(o, "wsdlUrl", false), when, features, leaseSeconds);
    }

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
