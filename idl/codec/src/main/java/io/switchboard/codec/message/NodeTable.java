package io.switchboard.codec.message;

import java.util.List;
import java.util.function.Supplier;

/**
 * The linked nodes one message reaches, numbered breadth first from it (the node table every
 * protocol's form of the message is built on): what {@link MessageChecks} collected while it
 * checked the message, handed to the encoder that writes the same message next, so that a list of
 * 10^6 nodes is collected once per send, not twice.
 *
 * <pre>{@code
 * NodeTable nodes = MessageChecks.of(descriptor).check(request, maxNodes);   // null: no linked nodes
 * ProtoCodec.Writer w = NodeTable.during(nodes, () -> codec.writer("echoList", request, maxNodes));
 * }</pre>
 *
 * An encoder asks for the table with {@link #checked} while {@link #during} runs it, on that thread
 * only; the table is no longer held anywhere once {@code during} returns.
 */
public record NodeTable(Object root, List<Object> nodes, IdentityIndex index) {
    private static final ThreadLocal<NodeTable> HANDED = new ThreadLocal<>();

    /** Runs {@code encoder} with {@code table} (null: none) handed to it through {@link #checked}. */
    public static <T> T during(NodeTable table, Supplier<T> encoder) {
        if (table == null) {
            return encoder.get();
        }
        NodeTable before = HANDED.get();
        HANDED.set(table);
        try {
            return encoder.get();
        } finally {
            if (before == null) {
                HANDED.remove();
            } else {
                HANDED.set(before);
            }
        }
    }

    /**
     * The table handed to this encoder for {@code root}, or null: none handed, or collected for
     * another message, or larger than {@code maxNodes} (then the encoder collects, and refuses, itself).
     */
    public static NodeTable checked(Object root, int maxNodes) {
        NodeTable t = HANDED.get();
        return t != null && t.root == root && t.nodes.size() <= maxNodes ? t : null;
    }
}
