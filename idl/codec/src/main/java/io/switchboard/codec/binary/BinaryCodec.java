package io.switchboard.codec.binary;

/**
 * Writes and reads the message beans of one component in the packed binary format
 * ({@link WireFormat}). The interface compiler generates a subclass per component
 * ({@code XxxBinaryCodec}) with straight-line getter and setter calls, so no reflection runs
 * per call; the descriptor holds the instance.
 *
 * <pre>{@code
 * BinaryCodec codec = EchoComponent.DESCRIPTOR.codec(BinaryCodec.class);
 * byte[] bytes = BinaryWriter.toBytes(codec, request, 2_000_000);
 * EchoDoubles back = BinaryReader.fromBytes(codec, bytes, BinaryLimits.unlimited(), EchoDoubles.class);
 * }</pre>
 */
public abstract class BinaryCodec {
    /** Writes a request, response or fault bean of this component, node table first. */
    public abstract void writeMessage(BinaryWriter out, Object message);

    /** Reads a message of the given bean class; the reader is positioned at the node table. */
    public abstract Object readMessage(BinaryReader in, Class<?> type);

    /**
     * Reads the message of the named element ({@code op}, {@code opResponse} or {@code opFault}).
     * Generated codecs tell their messages apart by class and ignore the name; a codec driven by
     * the interface model at run time (whose messages all share one class) goes by the name.
     */
    public Object readMessage(BinaryReader in, String element, Class<?> type) {
        return readMessage(in, type);
    }

    /** The node type (index of the recursive type) of a linked node; called by {@link BinaryWriter}. */
    public int nodeType(Object node) {
        throw new IllegalArgumentException("this interface has no linked types, got " + node.getClass().getName());
    }

    /** Writes the fields of one linked node; called by {@link BinaryWriter}. */
    public void writeNode(BinaryWriter out, Object node) {
        throw new IllegalArgumentException("this interface has no linked types");
    }

    /** A new, empty node of a node type, or null when the type is unknown; called by {@link BinaryReader}. */
    public Object newNode(int type) {
        return null;
    }

    /** Reads the fields of one linked node into it; called by {@link BinaryReader}. */
    public void readNode(BinaryReader in, Object node) {
        throw new IllegalArgumentException("this interface has no linked types");
    }

    /** Writes one value of a list or field; generated codecs pass method references. */
    @FunctionalInterface
    public interface ValueWriter<T> {
        void write(BinaryWriter out, T value);
    }

    /** Reads one value of a list or field, tag included; {@code field} names it in errors. */
    @FunctionalInterface
    public interface ValueReader<T> {
        T read(BinaryReader in, String field);
    }
}
