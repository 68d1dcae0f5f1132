package io.switchboard.idl;

import java.util.Arrays;
import java.util.Optional;

/**
 * The XML Schema simple types an interface may use, with their Java mapping and the size a value
 * takes in the binary encoding (used by size estimates; 0 means variable).
 */
public enum ScalarType {
    BOOLEAN("boolean", "boolean", "java.lang.Boolean", 1),
    BYTE("byte", "byte", "java.lang.Byte", 1),
    SHORT("short", "short", "java.lang.Short", 2),
    INT("int", "int", "java.lang.Integer", 4),
    LONG("long", "long", "java.lang.Long", 8),
    FLOAT("float", "float", "java.lang.Float", 4),
    DOUBLE("double", "double", "java.lang.Double", 8),
    STRING("string", null, "java.lang.String", 0),
    /** {@code xs:base64Binary}: raw bytes, {@code byte[]} in Java. */
    BYTES("base64Binary", null, "byte[]", 0),
    /** {@code xs:dateTime}: an instant with its zone offset, {@code java.time.OffsetDateTime}. */
    DATE_TIME("dateTime", null, "java.time.OffsetDateTime", 12);

    private final String xsdName;
    private final String primitive;
    private final String boxed;
    private final int fixedBytes;

    ScalarType(String xsdName, String primitive, String boxed, int fixedBytes) {
        this.xsdName = xsdName;
        this.primitive = primitive;
        this.boxed = boxed;
        this.fixedBytes = fixedBytes;
    }

    /** Local name in the XML Schema namespace, e.g. {@code double}. */
    public String xsdName() {
        return xsdName;
    }

    /** Java primitive name, or null for reference types. */
    public String primitive() {
        return primitive;
    }

    /** Java reference type used when the value may be absent. */
    public String boxed() {
        return boxed;
    }

    public boolean isPrimitive() {
        return primitive != null;
    }

    /** Whether a repeated value of this type is a packed numeric array (one primitive array). */
    public boolean isNumeric() {
        return isPrimitive() && this != BOOLEAN;
    }

    /** Bytes per value in the binary encoding, or 0 when the size varies. */
    public int fixedBytes() {
        return fixedBytes;
    }

    public static Optional<ScalarType> forXsdName(String localName) {
        return Arrays.stream(values()).filter(t -> t.xsdName.equals(localName)).findFirst();
    }
}
