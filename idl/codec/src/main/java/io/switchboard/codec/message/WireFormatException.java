package io.switchboard.codec.message;

/**
 * A message that cannot be read or sent: malformed (truncated, wrong wire type, dangling
 * reference, a value no protocol may carry) or over a limit. {@link #reason()} is the short code a protocol reports
 * ({@code malformed}, {@code size-limit}, {@code node-limit}, {@code string-limit}, {@code depth-limit}, and
 * {@code chunk-limit} for more parts than a protocol accepts for one message: the code keeps the
 * name it had when parts were called chunks: callers may match on it, in gRPC's sb-refused trailer).
 */
public class WireFormatException extends RuntimeException {
    public static final String MALFORMED = "malformed";
    public static final String SIZE_LIMIT = "size-limit";
    public static final String NODE_LIMIT = "node-limit";
    public static final String STRING_LIMIT = "string-limit";
    /** More parts than allowed for one message; the code is the wire's, from when parts were called chunks. */
    public static final String CHUNK_LIMIT = "chunk-limit";
    /** Heterogeneous lists nested deeper than the limit. */
    public static final String DEPTH_LIMIT = "depth-limit";

    private final String reason;
    private final String field;

    public WireFormatException(String reason, String message) {
        this(reason, null, message);
    }

    /** A refusal that concerns one field; the message is prefixed with its name. */
    public WireFormatException(String reason, String field, String problem) {
        super(field == null ? problem : "field " + field + ": " + problem);
        this.reason = reason;
        this.field = field;
    }

    public static WireFormatException malformed(String message) {
        return new WireFormatException(MALFORMED, message);
    }

    /** A malformed value of {@code field} ({@code Type.field}, as generated codecs name fields). */
    public static WireFormatException malformed(String field, String problem) {
        return new WireFormatException(MALFORMED, field, problem);
    }

    public String reason() {
        return reason;
    }

    /**
     * The field at fault as {@code Type.field} (with {@code [node n]} for a field of a linked node,
     * counted from 0 in the node table), or null when the refusal concerns the whole message.
     */
    public String field() {
        return field;
    }

    /** The same refusal for the field of linked node {@code index}. */
    public WireFormatException inNode(int index) {
        if (field == null || field.contains("[node ")) {
            return this;
        }
        int dot = field.indexOf('.');
        String named = dot < 0 ? field + "[node " + index + "]" : field.substring(0, dot) + "[node " + index + "]"
                + field.substring(dot);
        String message = getMessage().startsWith("field " + field) ? getMessage().substring(("field " + field + ": ").length())
                : getMessage();
        WireFormatException e = new WireFormatException(reason, named, message);
        e.setStackTrace(getStackTrace());
        return e;
    }

    /** Whether the message was refused for a limit rather than for its form. */
    public boolean isLimit() {
        return !MALFORMED.equals(reason);
    }
}
