package io.switchboard.client;

import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.metastub.ClientCall;
import io.switchboard.metastub.RetryingInterceptor;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.DeadlineExceededException;
import io.switchboard.protocol.TransportException;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replica failover, the {@link ReplicatedChannel}'s step: each attempt goes to one replica (picked
 * by the channel); when it fails with a {@link TransportException} that cannot have run the
 * operation (not delivered) or of an idempotent operation, or with an answer that says "not done
 * here", the replica goes into back-off and the call moves to one not yet tried. Otherwise, and when
 * every replica has been tried, the caller gets the last failure. The loop is
 * {@link RetryingInterceptor}'s, as the failsafe's is.
 */
final class ReplicaFailoverInterceptor extends RetryingInterceptor {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicatedChannel.class);

    /** The replicas, as the channel knows them now. */
    interface Replicas {
        /** The replica for the next attempt among those not {@code tried}, or null when every one has been. */
        Replica pick(Set<Replica> tried);

        /** A replica for the first attempt when none is bound: waits for one, or throws. */
        Replica await();
    }

    /** A call through a replicated channel: the replica of this attempt and those tried. */
    static final class ReplicaCall extends ClientCall {
        /** Empty and shared until a replica is tried: most calls never need a set of their own. */
        private Set<Replica> tried = Set.of();
        Replica replica;

        ReplicaCall(String component, OperationDescriptor operation, Object request, CallOptions options,
                    CompletableFuture<Object> caller) {
            super(component, operation, request, options, caller);
        }

        Set<Replica> tried() {
            return tried;
        }

        void tried(Replica r) {
            if (tried.isEmpty()) {
                tried = new HashSet<>();
            }
            tried.add(r);
        }
    }

    private final Replicas replicas;
    /** Answers that say "not done here, another replica may": moved on like a failure not delivered. */
    private final Predicate<Throwable> notDoneHere;

    ReplicaFailoverInterceptor(Replicas replicas, Predicate<Throwable> notDoneHere) {
        this.replicas = replicas;
        this.notDoneHere = notDoneHere;
    }

    @Override
    protected CompletableFuture<Object> attempt(ClientCall call, Chain next) {
        ReplicaCall c = (ReplicaCall) call;
        if (c.replica == null) {
            c.replica = enter(c, true);   // the first attempt: waits for a replica if none is bound
        }
        return next.proceed(call);
    }

    /** The next replica not tried, counted in; null when none is left (then, for a first attempt, waits or throws). */
    private Replica enter(ReplicaCall c, boolean first) {
        while (true) {
            Replica r = replicas.pick(c.tried());
            if (r == null && first) {
                r = replicas.await();
            }
            if (r == null) {
                return null;
            }
            if (r.enter()) {
                return r;
            }
            c.tried(r);   // dropped since it was picked
        }
    }

    @Override
    protected void ended(ClientCall call, Throwable failure) {
        Replica replica = ((ReplicaCall) call).replica;
        if (replica != null) {
            ended(replica, failure);
        }
    }

    /** The bookkeeping after an attempt on {@code replica}: its back-off, and the call counted out. */
    void ended(Replica replica, Throwable failure) {
        if (failure == null) {
            replica.succeeded();
        } else if (!(failure instanceof DeadlineExceededException)   // refused before it reached the replica
                && (failure instanceof TransportException || notDone(failure))) {
            replica.failed();
        }
        replica.exit();
    }

    @Override
    protected Throwable retry(ClientCall call, Throwable failure) {
        ReplicaCall c = (ReplicaCall) call;
        return c.replica != null && moveOn(c, failure) ? null : failure;
    }

    /**
     * Sets {@code c} up for an attempt on another replica after its attempt on {@code c.replica}
     * failed with {@code failure}; false when the failure may not move on or no replica is left.
     */
    boolean moveOn(ReplicaCall c, Throwable failure) {
        if (!(notDone(failure) || (failure instanceof TransportException e
                && (e.delivery() == TransportException.Delivery.NOT_DELIVERED || c.operation().idempotent())))) {
            return false;
        }
        Replica failed = c.replica;
        LOG.debug("{}.{} failed on {} ({}); trying another replica", c.component(), c.operation().name(),
                failed.entry.instanceId(), failure.getMessage());
        c.tried(failed);
        Replica next = enter(c, false);
        c.replica = next;
        if (next == null) {
            return false;
        }
        c.repeat(null, "another replica (" + failed.entry.instanceId() + " failed)", false);
        return true;
    }

    private boolean notDone(Throwable failure) {
        return !(failure instanceof TransportException) && notDoneHere.test(failure);
    }
}
