package io.switchboard.registry.server;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.registry.wire.BindFault;
import io.switchboard.registry.wire.BindFaultException;
import io.switchboard.registry.wire.LookupLeanFault;
import io.switchboard.registry.wire.LookupLeanFaultException;
import io.switchboard.registry.wire.RebindFault;
import io.switchboard.registry.wire.RebindFaultException;
import io.switchboard.registry.wire.RenewFault;
import io.switchboard.registry.wire.RenewFaultException;
import io.switchboard.registry.wire.RenewWithStatsFault;
import io.switchboard.registry.wire.RenewWithStatsFaultException;
import io.switchboard.registry.wire.UnbindFault;
import io.switchboard.registry.wire.UnbindFaultException;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The declared fault of one registry write (or of {@code lookupLean}): a {@code code} a program acts on ({@value #UNAUTHORIZED},
 * {@value #INVALID}, {@value #ALREADY_BOUND}, {@value #UNAVAILABLE}) and a reason a person reads.
 * The schema gives each operation a fault type of its own with the same two members, and the
 * generated types share no supertype, so each operation's is named here once and built alike.
 *
 * <pre>{@code
 * throw RegistryFault.BIND.of(RegistryFault.UNAUTHORIZED, "the credential is not valid");
 * }</pre>
 *
 * @param <I> the fault's content, as the schema declares it
 * @param <X> the exception that carries it
 */
record RegistryFault<I, X extends DeclaredFault>(Supplier<I> content, BiConsumer<I, String> code,
                                                 BiConsumer<I, String> reason, Function<I, X> exception) {
    /** The write carries no credential, or one that is not valid. */
    static final String UNAUTHORIZED = "unauthorized";
    /** The request is malformed or out of bounds; sending it again will not help. */
    static final String INVALID = "invalid";
    /** {@code bind} of an instance already bound: {@code rebind} replaces it. */
    static final String ALREADY_BOUND = "already-bound";
    /** The store could not be reached or written; the write may be tried again. */
    static final String UNAVAILABLE = "unavailable";

    static final RegistryFault<BindFault, BindFaultException> BIND = new RegistryFault<>(
            BindFault::new, BindFault::setCode, BindFault::setReason, BindFaultException::new);
    static final RegistryFault<RebindFault, RebindFaultException> REBIND = new RegistryFault<>(
            RebindFault::new, RebindFault::setCode, RebindFault::setReason, RebindFaultException::new);
    static final RegistryFault<UnbindFault, UnbindFaultException> UNBIND = new RegistryFault<>(
            UnbindFault::new, UnbindFault::setCode, UnbindFault::setReason, UnbindFaultException::new);
    static final RegistryFault<RenewFault, RenewFaultException> RENEW = new RegistryFault<>(
            RenewFault::new, RenewFault::setCode, RenewFault::setReason, RenewFaultException::new);
    static final RegistryFault<RenewWithStatsFault, RenewWithStatsFaultException> RENEW_WITH_STATS =
            new RegistryFault<>(RenewWithStatsFault::new, RenewWithStatsFault::setCode,
                    RenewWithStatsFault::setReason, RenewWithStatsFaultException::new);
    static final RegistryFault<LookupLeanFault, LookupLeanFaultException> LOOKUP_LEAN = new RegistryFault<>(
            LookupLeanFault::new, LookupLeanFault::setCode, LookupLeanFault::setReason, LookupLeanFaultException::new);

    /** This operation's fault exception with {@code code} and {@code reason}, to throw. */
    X of(String code, String reason) {
        I info = content.get();
        this.code.accept(info, code);
        this.reason.accept(info, reason);
        return exception.apply(info);
    }
}
