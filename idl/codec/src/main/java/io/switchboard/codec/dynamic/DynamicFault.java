package io.switchboard.codec.dynamic;

import io.switchboard.idl.runtime.DeclaredFault;

/**
 * The declared fault of an operation called without generated code: {@link #faultInfo()} is the
 * {@code opFault} element as a {@link DynamicRecord}.
 *
 * <pre>{@code
 * try {
 *     stub.call("divide", Map.of("dividend", 1L, "divisor", 0L));
 * } catch (DynamicFault f) {
 *     String reason = (String) f.faultInfo().get("reason");
 * }
 * }</pre>
 */
public final class DynamicFault extends DeclaredFault {
    private final String operation;
    private final DynamicRecord info;

    public DynamicFault(String operation, Object info) {
        super(operation + " raised its declared fault: " + info);
        this.operation = operation;
        this.info = (DynamicRecord) info;
    }

    public String operation() {
        return operation;
    }

    @Override
    public DynamicRecord faultInfo() {
        return info;
    }
}
