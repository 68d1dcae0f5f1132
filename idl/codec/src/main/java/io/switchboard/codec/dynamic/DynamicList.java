package io.switchboard.codec.dynamic;

import io.switchboard.idl.FieldModel;
import io.switchboard.idl.runtime.HeterogeneousList;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.List;
import java.util.RandomAccess;

/**
 * The value of a heterogeneous list type (an {@code xs:choice} list) of an interface read at run
 * time: a modifiable {@code List<Object>} that knows its list type, so that each element says by
 * itself which alternative it is. Elements take the generated beans' Java types: {@code Double},
 * {@code Long}, {@code Integer}, {@code Float}, {@code Short}, {@code Byte}, {@code Boolean},
 * {@code String} and {@code byte[]} for scalar alternatives, a {@link DynamicRecord} of the
 * alternative's type for a struct or n-d array, a {@code DynamicList} of the alternative's type
 * for a nested list. The schema reader gives every alternative a type of its own, so (Java class,
 * record or list type) never fits two alternatives; {@link #alternative(int)} names the one an
 * element is. Adding a null or a value that fits no alternative is refused at once, naming the
 * index and the alternatives.
 *
 * <pre>{@code
 * DynamicType mixed = dynamic.type("Mixed");
 * DynamicList inner = mixed.newList("x", 2.5);
 * DynamicList outer = mixed.newList(1.0, 7L, point, inner, mixed.newList());   // nested and empty lists
 * outer.alternative(3);                                                       // "list"
 * stub.call("echoMixed", Map.of("list", outer));
 * }</pre>
 *
 * <p>Lists nest by value at most {@link HeterogeneousList#MAX_DEPTH} deep; a deeper list (or one
 * that holds itself) is refused when it is written, as for generated lists.
 */
public final class DynamicList extends AbstractList<Object> implements HeterogeneousList, RandomAccess {
    final DynamicType type;
    private final ArrayList<Object> items;

    DynamicList(DynamicType type, int capacity) {
        this.type = type;
        this.items = new ArrayList<>(capacity);
    }

    /** The heterogeneous list type this list is a value of. */
    public DynamicType type() {
        return type;
    }

    /** The name of the alternative (the choice's element name) that the element at {@code index} is. */
    public String alternative(int index) {
        return type.fields[type.alternativeOf(items.get(index))].name();
    }

    @Override
    public Object get(int index) {
        return items.get(index);
    }

    @Override
    public int size() {
        return items.size();
    }

    @Override
    public Object set(int index, Object element) {
        return items.set(index, check(index, element));
    }

    @Override
    public void add(int index, Object element) {
        items.add(index, check(index, element));
        modCount++;
    }

    @Override
    public Object remove(int index) {
        modCount++;
        return items.remove(index);
    }

    /** The elements (this list itself). */
    @Override
    public List<Object> getItems() {
        return this;
    }

    /** One entry per alternative: {@code DynamicRecord} and {@code DynamicList} stand for all struct and list types. */
    @Override
    public List<Class<?>> alternativeClasses() {
        List<Class<?>> classes = new ArrayList<>();
        for (int i = 0; i < type.fields.length; i++) {
            classes.add(alternativeClass(type, i));
        }
        return classes;
    }

    @Override
    public String typeName() {
        return type.name();
    }

    /** Why this list cannot travel, or null: elements are checked when they are added, so never a bad element. */
    @Override
    public String problem() {
        return null;
    }

    private Object check(int index, Object element) {
        if (element == null) {
            throw new IllegalArgumentException("element " + index + " of heterogeneous list " + type.name()
                    + " is null; such lists hold no nulls");
        }
        if (type.alternativeOf(element) < 0) {
            throw new IllegalArgumentException("element " + index + " of heterogeneous list " + type.name() + " is a "
                    + DynamicRecord.describe(element) + ", which none of its alternatives allows; they are "
                    + alternativesText(type));
        }
        return element;
    }

    static Class<?> alternativeClass(DynamicType list, int i) {
        DynamicType target = list.targets[i];
        if (target == null) {
            return DynamicRecord.scalarClass(list.fields[i].scalar());
        }
        return target.model.heterogeneousList() ? DynamicList.class : DynamicRecord.class;
    }

    /** The alternatives as a reader needs them: {@code number (Double), point (DynamicRecord of Point), ...}. */
    static String alternativesText(DynamicType list) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < list.fields.length; i++) {
            FieldModel f = list.fields[i];
            DynamicType target = list.targets[i];
            s.append(i == 0 ? "" : ", ").append(f.name()).append(" (")
                    .append(target == null ? alternativeClass(list, i).getSimpleName()
                            : alternativeClass(list, i).getSimpleName() + " of " + target.name())
                    .append(')');
        }
        return s.toString();
    }
}
