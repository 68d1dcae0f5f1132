package io.switchboard.idl;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A complex type: a named {@code xs:complexType}, or the anonymous type of an operation's
 * request, response or fault element (then {@code name} is the element's name).
 *
 * <p>{@code recursive} is true when the type can reach itself through its fields: its instances
 * form linked structures and are encoded as a flat node table.
 *
 * <p>{@code ndArray} is true for a type marked {@code <sb:ndarray/>} in its appinfo: a
 * multi-dimensional array of numbers, held as a {@code shape} (an {@code xs:int} per dimension)
 * and its {@code values} in row-major order, packed contiguously. See {@link SchemaReader}.
 *
 * <p>{@code heterogeneousList} is true for a type whose content is one
 * {@code <xs:choice minOccurs="0" maxOccurs="unbounded">}: a list whose elements may each be of any
 * of the choice's element types, nested lists included. Then {@code fields} are the choice's
 * alternatives (each single and required), not fields of a bean.
 */
public record ComplexTypeModel(String name, boolean element, List<FieldModel> fields, boolean recursive,
                               boolean ndArray, boolean heterogeneousList) {

    public ComplexTypeModel {
        Objects.requireNonNull(name, "name");
        fields = List.copyOf(fields);
    }

    /** A type that is not an n-d array (the form before n-d arrays existed). */
    public ComplexTypeModel(String name, boolean element, List<FieldModel> fields, boolean recursive) {
        this(name, element, fields, recursive, false, false);
    }

    /** A type that is not a heterogeneous list. */
    public ComplexTypeModel(String name, boolean element, List<FieldModel> fields, boolean recursive,
                            boolean ndArray) {
        this(name, element, fields, recursive, ndArray, false);
    }

    /** The element type of an n-d array: the scalar of its {@code values} field; null for other types. */
    public ScalarType ndArrayElement() {
        return ndArray ? fields.get(1).scalar() : null;
    }

    public Optional<FieldModel> field(String fieldName) {
        return fields.stream().filter(f -> f.name().equals(fieldName)).findFirst();
    }
}
