package io.switchboard.server;

import io.switchboard.codec.dynamic.DynamicFault;
import io.switchboard.codec.dynamic.DynamicRecord;

/**
 * The implementation of a component served without generated code ({@link DynamicSkeleton}): one
 * method for every operation, the request as a {@link DynamicRecord} of its message element.
 *
 * <p>It answers what {@code DynamicStub.call} answers a caller: the response's only field (a
 * {@code double[]}, a {@code DynamicRecord} of the field's type, a {@code List}, ...), or the
 * whole response as a {@link DynamicRecord} of {@code opResponse} or a {@code Map} of its fields
 * (nested maps become records), or null when the response has no fields or none set. A one-way
 * operation answers null. A declared fault is a {@link DynamicFault} whose record is of the
 * operation's {@code opFault}; any other exception, or an answer of the wrong type or shape,
 * fails that call as an exception from generated code does.
 *
 * <pre>{@code
 * DynamicHandler echo = (operation, request) -> switch (operation) {
 *     case "echoDoubles" -> request.get("values");                 // the response's only field
 *     case "divide" -> {
 *         long divisor = (Long) request.get("divisor");
 *         if (divisor == 0) {
 *             throw new DynamicFault("divide", iface.message("divideFault").newRecord(
 *                     Map.of("reason", "division by zero", "dividend", request.get("dividend"))));
 *         }
 *         yield Map.of("quotient", (Long) request.get("dividend") / divisor, "remainder", 0L);
 *     }
 *     default -> null;
 * };
 * }</pre>
 */
@FunctionalInterface
public interface DynamicHandler {
    /**
     * Runs {@code operation} on {@code request}.
     *
     * @throws DynamicFault the operation's declared fault, sent back as such
     */
    Object handle(String operation, DynamicRecord request) throws DynamicFault;
}
