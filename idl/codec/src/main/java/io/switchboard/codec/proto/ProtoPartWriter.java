package io.switchboard.codec.proto;

/**
 * The part loop of a generated message writer: the message's fields in number order, each
 * written whole ({@link #SINGLE}), element by element ({@link #ELEMENTS}: a repeated string, bytes
 * or message field, the node table) or in pieces ({@link #PACKED}: a packed array of fixed-width
 * numbers, each piece its own tag and length). A part ends once it holds {@code targetBytes}; a
 * field is cut only where a protobuf merge appends. A subclass runs the size pass in its
 * constructor and reports it with {@link #sized}.
 */
public abstract class ProtoPartWriter extends ProtoCodec.Writer {
    protected static final int SINGLE = 0;
    protected static final int ELEMENTS = 1;
    protected static final int PACKED = 2;

    private final int[] kinds;
    private final int[] widths;
    private long size = -1;
    private int field;
    private int index;
    private boolean started;
    private boolean done;
    private ProtoWriteState state;

    /** Per field in number order: its kind, and for a packed field the bytes of one value. */
    protected ProtoPartWriter(int[] kinds, int[] widths) {
        this.kinds = kinds;
        this.widths = widths;
    }

    /** The state of the writer's two passes, released (its arrays pooled) after the last part. */
    protected final ProtoWriteState state(ProtoWriteState w) {
        this.state = w;
        return w;
    }

    protected final void sized(long messageSize) {
        this.size = messageSize;
    }

    @Override
    public final long size() {
        return size;
    }

    /** The elements or values of a repeated field now. */
    protected abstract int count(int field);

    /** Writes field {@code field}: whole ({@code 0, 1}), elements {@code [from, to)}, or one packed piece of values {@code [from, to)}. */
    protected abstract void write(int field, ProtoOutput out, int from, int to);

    @Override
    public final void writePart(ProtoOutput out, int targetBytes) {
        if (done) {
            throw new IllegalStateException("every part of the message was written");
        }
        started = true;
        int start = out.size();
        for (; field < kinds.length; field++, index = 0) {
            int kind = kinds[field];
            if (kind == SINGLE) {
                if (out.size() - start >= targetBytes) {
                    return;
                }
                write(field, out, 0, 1);
                continue;
            }
            int n = count(field);
            while (index < n) {
                long written = out.size() - start;
                if (written >= targetBytes) {
                    return;
                }
                int m = 1;
                if (kind == PACKED) {
                    long room = (targetBytes - written - 16) / widths[field];
                    if (room < 1 && written > 0) {
                        return; // the next piece starts the next part
                    }
                    m = (int) Math.min(n - index, Math.max(room, 1));
                }
                write(field, out, index, index + m);
                index += m;
            }
        }
        done = true;
        if (state != null) {
            state.release();
        }
    }

    @Override
    public final boolean hasMore() {
        return !started || !done;
    }
}
