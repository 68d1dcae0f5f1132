package io.switchboard.server.authz;

import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import com.google.gson.stream.MalformedJsonException;
import java.io.EOFException;
import java.io.IOException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a policy in gRPC's authorization policy form (gRFC A43) as a JSON stream, so that every
 * refusal names the line it concerns. As gRPC: {@code name} and a non-empty {@code allow_rules}
 * are required, each rule needs a {@code name}, and a field this reader does not know makes the
 * policy invalid (a newer field silently ignored could allow what it was meant to deny).
 * {@code request.headers} is refused: a Switchboard call carries no HTTP headers on every protocol.
 */
final class PolicyReader {
    /** Gson's position text: {@code ... at line 3 column 7 path $.allow_rules[0]}. */
    private static final Pattern POSITION = Pattern.compile(" at line (\\d+) column (\\d+)(?: path \\S*)?");

    private final JsonReader in;

    private PolicyReader(String text) {
        in = new JsonReader(new StringReader(text));
        in.setStrictness(Strictness.STRICT);
    }

    static AuthorizationPolicy read(String text) {
        if (text.isBlank()) {
            throw new PolicyException(1, 0, "the policy is empty: a JSON object with \"name\" and \"allow_rules\" is expected");
        }
        PolicyReader reader = new PolicyReader(text);
        try {
            return reader.policy();
        } catch (MalformedJsonException | EOFException e) {
            throw reader.syntaxError(e.getMessage());
        } catch (IllegalStateException e) {   // a value of another JSON type than peeked: should not happen, say where anyway
            throw reader.syntaxError(e.getMessage());
        } catch (IOException e) {
            throw new PolicyException(0, 0, "cannot read the policy: " + e.getMessage());
        }
    }

    private AuthorizationPolicy policy() throws IOException {
        in.peek();   // past leading white space, so that the position is the policy's own
        int[] start = position();
        expect(JsonToken.BEGIN_OBJECT, "a policy is a JSON object");
        in.beginObject();
        String name = null;
        List<AuthorizationPolicy.Rule> deny = List.of();
        List<AuthorizationPolicy.Rule> allow = null;
        Set<String> seen = new HashSet<>();
        while (in.hasNext()) {
            String field = field(seen);
            switch (field) {
                case "name" -> name = string("\"name\" is a string");
                case "deny_rules" -> deny = rules("deny_rules");
                case "allow_rules" -> allow = rules("allow_rules");
                default -> throw unknown(field, "name, deny_rules, allow_rules");
            }
        }
        in.endObject();
        boolean more;
        try {
            more = in.peek() != JsonToken.END_DOCUMENT;
        } catch (MalformedJsonException e) {   // strict Gson refuses a second value outright
            more = true;
        }
        if (more) {
            throw error("more after the policy's closing brace");
        }
        if (name == null || name.isEmpty()) {
            throw new PolicyException(start[0], start[1], "\"name\" is absent or empty");
        }
        if (allow == null || allow.isEmpty()) {
            throw new PolicyException(start[0], start[1], "\"allow_rules\" is absent or empty: a policy allows something");
        }
        return new AuthorizationPolicy(name, deny, allow);
    }

    private List<AuthorizationPolicy.Rule> rules(String list) throws IOException {
        expect(JsonToken.BEGIN_ARRAY, "\"" + list + "\" is a list of rules");
        in.beginArray();
        List<AuthorizationPolicy.Rule> rules = new ArrayList<>();
        Set<String> names = new HashSet<>();
        while (in.hasNext()) {
            int[] at = position();
            AuthorizationPolicy.Rule rule = rule(list);
            if (!names.add(rule.name())) {
                throw new PolicyException(at[0], at[1], "two rules named \"" + rule.name() + "\" in \"" + list
                        + "\": a rule's name says which rule decided a call, so it is unique in its list");
            }
            rules.add(rule);
        }
        in.endArray();
        return List.copyOf(rules);
    }

    private AuthorizationPolicy.Rule rule(String list) throws IOException {
        int[] start = position();
        expect(JsonToken.BEGIN_OBJECT, "a rule of \"" + list + "\" is a JSON object");
        in.beginObject();
        String name = null;
        List<String> principals = List.of();
        List<String> paths = List.of();
        Set<String> seen = new HashSet<>();
        while (in.hasNext()) {
            String field = field(seen);
            switch (field) {
                case "name" -> name = string("a rule's \"name\" is a string");
                case "source" -> principals = source();
                case "request" -> paths = request();
                default -> throw unknown(field, "name, source, request");
            }
        }
        in.endObject();
        if (name == null || name.isEmpty()) {
            throw new PolicyException(start[0], start[1], "a rule of \"" + list + "\" has no \"name\" (or an empty one)");
        }
        return new AuthorizationPolicy.Rule(name, principals, paths);
    }

    private List<String> source() throws IOException {
        expect(JsonToken.BEGIN_OBJECT, "\"source\" is a JSON object");
        in.beginObject();
        List<String> principals = List.of();
        Set<String> seen = new HashSet<>();
        while (in.hasNext()) {
            String field = field(seen);
            if (!field.equals("principals")) {
                throw unknown(field, "principals");
            }
            principals = strings("\"principals\" is a list of strings");
        }
        in.endObject();
        return principals;
    }

    private List<String> request() throws IOException {
        expect(JsonToken.BEGIN_OBJECT, "\"request\" is a JSON object");
        in.beginObject();
        List<String> paths = List.of();
        Set<String> seen = new HashSet<>();
        while (in.hasNext()) {
            int[] at = position();
            String field = field(seen);
            switch (field) {
                case "paths" -> paths = strings("\"paths\" is a list of strings");
                case "headers" -> throw new PolicyException(at[0], at[1], "\"request.headers\" is not supported: "
                        + "Switchboard calls carry no HTTP headers on every protocol (tcp and local have none); "
                        + "match on \"paths\" and \"source.principals\"");
                default -> throw unknown(field, "paths, headers");
            }
        }
        in.endObject();
        return paths;
    }

    private String field(Set<String> seen) throws IOException {
        String field = in.nextName();
        if (!seen.add(field)) {
            throw error("\"" + field + "\" appears twice in one object");
        }
        return field;
    }

    private String string(String what) throws IOException {
        expect(JsonToken.STRING, what);
        return in.nextString();
    }

    private List<String> strings(String what) throws IOException {
        expect(JsonToken.BEGIN_ARRAY, what);
        in.beginArray();
        List<String> out = new ArrayList<>();
        while (in.hasNext()) {
            expect(JsonToken.STRING, what);
            out.add(in.nextString());
        }
        in.endArray();
        return List.copyOf(out);
    }

    private void expect(JsonToken token, String what) throws IOException {
        JsonToken found = in.peek();
        if (found != token) {
            throw error(what + ", not " + describe(found));
        }
    }

    private static String describe(JsonToken token) {
        return switch (token) {
            case BEGIN_OBJECT -> "an object";
            case BEGIN_ARRAY -> "a list";
            case STRING -> "a string";
            case NUMBER -> "a number";
            case BOOLEAN -> "a boolean";
            case NULL -> "null";
            case END_DOCUMENT -> "the end of the file";
            default -> token.name().toLowerCase(java.util.Locale.ROOT);
        };
    }

    private PolicyException unknown(String field, String known) {
        return error("unknown field \"" + field + "\" (known here: " + known + "); a policy with a field this "
                + "server does not know is refused rather than half applied");
    }

    private PolicyException error(String reason) {
        int[] at = position();
        return new PolicyException(at[0], at[1], reason);
    }

    /** Gson's own messages name the position; keep the reason and the position, drop its troubleshooting link. */
    private PolicyException syntaxError(String message) {
        String first = message == null ? "malformed JSON" : message.lines().findFirst().orElse("malformed JSON");
        Matcher m = POSITION.matcher(first);
        if (m.find()) {
            String why = first.substring(0, m.start());
            if (why.startsWith("Use JsonReader.setStrictness")) {   // Gson's advice, not the reason
                why = "not strict JSON (a comment, an unquoted name or value, single quotes?)";
            }
            return new PolicyException(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
                    "malformed JSON: " + why);
        }
        return error("malformed JSON: " + first);
    }

    /** The reader's line and column now, from its description (Gson keeps them private). */
    private int[] position() {
        Matcher m = POSITION.matcher(in.toString());
        return m.find() ? new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))} : new int[] {0, 0};
    }
}
