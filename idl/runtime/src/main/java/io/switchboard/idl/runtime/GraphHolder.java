package io.switchboard.idl.runtime;

import java.util.function.Consumer;

/**
 * Implemented by generated classes that hold references into a linked structure (instances of a
 * recursive type). Encoders use it to collect every node without recursion.
 */
public interface GraphHolder {
    /**
     * Passes each node of a recursive type that this object refers to directly (or through fields
     * of non-recursive types) to {@code out}. Does not follow the nodes themselves.
     */
    void switchboardVisitReferences(Consumer<Object> out);
}
