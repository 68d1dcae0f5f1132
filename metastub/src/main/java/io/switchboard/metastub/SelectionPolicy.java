package io.switchboard.metastub;

import io.switchboard.idl.runtime.OperationDescriptor;
import java.util.List;

/**
 * Chooses the protocol of one call among the candidates (the protocols client and server share,
 * in the client's order). Implementations are small, stateless or thread-safe, and fast: they run
 * on every call.
 */
public interface SelectionPolicy {
    /** The name that selects this policy in configuration: {@code first-common}, {@code fixed:grpc}, ... */
    String name();

    /** The chosen protocol, one of {@code candidates}. */
    String select(OperationDescriptor operation, Object request, List<String> candidates);
}
