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
 */
public record ComplexTypeModel(String name, boolean element, List<FieldModel> fields, boolean recursive) {

    public ComplexTypeModel {
        Objects.requireNonNull(name, "name");
        fields = List.copyOf(fields);
    }

    public Optional<FieldModel> field(String fieldName) {
        return fields.stream().filter(f -> f.name().equals(fieldName)).findFirst();
    }
}
