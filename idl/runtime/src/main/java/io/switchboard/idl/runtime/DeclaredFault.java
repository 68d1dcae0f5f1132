package io.switchboard.idl.runtime;

/**
 * Base of the exceptions generated for declared faults ({@code opFault} elements). The fault's
 * content travels as a JAXB bean, {@link #faultInfo()}; the exception class is what a caller
 * catches.
 *
 * <pre>{@code
 * try {
 *     calculator.divide(1, 0);
 * } catch (DivideFaultException e) {
 *     System.out.println(e.getFaultInfo().getReason());
 * }
 * }</pre>
 */
public abstract class DeclaredFault extends Exception {
    protected DeclaredFault(String message) {
        super(message);
    }

    /** The JAXB bean of the fault element. */
    public abstract Object faultInfo();
}
