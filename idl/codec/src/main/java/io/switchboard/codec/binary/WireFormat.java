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
 * <p>Over gRPC a message travels as a stream of protobuf {@code Chunk}s ({@link #CHUNKS}). Each
 * chunk says where its data belongs, so that a receiver notices a chunk out of order, a gap, a
 * repeat or a truncated stream as such, instead of decoding shifted bytes; and the first chunk
 * announces the whole size, so that a receiver refuses an oversized message before reading it.
 *
 * <pre>
 * message Chunk { bytes data = 1; uint64 offset = 2; uint64 total = 3; }
 * offset := byte offset of this chunk's data in the message: 0 for the first, then the previous
 *           chunk's offset plus its data length (chunks are sent in order, no gaps, no overlaps)
 * total  := on the first chunk (offset 0): the message's length in bytes; on later chunks 0
 *           (absent) or the same value. The stream ends after exactly total bytes.
 * </pre>
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

    /** How a message is cut into gRPC {@code Chunk}s, as plain text lines for the generated {@code .proto}. */
    public static final java.util.List<String> CHUNKS = java.util.List.of(
            "message Chunk { bytes data = 1; uint64 offset = 2; uint64 total = 3; }",
            "data      := the next bytes of the message; chunks may be cut anywhere (Switchboard sends 1 MiB)",
            "offset    := byte offset of this chunk's data within the whole message: 0 for the first chunk,",
            "             then the previous chunk's offset plus its data length (in order, no gaps, no repeats)",
            "total     := on the first chunk: the length of the whole message in bytes; later chunks: 0 or the same",
            "a stream that ends before `total` bytes, a chunk at another offset or one past `total` ends the",
            "call with INVALID_ARGUMENT; a `total` over the server's message limit, a chunk over its chunk limit",
            "(4 MiB of data by default) or more than 1024 + total/1024 chunks ends it with RESOURCE_EXHAUSTED");

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
