package io.switchboard.idl;

import java.util.Objects;
import java.util.Optional;

/**
 * One operation of an interface: a request element {@code op}, a response element
 * {@code opResponse} (absent for a one-way operation) and an optional declared fault
 * {@code opFault}. {@code idempotent} comes from the schema's {@code sb:operation} mark and allows
 * the failsafe to repeat the call on another protocol.
 *
 * <p>{@code byReference} ({@code <sb:operation name="op" byReference="true"/>}) says that the
 * operation does not need value semantics: an in-process call may hand the caller's request
 * objects to the component and the component's response objects to the caller, shared, instead of
 * copying them. Remote protocols copy by nature and ignore it.
 */
public record OperationModel(
        String name,
        ComplexTypeModel request,
        ComplexTypeModel response,
        ComplexTypeModel fault,
        boolean idempotent,
        boolean byReference) {

    public OperationModel {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(request, "request");
    }

    /** An operation with value semantics (the form before {@code byReference} existed). */
    public OperationModel(String name, ComplexTypeModel request, ComplexTypeModel response, ComplexTypeModel fault,
                          boolean idempotent) {
        this(name, request, response, fault, idempotent, false);
    }

    public boolean oneWay() {
        return response == null;
    }

    public Optional<ComplexTypeModel> declaredFault() {
        return Optional.ofNullable(fault);
    }
}
