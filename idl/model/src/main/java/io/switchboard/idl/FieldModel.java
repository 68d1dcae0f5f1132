package io.switchboard.idl;

import java.util.Objects;

/**
 * One element of a complex type's sequence: a scalar or a reference to a complex type, optional
 * or required, single or repeated.
 *
 * <p>{@code graphReference} is true when the field's type is part of a recursive group of types
 * (a linked structure). Such values travel by reference in a flat node table, never nested, so
 * that encoding depth never depends on the length of a list and cycles survive.
 */
public record FieldModel(
        String name,
        ScalarType scalar,
        String complexType,
        boolean optional,
        boolean repeated,
        boolean nillable,
        boolean graphReference) {

    public FieldModel {
        Objects.requireNonNull(name, "name");
        if ((scalar == null) == (complexType == null)) {
            throw new IllegalArgumentException("field " + name + " needs exactly one of scalar or complex type");
        }
    }

    public boolean isScalar() {
        return scalar != null;
    }

    /** A repeated numeric scalar: one packed primitive array ({@code double[]}, {@code int[]}, ...). */
    public boolean isPackedArray() {
        return repeated && scalar != null && scalar.isNumeric();
    }

    FieldModel asGraphReference(boolean value) {
        return new FieldModel(name, scalar, complexType, optional, repeated, nillable, value);
    }
}
