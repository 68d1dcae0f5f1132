package io.switchboard.codec.proto;

import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;

/**
 * What reading one message keeps between its parts; generated codecs use it. Linked nodes are
 * read into a flat table and references kept as numbers ({@link #ref}) until the whole message is
 * in, then {@link #resolve resolved} in one loop: no recursion, a reference may point forward, and
 * a number past the table is refused. It also counts how deeply heterogeneous lists nest.
 */
public final class ProtoReadState {
    private static final Object[] NO_OBJECTS = {};
    private static final int[] NO_INTS = {};
    private final MessageLimits limits;
    private final long expectedBytes;
    private int depth;
    private String field;
    // empty until a message has nodes or references: most messages have none
    private Object[] nodes = NO_OBJECTS;
    private int nodeCount;
    private Object[] holders = NO_OBJECTS;
    private int[] slots = NO_INTS;
    private int[] numbers = NO_INTS;
    private int refs;
    private Object[] requiredHolders = NO_OBJECTS;
    private int[] requiredSlots = NO_INTS;
    private int required;

    /** {@code expectedBytes}: the sender's announced size, or -1; only sizes arrays. */
    public ProtoReadState(MessageLimits limits, long expectedBytes) {
        this.limits = limits;
        this.expectedBytes = expectedBytes >= 0 && expectedBytes <= limits.maxMessageBytes() ? expectedBytes : -1;
    }

    public MessageLimits limits() {
        return limits;
    }

    /** Notes the field being read ({@code Type.field}), so that a refusal without a field names it. */
    public void at(String field) {
        this.field = field;
    }

    /** The refusal, naming the field being read when it names none. */
    public WireFormatException named(WireFormatException e) {
        return named(e, field);
    }

    /** {@code e} naming {@code field} when it names no field itself. */
    static WireFormatException named(WireFormatException e, String field) {
        if (e.field() != null || field == null) {
            return e;
        }
        WireFormatException n = new WireFormatException(e.reason(), field, e.getMessage());
        n.setStackTrace(e.getStackTrace());
        return n;
    }

    public void enterList(String field) {
        if (++depth > limits.maxListDepth()) {
            throw new WireFormatException(WireFormatException.DEPTH_LIMIT, field,
                    "lists nest deeper than " + limits.maxListDepth());
        }
    }

    public void leaveList() {
        depth--;
    }

    /** Adds a node to the table (node number = its index + 1), refusing more than the limit. */
    public void addNode(Object node) {
        if (nodeCount >= limits.maxNodes()) {
            throw new WireFormatException(WireFormatException.NODE_LIMIT,
                    "the message holds more than " + limits.maxNodes() + " linked nodes");
        }
        if (nodeCount == nodes.length) {
            if (nodeCount > 0) {
                adoptPooled();   // past the first 16: a message that grew them before may have left them
            }
            if (nodeCount == nodes.length) {
                nodes = Arrays.copyOf(nodes, Math.max(16, nodeCount * 2));
            }
        }
        nodes[nodeCount++] = node;
    }

    public int nodeCount() {
        return nodeCount;
    }

    /**
     * A reference from field {@code slot} of {@code holder} to node {@code number}, set when the
     * message is complete; 0 (null) sets nothing, so call it for non-zero numbers and for every
     * element of a repeated reference (where 0 is refused at resolution).
     */
    public void ref(Object holder, int slot, int number) {
        if (refs == numbers.length) {
            if (refs > 0) {
                adoptPooled();
            }
            if (refs == numbers.length) {
                int grown = Math.max(16, refs * 2);
                holders = Arrays.copyOf(holders, grown);
                slots = Arrays.copyOf(slots, grown);
                numbers = Arrays.copyOf(numbers, grown);
            }
        }
        holders[refs] = holder;
        slots[refs] = slot;
        numbers[refs++] = number;
    }

    /**
     * A singular reference set to null (node number 0) by a later occurrence of its field, as a
     * later scalar replaces an earlier: applied in order with the references, so that an earlier
     * occurrence's node does not win. Slots are not negative; this one is kept as its complement.
     */
    public void refNull(Object holder, int slot) {
        ref(holder, ~slot, 0);
    }

    /**
     * A reference field that must not be null: checked once references are resolved (a node's
     * reference may point to a later node), refused by the field's name when still unset.
     */
    public void required(Object holder, int slot) {
        if (required == requiredSlots.length) {
            requiredHolders = Arrays.copyOf(requiredHolders, Math.max(16, required * 2));
            requiredSlots = Arrays.copyOf(requiredSlots, Math.max(16, required * 2));
        }
        requiredHolders[required] = holder;
        requiredSlots[required++] = slot;
    }

    /** Sets every reference read, refusing numbers past the node table by the field's name. */
    public void resolve(Resolver resolver) {
        for (int i = 0; i < refs; i++) {
            int n = numbers[i];
            if (slots[i] < 0) {
                resolver.set(holders[i], ~slots[i], null);   // refNull: a singular reference, null again
                continue;
            }
            if (n <= 0 || n > nodeCount) {
                throw WireFormatException.malformed(resolver.field(slots[i]), "node number "
                        + Integer.toUnsignedString(n) + " is not in the node table of " + nodeCount + " nodes");
            }
            resolver.set(holders[i], slots[i], nodes[n - 1]);
        }
        release();
        for (int i = 0; i < required; i++) {
            if (!resolver.isSet(requiredHolders[i], requiredSlots[i])) {
                throw WireFormatException.malformed(resolver.field(requiredSlots[i]), "required and not nillable, but absent");
            }
        }
        requiredHolders = null;
    }

    /**
     * On the first growth of the node table or the reference fix-ups: takes the arrays a previous
     * message grew, those larger than these, copying what is in so far.
     */
    private void adoptPooled() {
        if (triedPool) {
            return;
        }
        triedPool = true;
        Scratch s = POOL.take();
        if (s == null) {
            return;
        }
        if (s.nodes().length > nodes.length) {
            System.arraycopy(nodes, 0, s.nodes(), 0, nodeCount);
            nodes = s.nodes();
        }
        if (s.numbers().length > numbers.length) {
            System.arraycopy(holders, 0, s.holders(), 0, refs);
            System.arraycopy(slots, 0, s.slots(), 0, refs);
            System.arraycopy(numbers, 0, s.numbers(), 0, refs);
            holders = s.holders();
            slots = s.slots();
            numbers = s.numbers();
        }
    }

    /** References are set: the arrays, cleared of every node and holder, go to the pool for the next message. */
    private void release() {
        Object[] n = nodes;
        Object[] h = holders;
        holders = null;
        nodes = null;
        if (n.length <= 16 && h.length <= 16 || n.length > MAX_POOLED || h.length > MAX_POOLED) {
            return; // a small message grew nothing worth keeping
        }
        Arrays.fill(n, 0, nodeCount, null);
        Arrays.fill(h, 0, refs, null);
        POOL.give(new Scratch(n, h, slots, numbers));
    }

    /** Arrays kept between messages: up to 2^22 entries each (a table of 4 M nodes). */
    private static final int MAX_POOLED = 1 << 22;
    private static final ScratchPool<Scratch> POOL = new ScratchPool<>();
    private boolean triedPool;

    /** A node table and reference fix-ups that a message grew, empty. */
    private record Scratch(Object[] nodes, Object[] holders, int[] slots, int[] numbers) {
    }

    /** Generated per codec: sets a reference field, identified by its slot, on its holder. */
    public interface Resolver {
        /**
         * Sets (or, for a list, appends) the reference; refuses a node of the wrong type by the
         * field's name. {@code node} is null only for a singular reference ({@link #refNull}).
         */
        void set(Object holder, int slot, Object node);

        /** {@code Type.field} of a slot, for refusals. */
        String field(int slot);

        /** Whether the reference of a slot is set on its holder (for {@link #required}); true unless a codec registers required references. */
        default boolean isSet(Object holder, int slot) {
            return true;
        }
    }

    /**
     * The capacity for a packed array that already holds {@code used} values and gets
     * {@code more}: for a field of the operation message ({@code presize}) that arrives in
     * pieces, on its first growth, what the announced size of the message can hold (so an honest
     * sender's large array is allocated once, exactly); otherwise doubling.
     */
    public int capacity(int length, int used, int more, int width, boolean presize) {
        long wanted = (long) used + more;
        if (wanted > Integer.MAX_VALUE - 16 || wanted * width > limits.maxMessageBytes()) {
            throw new WireFormatException(WireFormatException.SIZE_LIMIT, "a list of " + wanted + " values is over the"
                    + " limit of " + limits.maxMessageBytes() + " bytes");
        }
        if (length >= wanted) {
            return length;
        }
        if (presize && used == 0 && more >= 4096 && expectedBytes > 0 && expectedBytes / width >= wanted) {
            return (int) Math.min(Integer.MAX_VALUE - 16, expectedBytes / width);
        }
        return (int) Math.max(wanted, Math.min(Integer.MAX_VALUE - 16, (long) length * 2));
    }

    /** A DateTime message's body; {@code xs:dateTime}'s range and offsets are checked. */
    public static OffsetDateTime readDateTime(ProtoInput in, String field) {
        return readDateTime(in, null, field);
    }

    /**
     * A DateTime message's body merged into {@code previous} (an earlier occurrence of the same
     * singular field, or null), as protobuf merges a message field that occurs twice: a field
     * present in this occurrence replaces that of the earlier one. A field of the wrong wire type
     * is refused, as for every known field; {@code xs:dateTime}'s range and offsets are checked.
     */
    public static OffsetDateTime readDateTime(ProtoInput in, OffsetDateTime previous, String field) {
        long seconds = previous == null ? 0 : previous.toEpochSecond();
        int nanos = previous == null ? 0 : previous.getNano();
        int offset = previous == null ? 0 : previous.getOffset().getTotalSeconds();
        for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
            switch (tag >>> 3) {
                case 1 -> {
                    expect(tag, ProtoOutput.VARINT, field);
                    seconds = in.readVarint64();
                }
                case 2 -> {
                    expect(tag, ProtoOutput.VARINT, field);
                    nanos = in.readVarint32();
                }
                case 3 -> {
                    expect(tag, ProtoOutput.VARINT, field);
                    offset = in.readVarint32();
                }
                default -> in.skipField(tag);
            }
        }
        if (nanos < 0 || nanos > 999_999_999 || offset < -64800 || offset > 64800) {
            throw WireFormatException.malformed(field, "a date-time with nanos " + nanos + " and offset " + offset);
        }
        OffsetDateTime v;
        try {
            v = OffsetDateTime.ofInstant(Instant.ofEpochSecond(seconds, nanos), ZoneOffset.ofTotalSeconds(offset));
        } catch (DateTimeException e) {
            throw WireFormatException.malformed(field, "a date-time out of range: " + e.getMessage());
        }
        String problem = io.switchboard.idl.runtime.XsdValues.dateTimeProblem(v);
        if (problem != null) {
            throw WireFormatException.malformed(field, problem);
        }
        return v;
    }

    /** A string, refused (naming {@code field}) when {@code xs:string} cannot hold it: every protocol carries the same values. */
    public static String readString(ProtoInput in, String field) {
        String v = in.readString();
        String problem = io.switchboard.idl.runtime.XsdValues.stringProblem(v);
        if (problem != null) {
            throw WireFormatException.malformed(field, problem);
        }
        return v;
    }

    /** An int32 that must fit a schema byte. */
    public static byte toByte(int v, String field) {
        if (v < Byte.MIN_VALUE || v > Byte.MAX_VALUE) {
            throw WireFormatException.malformed(field, v + " is out of the range of a byte");
        }
        return (byte) v;
    }

    /** An int32 that must fit a schema short. */
    public static short toShort(int v, String field) {
        if (v < Short.MIN_VALUE || v > Short.MAX_VALUE) {
            throw WireFormatException.malformed(field, v + " is out of the range of a short");
        }
        return (short) v;
    }

    /** A field that must be a given wire type. */
    public static void expect(int tag, int wireType, String field) {
        if ((tag & 7) != wireType) {
            throw WireFormatException.malformed(field, "wire type " + (tag & 7) + " where " + wireType + " belongs");
        }
    }
}
