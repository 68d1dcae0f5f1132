package io.switchboard.codec.proto;

import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;

/**
 * Writes and reads the operation messages of one component as the messages of its typed
 * {@code .proto} ({@link ProtoSchemas#typed}): the request {@code op}, the response
 * {@code opResponse} and the declared fault {@code opFault}, each named by its schema element. The
 * interface compiler generates a subclass per component ({@code XxxProtoCodec}, no reflection per
 * call); a codec driven by the interface model serves interfaces read at run time. The descriptor
 * holds the instance in its codec slot: {@code descriptor.codec(ProtoCodec.class)}.
 *
 * <h2>Parts</h2>
 * A message travels as one or more <em>parts</em>, each a complete protobuf encoding of the same
 * message type, whose protobuf merge in order (concatenate and parse, or {@code mergeFrom} each) is
 * the whole message. So a part ends only at a field boundary, and a field that is too large for
 * one part is cut where a merge appends: between the elements of a repeated field (the node table
 * included) or inside a packed array (each piece its own tag and length). A single string, bytes
 * value or unsplit nested message is never cut, so a part may exceed its target by that one value.
 *
 * <h2>What an implementation must do</h2>
 * <ul>
 * <li>{@link #writer}: run a size pass first (every length a nested message needs, node numbering
 *     of linked values), refusing there, before any byte is produced, what cannot be sent: more
 *     linked nodes than {@code maxNodes} ({@link WireFormatException#NODE_LIMIT}), lists nested
 *     deeper than {@link io.switchboard.idl.runtime.HeterogeneousList#MAX_DEPTH}
 *     ({@link WireFormatException#DEPTH_LIMIT}), a null required value, a value out of its schema
 *     type's range ({@link WireFormatException#MALFORMED}, naming the field).</li>
 * <li>{@link Writer#writePart}: the first call always writes a part, possibly empty (an empty
 *     message is one empty part); given a target of at least {@link Writer#size()} it writes the
 *     whole message as one part, and that part is byte for byte what protobuf-java's
 *     {@code toByteArray()} gives for the same message (fields in number order, repeated numbers
 *     packed, proto3 defaults of implicit fields not written, the node table in number order).
 *     Packed arrays are written in bulk, never element by element through a boxed value.</li>
 * <li>{@link Reader}: merge parts as protobuf does (a repeated field appends, a later scalar
 *     replaces, a nested message merges), accept either encoding of a repeated number (packed or
 *     not) and skip unknown fields; refuse, with a {@link WireFormatException} whose
 *     {@link WireFormatException#field() field} names the field as {@code Type.field}
 *     ({@code Type[node n].field} inside the node table): a truncated or malformed field, an unset
 *     oneof in a heterogeneous list, a node number past the node table (checked in
 *     {@link Reader#finish}, where references are resolved, so a node may refer to a later one),
 *     more nodes than {@link MessageLimits#maxNodes()}, lists deeper than
 *     {@link MessageLimits#maxListDepth()}, strings over {@link MessageLimits#maxStringBytes()}, a
 *     value out of its schema type's range (a byte of 300), an n-d array whose shape does not
 *     match its values. The total of all parts is held to {@link MessageLimits#maxMessageBytes()}
 *     by {@link Reader#readPart}. Linked values are resolved without recursion: a list of 10^6
 *     nodes, with cycles and shared nodes, reads back with its shape.</li>
 * <li>Bounded memory: neither side copies the whole message besides the value itself; a writer
 *     reads its arrays in place for each part, a reader appends each part to the value it builds.</li>
 * </ul>
 *
 * <pre>{@code
 * ProtoCodec codec = descriptor.codec(ProtoCodec.class);
 * ProtoCodec.Writer w = codec.writer("echoDoubles", request, 1_000_000);
 * ProtoOutput out = new ProtoOutput(64 << 10);
 * do { out.reset(); w.writePart(out, ProtoCodec.PART_BYTES); send(out); } while (w.hasMore());
 *
 * ProtoCodec.Reader r = codec.reader("echoDoubles", limits, -1);
 * for (byte[] part : parts) { r.readPart(part, 0, part.length); }
 * EchoDoubles back = (EchoDoubles) r.finish();
 * }</pre>
 */
public abstract class ProtoCodec {
    /** The part size the gRPC protocol aims at: 1 MiB. */
    public static final int PART_BYTES = 1 << 20;

    /**
     * Starts writing {@code value}, a bean of the message named {@code message} (an operation's
     * request, response or fault element), running the size pass now.
     *
     * @throws WireFormatException when the value cannot be sent (see the class comment)
     * @throws IllegalArgumentException when this codec has no message of that name
     */
    public abstract Writer writer(String message, Object value, int maxNodes);

    /**
     * Starts reading a message named {@code message}.
     *
     * @param expectedBytes what the sender announced as {@link Writer#size()}, or -1: a hint an
     *                      implementation may size its arrays by, never beyond what the limits allow
     * @throws IllegalArgumentException when this codec has no message of that name
     */
    public abstract Reader reader(String message, MessageLimits limits, long expectedBytes);

    /** The whole message as one part: exactly protobuf's encoding of it. */
    public byte[] toBytes(String message, Object value, int maxNodes) {
        Writer w = writer(message, value, maxNodes);
        ProtoOutput out = new ProtoOutput((int) Math.min(Integer.MAX_VALUE - 16, w.size()));
        w.writePart(out, Integer.MAX_VALUE);
        if (w.hasMore()) {
            throw new IllegalStateException(message + " did not fit one part");
        }
        return out.toByteArray();
    }

    /** Reads a message sent as one part. */
    public Object fromBytes(String message, byte[] bytes, MessageLimits limits) {
        Reader r = reader(message, limits, bytes.length);
        r.readPart(bytes, 0, bytes.length);
        return r.finish();
    }

    /** Writes one message as parts; used by one thread. */
    public abstract static class Writer {
        /** The bytes of the whole message as one protobuf message (a part's own framing not counted). */
        public abstract long size();

        /**
         * Appends the next part to {@code out}: fields (or pieces of them) until the part holds
         * about {@code targetBytes}; see the class comment for where parts are cut.
         *
         * @throws IllegalStateException when every part was written already
         */
        public abstract void writePart(ProtoOutput out, int targetBytes);

        /** Whether another part follows; false after the last (and the first call always writes one). */
        public abstract boolean hasMore();
    }

    /**
     * Reads one message from its parts, in order; used by one thread. Implementations read a part
     * in {@link #merge} and report the field they are at with {@link #at}, so that a refusal from
     * {@link ProtoInput} (a truncated field, say) names it.
     */
    public abstract static class Reader {
        private final MessageLimits limits;
        private long total;
        /** The window of {@link #readPart(ProtoInput.Source, int)}, kept from part to part. */
        private byte[] window = new byte[0];
        /** The field being read, {@code Type.field}; null between fields. */
        private String field;

        protected Reader(MessageLimits limits) {
            this.limits = limits;
        }

        public final MessageLimits limits() {
            return limits;
        }

        /** Bytes of all parts read so far. */
        public final long bytesRead() {
            return total;
        }

        /**
         * Merges the part {@code buf[from..to)} into the message.
         *
         * @throws WireFormatException when it is malformed or over a limit; the message is then unusable
         */
        public final void readPart(byte[] buf, int from, int to) {
            total += to - from;
            if (total > limits.maxMessageBytes()) {
                throw new WireFormatException(WireFormatException.SIZE_LIMIT, "the message is over the limit of "
                        + limits.maxMessageBytes() + " bytes");
            }
            field = null;
            try {
                merge(new ProtoInput(buf, from, to, limits));
            } catch (WireFormatException e) {
                throw named(e);
            }
        }

        /**
         * Merges a part of {@code length} bytes that {@code source} holds (a transport's buffers),
         * reading them once, in order: packed numbers are copied from the source's buffers straight
         * into the value, the other fields pass through a small window array kept for the next part.
         *
         * @throws WireFormatException when it is malformed, shorter than {@code length}, or over a limit
         */
        public final void readPart(ProtoInput.Source source, int length) {
            total += length;
            if (total > limits.maxMessageBytes()) {
                throw new WireFormatException(WireFormatException.SIZE_LIMIT, "the message is over the limit of "
                        + limits.maxMessageBytes() + " bytes");
            }
            field = null;
            ProtoInput in = new ProtoInput(source, length, window, limits);
            try {
                merge(in);
            } catch (WireFormatException e) {
                throw named(e);
            } finally {
                window = in.window();
            }
        }

        /**
         * After the last part: resolves node numbers, checks what needs the whole message (an
         * n-d array's shape against its values, required values), and returns the bean.
         */
        public final Object finish() {
            field = null;
            try {
                return complete();
            } catch (WireFormatException e) {
                throw named(e);
            }
        }

        /** Reads one part's fields, calling {@link #at} before each field it reads. */
        protected abstract void merge(ProtoInput in);

        /** The work of {@link #finish()}. */
        protected abstract Object complete();

        /** Notes the field being read ({@code Type.field}), so that a refusal names it. */
        protected final void at(String fieldName) {
            this.field = fieldName;
        }

        private WireFormatException named(WireFormatException e) {
            return ProtoReadState.named(e, field);
        }
    }
}
