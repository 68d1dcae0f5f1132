package io.switchboard.codec.proto;

import io.switchboard.codec.message.IdentityIndex;
import io.switchboard.codec.message.NodeTable;
import io.switchboard.codec.message.SendChecks;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.idl.runtime.GraphHolder;
import io.switchboard.idl.runtime.HeterogeneousList;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

/**
 * What the two passes of writing one message share; generated codecs use it. The size pass
 * {@link #reserve reserves} a slot per nested message in the order it meets them and
 * {@link #sized fills} it; the write pass meets the same messages in the same order and takes
 * their lengths back with {@link #nextSize} (protobuf's cached sizes, without a field per bean).
 * It also numbers the linked nodes of the message (breadth first from the message, 1 for the
 * first, 0 for null) and counts how deeply heterogeneous lists nest.
 */
public final class ProtoWriteState {
    private static final int[] NONE = {};
    private final int maxNodes;
    /** Made at the first nested message: a message of scalars and packed arrays needs none. */
    private int[] sizes = NONE;
    private int count;
    private int cursor;
    private int depth;
    private IdentityIndex index;
    private List<Object> nodes = List.of();
    private int nextGuess;

    public ProtoWriteState(int maxNodes) {
        this.maxNodes = maxNodes;
    }

    /** Size pass: a slot for the length of the next nested message. */
    public int reserve() {
        if (count == sizes.length) {
            sizes = java.util.Arrays.copyOf(sizes, Math.max(16, count * 2));
        }
        return count++;
    }

    /** Size pass: fills a slot; returns the size. */
    public int sized(int slot, long size) {
        if (size > Integer.MAX_VALUE - 16) {
            throw new WireFormatException(WireFormatException.SIZE_LIMIT, "a nested message over 2 GiB");
        }
        sizes[slot] = (int) size;
        return (int) size;
    }

    /** Write pass: the length of the next nested message. */
    public int nextSize() {
        return sizes[cursor++];
    }

    /** Size pass: one list level deeper, refused past {@link HeterogeneousList#MAX_DEPTH}. */
    public void enterList(String field) {
        if (++depth > HeterogeneousList.MAX_DEPTH) {
            throw new WireFormatException(WireFormatException.DEPTH_LIMIT, field,
                    "lists nest deeper than " + HeterogeneousList.MAX_DEPTH);
        }
    }

    public void leaveList() {
        depth--;
    }

    /** Numbers the linked nodes {@code root} reaches, without recursion; the node table in order. */
    public List<Object> collectNodes(GraphHolder root) {
        NodeTable checked = NodeTable.checked(root, maxNodes);
        if (checked != null) {   // the checks before sending collected them a moment ago
            index = checked.index();
            nodes = checked.nodes();
            return nodes;
        }
        Scratch s = POOL.take();
        if (s == null) {
            s = new Scratch();
        }
        scratch = s;
        if (s.sizes.length > sizes.length) {
            System.arraycopy(sizes, 0, s.sizes, 0, count);
            sizes = s.sizes;
        }
        IdentityIndex idx = IdentityIndex.collect(root, maxNodes, s.nodes, s.index);
        index = idx;
        nodes = s.nodes;
        return nodes;
    }

    /**
     * The message is written: the node table's arrays go back to the pool, cleared, for the next
     * message (a writer calls it once, after its last part; {@link ProtoPartWriter} does). The
     * state is not used afterwards.
     */
    public void release() {
        Scratch s = scratch;
        scratch = null;
        if (s == null) {
            return;
        }
        index = null;
        nodes = List.of();
        s.index.clear();
        s.nodes.clear();
        if (sizes.length > s.sizes.length) {
            s.sizes = sizes;
        }
        if (s.index.capacity() <= MAX_POOLED && s.sizes.length <= MAX_POOLED) {
            POOL.give(s);
        }
    }

    /** Arrays kept between messages: up to 2^22 entries each (a table of 2 M nodes, 16 MB an array). */
    private static final int MAX_POOLED = 1 << 22;
    private static final ScratchPool<Scratch> POOL = new ScratchPool<>();
    private Scratch scratch;

    /** What a message's node table grows: reused by the next message through {@link #POOL}. */
    private static final class Scratch {
        final IdentityIndex index = new IdentityIndex();
        final ArrayList<Object> nodes = new ArrayList<>();
        int[] sizes = new int[16];
    }

    public List<Object> nodes() {
        return nodes;
    }

    /** The node number of a linked value: 0 for null, n for entry n - 1 of the node table. */
    public int number(Object node) {
        if (node == null) {
            return 0;
        }
        int i;
        if (nextGuess < nodes.size() && nodes.get(nextGuess) == node) {
            i = nextGuess; // a list's next node: no hash lookup
        } else {
            i = index == null ? -1 : index.indexOf(node);
        }
        if (i < 0) {
            throw new IllegalStateException("linked node " + node.getClass().getSimpleName()
                    + " is not in the message's node table");
        }
        nextGuess = i + 1;
        return i + 1;
    }

    // sizes of fields, tag included

    public static int tagSize(int field) {
        return ProtoOutput.varint32Size(field << 3);
    }

    public static int int32Size(int field, int v) {
        return tagSize(field) + (v < 0 ? 10 : ProtoOutput.varint32Size(v));
    }

    public static int int64Size(int field, long v) {
        return tagSize(field) + ProtoOutput.varint64Size(v);
    }

    public static int uint32Size(int field, int v) {
        return tagSize(field) + ProtoOutput.varint32Size(v);
    }

    /** A length-delimited field (message, string, bytes, packed array) whose body has {@code length} bytes. */
    public static long delimitedSize(int field, long length) {
        return tagSize(field) + ProtoOutput.varint64Size(length) + length;
    }

    /** A string field; refused, naming {@code name}, when {@code xs:string} cannot hold it (every protocol carries the same values). */
    public static long stringSize(int field, String v, String name) {
        SendChecks.string(v, name);
        return delimitedSize(field, utf8Length(v));
    }

    /** The UTF-8 length of a string, without encoding it. */
    public static int utf8Length(String s) {
        int n = s.length();
        long bytes = n;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x80) {
                if (c < 0x800) {
                    bytes += 1;
                } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    bytes += 2; // four bytes for the pair of two chars
                    i++;
                } else {
                    bytes += 2; // a lone surrogate is refused by stringProblem before this
                }
            }
        }
        if (bytes > Integer.MAX_VALUE - 16) {
            throw new WireFormatException(WireFormatException.SIZE_LIMIT, "a string over 2 GiB");
        }
        return (int) bytes;
    }

    /** The body of a DateTime message; refused, naming {@code name}, when {@code xs:dateTime} cannot say it. */
    public static int dateTimeBodySize(OffsetDateTime v, String name) {
        SendChecks.dateTime(v, name);
        long seconds = v.toEpochSecond();
        int nanos = v.getNano();
        int offset = v.getOffset().getTotalSeconds();
        return (seconds != 0 ? int64Size(1, seconds) : 0) + (nanos != 0 ? int32Size(2, nanos) : 0)
                + (offset != 0 ? int32Size(3, offset) : 0);
    }
}
