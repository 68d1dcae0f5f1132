package io.switchboard.idl;

import java.util.Objects;
import java.util.Optional;

/**
 * One operation of an interface: a request element {@code op}, a response element
 * {@code opResponse} (absent for a one-way operation) and an optional declared fault
 * {@code opFault}. {@code idempotent} comes from the schema's {@code sb:operation} mark and allows
 * the failsafe to repeat the call on another protocol.
 */
public record OperationModel(
        String name,
        ComplexTypeModel request,
        ComplexTypeModel response,
        ComplexTypeModel fault,
        boolean idempotent) {

    public OperationModel {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(request, "request");
    }

    public boolean oneWay() {
        return response == null;
    }

    public Optional<ComplexTypeModel> declaredFault() {
        return Optional.ofNullable(fault);
    }
}
