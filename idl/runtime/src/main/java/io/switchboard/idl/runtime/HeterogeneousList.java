package io.switchboard.idl.runtime;

import java.util.List;

/**
 * Implemented by the generated class of a heterogeneous list type (a named complex type whose
 * content is one {@code <xs:choice minOccurs="0" maxOccurs="unbounded">}): a list whose elements
 * are each one of the choice's alternatives, other lists of a list type included.
 *
 * <pre>{@code
 * Mixed inner = Mixed.of("x", 2.5);
 * Mixed outer = Mixed.of(1.0, "text", point, inner, Mixed.of());   // nested and empty lists
 * for (Object element : outer.getItems()) { ... }                   // Double, String, Point, Mixed
 * }</pre>
 *
 * <p>Elements are never null; lists nest at most {@link #MAX_DEPTH} deep (the outermost list is
 * depth 1). Every protocol refuses a deeper or null-holding list by name, on writing and on
 * reading, so hostile input cannot make a decoder recurse without bound.
 */
public interface HeterogeneousList {
    /** How deeply heterogeneous lists may nest in one message, on every protocol. */
    int MAX_DEPTH = 64;

    /** The elements, in order; never null. */
    List<Object> getItems();

    /** The Java classes of the alternatives, in schema order. */
    List<Class<?>> alternativeClasses();

    /** The list type's name, for messages: the generated class's simple name, or the schema type's. */
    default String typeName() {
        return getClass().getSimpleName();
    }

    /** Why this list cannot travel, or null when it can: a null element, or one of a class no alternative has. */
    default String problem() {
        List<Object> items = getItems();
        List<Class<?>> allowed = alternativeClasses();
        for (int i = 0; i < items.size(); i++) {
            Object e = items.get(i);
            if (e == null) {
                return "element " + i + " of heterogeneous list " + typeName()
                        + " is null; such lists hold no nulls";
            }
            if (!allowed.contains(e.getClass())) {
                return "element " + i + " of heterogeneous list " + typeName() + " is a "
                        + e.getClass().getName() + ", which none of its alternatives allows";
            }
        }
        return null;
    }
}
