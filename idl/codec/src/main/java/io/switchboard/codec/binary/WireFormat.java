package io.switchboard.codec.binary;

/**
 * The Switchboard packed binary format (version 1): what the bulk protocol puts on the wire and
 * what the generated {@code .proto} describes in its comments. Little-endian throughout.
 *
 * <pre>
 * message   := varint nodeCount, varint nodeType x nodeCount, nodeBody x nodeCount, fields of the root
 * nodeBody  := fields of the node's type, in schema order
 * field     := tag byte, payload            (tag NULL = absent or null, no payload)
 * BOOL/BYTE := 1 byte     SHORT := 2 bytes   INT/FLOAT := 4 bytes   LONG/DOUBLE := 8 bytes (IEEE raw bits)
 * STRING    := varint length, UTF-8 bytes    BYTES := varint length, bytes
 * DATE_TIME := int64 epoch seconds, int32 nanoseconds, int32 offset seconds
 * STRUCT    := fields of the (non-recursive) type, in schema order
 * REF       := varint index into the node table
 * LIST      := varint count, element x count (each element is a field: tag and payload)
 * CHOICES   := varint count, (varint alternative, value) x count: a heterogeneous list; the
 *              alternative numbers the choice's elements in schema order, the value is a field of
 *              that alternative's type (a nested list is CHOICES again; NULL is refused)
 * PACKED_x  := varint count, count raw values of x (no tags, no per-element framing)
 * varint    := unsigned LEB128, as in protobuf
 * </pre>
 *
 * <p>Node types number the schema's recursive types in document order, from 0. A response starts
 * with one more byte: {@link #RESPONSE} or {@link #DECLARED_FAULT} (then the message is the fault
 * element).
 *
 * <p>It is the format the {@code local} protocol copies messages through. The gRPC wire is
 * protobuf, by the typed {@code .proto} ({@link io.switchboard.codec.proto.ProtoCodec}).
 */
public final class WireFormat {
    public static final int NULL = 0;
    public static final int BOOL = 1;
    public static final int BYTE = 2;
    public static final int SHORT = 3;
    public static final int INT = 4;
    public static final int LONG = 5;
    public static final int FLOAT = 6;
    public static final int DOUBLE = 7;
    public static final int STRING = 8;
    public static final int BYTES = 9;
    public static final int DATE_TIME = 10;
    public static final int STRUCT = 11;
    public static final int REF = 12;
    public static final int LIST = 13;
    /** A heterogeneous list: count, then an alternative number and a value per element. */
    public static final int CHOICES = 14;
    /** A packed array of a fixed-size scalar: {@code PACKED | BOOL} ... {@code PACKED | DOUBLE}. */
    public static final int PACKED = 0x20;

    /** First byte of a response payload: the operation's response message follows. */
    public static final int RESPONSE = 0;
    /** First byte of a response payload: the operation's declared fault element follows. */
    public static final int DECLARED_FAULT = 1;

    /** The layout above as plain text lines, for the comments of the generated {@code .proto}. */
    public static final java.util.List<String> LAYOUT = java.util.List.of(
            "message   := varint nodeCount, varint nodeType x nodeCount, nodeBody x nodeCount, fields of the root",
            "nodeBody  := fields of the node's type, in schema order",
            "field     := tag byte, payload            (tag NULL = absent or null, no payload)",
            "BOOL/BYTE := 1 byte     SHORT := 2 bytes   INT/FLOAT := 4 bytes   LONG/DOUBLE := 8 bytes (IEEE raw bits)",
            "STRING    := varint length, UTF-8 bytes    BYTES := varint length, bytes",
            "DATE_TIME := int64 epoch seconds, int32 nanoseconds, int32 offset seconds",
            "STRUCT    := fields of the (non-recursive) type, in schema order",
            "REF       := varint index into the node table",
            "LIST      := varint count, element x count (each element is a field: tag and payload)",
            "CHOICES   := varint count, (varint alternative, value) x count: a heterogeneous list; alternative",
            "             numbers the choice's elements in schema order from 0, value is a field of that type",
            "             (a nested list is CHOICES again); NULL values are refused, nesting deeper than 64 too",
            "PACKED_x  := varint count, count raw values of x (no tags, no per-element framing)",
            "varint    := unsigned LEB128, as in protobuf; all fixed-size numbers are little-endian",
            "tags      := NULL=0 BOOL=1 BYTE=2 SHORT=3 INT=4 LONG=5 FLOAT=6 DOUBLE=7 STRING=8 BYTES=9",
            "             DATE_TIME=10 STRUCT=11 REF=12 LIST=13 CHOICES=14 PACKED_x=0x20|x (e.g. PACKED_DOUBLE=0x27)");

    private WireFormat() {
    }

    /** Package of a component's generated {@code .proto}: {@code switchboard.} and the lower-case name. */
    public static String protoPackage(String componentName) {
        return "switchboard." + componentName.toLowerCase(java.util.Locale.ROOT);
    }

    /** The full gRPC service name of a component, as its {@code .proto} declares it. */
    public static String grpcServiceName(String componentName) {
        return protoPackage(componentName) + "." + componentName;
    }

    /** A readable name for a tag, for error messages. */
    public static String tagName(int tag) {
        return switch (tag) {
            case NULL -> "NULL";
            case BOOL -> "BOOL";
            case BYTE -> "BYTE";
            case SHORT -> "SHORT";
            case INT -> "INT";
            case LONG -> "LONG";
            case FLOAT -> "FLOAT";
            case DOUBLE -> "DOUBLE";
            case STRING -> "STRING";
            case BYTES -> "BYTES";
            case DATE_TIME -> "DATE_TIME";
            case STRUCT -> "STRUCT";
            case REF -> "REF";
            case LIST -> "LIST";
            case CHOICES -> "CHOICES";
            default -> (tag & ~0x07) == PACKED && (tag & 0x07) != 0 ? "PACKED_" + tagName(tag & 0x07) : "unknown tag " + tag;
        };
    }
}
