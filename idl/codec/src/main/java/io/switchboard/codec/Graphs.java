package io.switchboard.codec;

import io.switchboard.idl.runtime.GraphMessage;
import io.switchboard.idl.runtime.GraphHolder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;

/**
 * Flattens the linked structures of a message into a node table, iteratively: the depth of a list
 * never touches the stack, and cycles and shared nodes keep their shape.
 *
 * <p>Node ids are not stored in user objects: while a message is written, {@link #idOf} answers
 * from a table bound to the writing thread, so the same nodes can be sent by concurrent calls.
 *
 * <pre>{@code
 * try (Graphs.Scope scope = Graphs.flatten(message)) {
 *     marshaller.marshal(message, writer);
 * }
 * }</pre>
 */
public final class Graphs {
    private static final ThreadLocal<IdentityHashMap<Object, String>> IDS = new ThreadLocal<>();

    private Graphs() {
    }

    /** Collects every node reachable from {@code message}, in breadth-first order. */
    public static List<Object> collect(GraphHolder message, int maxNodes) {
        IdentityHashMap<Object, Boolean> seen = new IdentityHashMap<>();
        List<Object> nodes = new ArrayList<>();
        ArrayDeque<Object> work = new ArrayDeque<>();
        java.util.function.Consumer<Object> enqueue = node -> {
            if (seen.put(node, Boolean.TRUE) == null) {
                if (nodes.size() >= maxNodes) {
                    throw new GraphLimitException("message holds more than " + maxNodes + " linked nodes");
                }
                nodes.add(node);
                work.add(node);
            }
        };
        message.switchboardVisitReferences(enqueue);
        while (!work.isEmpty()) {
            Object node = work.poll();
            if (node instanceof GraphHolder h) {
                h.switchboardVisitReferences(enqueue);
            }
        }
        return nodes;
    }

    /**
     * Fills the message's node table and binds node ids to this thread until the scope closes.
     */
    public static Scope flatten(GraphMessage message, int maxNodes) {
        List<Object> nodes = collect(message, maxNodes);
        IdentityHashMap<Object, String> ids = new IdentityHashMap<>(nodes.size() * 2);
        for (int i = 0; i < nodes.size(); i++) {
            ids.put(nodes.get(i), Integer.toString(i));
        }
        message.switchboardGraph(nodes);
        IdentityHashMap<Object, String> previous = IDS.get();
        IDS.set(ids);
        return () -> {
            message.switchboardGraph(null);
            if (previous == null) {
                IDS.remove();
            } else {
                IDS.set(previous);
            }
        };
    }

    /**
     * The wire id of a node while its message is written on this thread; generated classes call
     * it from their JAXB id property.
     */
    public static String idOf(Object node) {
        IdentityHashMap<Object, String> ids = IDS.get();
        String id = ids == null ? null : ids.get(node);
        if (id == null) {
            throw new IllegalStateException("linked node " + node.getClass().getSimpleName()
                    + " is written outside a flattened message (Graphs.flatten)");
        }
        return "n" + id;
    }

    /** Ends a flattening: unbinds ids and clears the node table. */
    public interface Scope extends AutoCloseable {
        @Override
        void close();
    }

    /** A message with more linked nodes than the configured limit. */
    public static final class GraphLimitException extends RuntimeException {
        public GraphLimitException(String message) {
            super(message);
        }
    }
}
