package io.switchboard.client;

import io.switchboard.registry.RegistryEvent;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.client.ReplicaFailoverInterceptor.ReplicaCall;
import io.switchboard.metastub.ClientInterceptor;
import io.switchboard.metastub.DeadlineInterceptor;
import io.switchboard.metastub.InterceptorChain;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.AsyncCalls;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Channel;
import io.switchboard.protocol.DeadlineExceededException;
import io.switchboard.protocol.TransportException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A channel over every replica of one component (the instances bound under one name), one
 * {@link MetaStub} per replica. Each call goes to one replica: the one with the fewest calls in
 * flight from this channel, ties taken in turn (so an idle client goes round-robin), or, with
 * {@link Choice#IN_ORDER}, the first that has not failed lately (fail-over only, as for
 * registries). A replica that fails a call with a {@link TransportException} is avoided for a
 * back-off (1 s, doubling up to 30 s; a {@link io.switchboard.metastub.Backoff} as the meta-stub's) unless every
 * replica is. The failover is one step, {@code ReplicaFailoverInterceptor}, in front of each replica's meta-stub,
 * inside a {@link DeadlineInterceptor}: a call's deadline ({@link CallOptions#withDeadlineAfter})
 * covers every replica it tries, and no replica is tried once it has passed.
 *
 * <p>When a call fails on one replica it moves to the next only if that cannot run the operation
 * twice: the request never reached the operation ({@link TransportException.Delivery#NOT_DELIVERED})
 * or the operation is idempotent. Unlike the meta-stub's failsafe, a server that recognises call
 * ids does not make a call repeatable here: each replica remembers only its own calls. Otherwise,
 * and when every replica has been tried, the caller gets the last failure. Refusals, declared
 * faults and remote errors are answers and are never repeated, except the declared faults the
 * channel was told mean "nothing done here" (a registry server cannot reach its store).
 *
 * <p>The replica set follows the registry through {@link #apply(RegistryEvent)} (a watch feeds
 * it): a new instance is added, one that went is dropped (its meta-stub closed once its calls
 * finish), one that moved gets its endpoints updated. With no replica bound, a call waits up to
 * {@code waitForReplica} for one to appear (a server restarting), then fails with {@link
 * Switchboard.NotBoundException}.
 *
 * <pre>{@code
 * ReplicatedChannel channel = new ReplicatedChannel("Echo", registry.lookup("Echo"),
 *         entry -> MetaStub.builder(EchoComponent.DESCRIPTOR).endpoints(entry.endpoints()).build(),
 *         ReplicatedChannel.Choice.LEAST_LOADED, Duration.ofSeconds(5));
 * Echo echo = EchoComponent.stub(channel);
 * }</pre>
 */
public final class ReplicatedChannel implements Channel, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicatedChannel.class);

    /** How a call picks its replica. */
    public enum Choice {
        /** Fewest calls in flight from this channel; ties in turn (round-robin when idle). */
        LEAST_LOADED,
        /** The first in the list that has not failed lately: fail-over, no spreading. */
        IN_ORDER
    }

    private final String name;
    private final Function<ComponentEntry, MetaStub> stubs;
    private final Choice choice;
    private final Duration waitForReplica;
    private final Object lock = new Object();
    /** Immutable snapshot, replaced under {@link #lock}: calls read it without locking. */
    private volatile List<Replica> replicas = List.of();
    private final AtomicInteger turn = new AtomicInteger();
    /** Built once: failover, then the picked replica's meta-stub (itself a chain). */
    private final ClientInterceptor.Chain chain;
    private final ReplicaFailoverInterceptor failover;
    private volatile boolean closed;
    private volatile Runnable whenClosed = () -> { };

    /**
     * @param stubs          makes the meta-stub of one replica from its entry
     * @param waitForReplica how long a call waits for an instance when none is bound
     */
    public ReplicatedChannel(String name, List<ComponentEntry> entries, Function<ComponentEntry, MetaStub> stubs,
                             Choice choice, Duration waitForReplica) {
        this(name, entries, stubs, choice, waitForReplica, answer -> false);
    }

    /**
     * @param notDoneHere the declared faults that say the replica did nothing and another one may
     *                    succeed (a registry server that cannot reach its store): the call moves on
     *                    to the next replica, which is avoided for a back-off, as after a failure
     *                    that was not delivered
     */
    public ReplicatedChannel(String name, List<ComponentEntry> entries, Function<ComponentEntry, MetaStub> stubs,
                             Choice choice, Duration waitForReplica, Predicate<Throwable> notDoneHere) {
        this.name = Objects.requireNonNull(name, "name");
        this.stubs = Objects.requireNonNull(stubs, "stubs");
        this.choice = Objects.requireNonNull(choice, "choice");
        this.waitForReplica = Objects.requireNonNull(waitForReplica, "waitForReplica");
        this.failover = new ReplicaFailoverInterceptor(new ReplicaFailoverInterceptor.Replicas() {
            @Override
            public Replica pick(Set<Replica> tried) {
                return ReplicatedChannel.this.pick(tried);
            }

            @Override
            public Replica await() {
                return awaitReplica();
            }
        }, Objects.requireNonNull(notDoneHere, "notDoneHere"));
        // a deadline counts from the call's start over every replica tried; each replica's meta-stub
        // bounds its own attempts by what is left
        this.chain = InterceptorChain.of(List.of(DeadlineInterceptor.call(System::nanoTime), failover,
                DeadlineInterceptor.attempt(System::nanoTime, null)), call -> call.send(((ReplicaCall) call).replica.stub));
        entries.forEach(this::upsert);
    }

    public String name() {
        return name;
    }

    /** The replicas calls may go to now, oldest first. */
    public List<ComponentEntry> entries() {
        return replicas.stream().map(r -> r.entry).toList();
    }

    /** The replicas themselves, for tests. */
    List<Replica> replicasNow() {
        return replicas;
    }

    /** Calls this channel has in flight on the replica {@code instanceId} (0 if it has none or is unknown). */
    public int inFlight(String instanceId) {
        return replicas.stream().filter(r -> r.entry.instanceId().equals(instanceId)).mapToInt(r -> r.inFlight.get())
                .sum();
    }

    /** Follows one change of the registry; events for other names are ignored. */
    public void apply(RegistryEvent event) {
        if (!event.name().equals(name)) {
            return;
        }
        if (event.kind() == RegistryEvent.Kind.GO) {
            remove(event.instanceId());
        } else {
            upsert(event.entry());
        }
    }

    /** Adds the instance, or brings a known one up to date (new endpoints: the same meta-stub, re-pointed). */
    public void upsert(ComponentEntry entry) {
        synchronized (lock) {
            if (closed || !entry.name().equals(name)) {
                return;
            }
            List<Replica> next = new ArrayList<>(replicas);
            int at = indexOf(next, entry.instanceId());
            if (at >= 0) {
                Replica known = next.get(at);
                if (known.entry.endpoints().equals(entry.endpoints()) && known.entry.features().equals(entry.features())) {
                    known.entry = entry;
                    return;
                }
                if (known.entry.features().equals(entry.features())) {
                    try {
                        known.stub.updateEndpoints(entry.endpoints());
                        known.entry = entry;
                        known.succeeded();
                        return;
                    } catch (IllegalArgumentException e) {
                        LOG.warn("{} ({}) can no longer be called: {}", name, entry.instanceId(), e.getMessage());
                    }
                }
                next.remove(at);
                known.retire();
            }
            try {
                next.add(at >= 0 ? at : next.size(), new Replica(entry, stubs.apply(entry)));
            } catch (RuntimeException e) {
                // e.g. no protocol in common: the other replicas still serve
                LOG.warn("{} ({}) cannot be called from here: {}", name, entry.instanceId(), e.getMessage());
            }
            replicas = List.copyOf(next);
            lock.notifyAll();
        }
    }

    /** Drops one instance; calls under way on it finish, then its meta-stub closes. */
    public void remove(String instanceId) {
        synchronized (lock) {
            List<Replica> next = new ArrayList<>(replicas);
            int at = indexOf(next, instanceId);
            if (at >= 0) {
                next.remove(at).retire();
                replicas = List.copyOf(next);
            }
        }
    }

    private static int indexOf(List<Replica> list, String instanceId) {
        for (int i = 0; i < list.size(); i++) {
            if (list.get(i).entry.instanceId().equals(instanceId)) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public Object call(OperationDescriptor operation, Object request, CallOptions options) throws DeclaredFault {
        List<Replica> all = replicas;
        if (all.size() == 1 && options.deadlineAfter() == null && options.deadlineNanoTime() == null) {
            Replica only = all.get(0);
            if (only.enter()) {
                return callOnly(only, operation, request, options);
            }
        }
        // the same chain as callAsync: every attempt completes on this thread before proceed returns
        return AsyncCalls.await(chain.proceed(new ReplicaCall(name, operation, request, options, null)));
    }

    /**
     * A blocking call to the one replica bound, without a deadline of its own to count down: the
     * common case, sent straight to the replica's meta-stub, since the chain would have nothing to
     * choose. Only a failure that may move on goes through the chain, to a replica bound since the
     * call began (a restart's new instance).
     */
    private Object callOnly(Replica only, OperationDescriptor operation, Object request, CallOptions options)
            throws DeclaredFault {
        Object response;
        try {
            response = only.stub.call(operation, request, options);
        } catch (DeclaredFault | RuntimeException failure) {
            failover.ended(only, failure);
            ReplicaCall moved = new ReplicaCall(name, operation, request, options, null);
            moved.replica = only;
            if (failure instanceof DeadlineExceededException || !failover.moveOn(moved, failure)) {
                throw failure;
            }
            return AsyncCalls.await(chain.proceed(moved));
        } catch (Error e) {
            only.exit();   // counted out all the same, or a retired replica's meta-stub would never close
            throw e;
        }
        failover.ended(only, null);
        return response;
    }

    /**
     * The non-blocking form: each replica's meta-stub is called through its own
     * {@link MetaStub#callAsync}, and a failure that allows it moves on to the next replica, as
     * {@link #call} does. Cancelling the future cancels the attempt under way. Only when no
     * replica is bound at all does the calling thread wait for one (as {@link #call} does).
     */
    @Override
    public CompletableFuture<Object> callAsync(OperationDescriptor operation, Object request, CallOptions options) {
        return AsyncCalls.start(caller -> chain.proceed(new ReplicaCall(name, operation, request, options, caller)));
    }

    /** The replica for the next attempt, or null when every one has been tried. */
    private Replica pick(Set<Replica> tried) {
        List<Replica> all = replicas;
        if (all.size() == 1) {   // one instance, the common case: nothing to choose, nothing to allocate
            Replica only = all.get(0);
            if (choice == Choice.LEAST_LOADED) {
                turn.getAndIncrement();
            }
            return tried.contains(only) ? null : only;
        }
        List<Replica> open = new ArrayList<>(all.size());
        List<Replica> healthy = new ArrayList<>(all.size());
        long now = System.nanoTime();
        for (Replica r : all) {
            if (!tried.contains(r)) {
                open.add(r);
                if (!r.avoided(now)) {
                    healthy.add(r);
                }
            }
        }
        List<Replica> from = healthy.isEmpty() ? open : healthy;
        if (from.isEmpty()) {
            return null;
        }
        if (choice == Choice.IN_ORDER) {
            return from.get(0);
        }
        int n = from.size();
        int start = Math.floorMod(turn.getAndIncrement(), n);
        Replica best = null;
        for (int i = 0; i < n; i++) {
            Replica r = from.get((start + i) % n);
            if (best == null || r.inFlight.get() < best.inFlight.get()) {
                best = r;
            }
        }
        return best;
    }

    private Replica awaitReplica() {
        long end = System.nanoTime() + waitForReplica.toNanos();
        synchronized (lock) {
            while (replicas.isEmpty() && !closed) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    lock.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            if (closed) {
                throw new IllegalStateException("the channel to " + name + " is closed");
            }
        }
        Replica r = pick(Set.of());
        if (r == null) {
            throw new Switchboard.NotBoundException("no instance of " + name + " is bound (waited "
                    + waitForReplica.toMillis() + " ms for one)");
        }
        return r;
    }

    /**
     * Runs {@code action} once when this channel is closed (by its owner, or by whoever made it):
     * a {@link Switchboard} stops following the registry for it.
     */
    void whenClosed(Runnable action) {
        whenClosed = Objects.requireNonNull(action, "action");
    }

    @Override
    public void close() {
        List<Replica> all;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            all = replicas;
            replicas = List.of();
            lock.notifyAll();
        }
        all.forEach(Replica::retire);
        whenClosed.run();
    }

    @Override
    public String toString() {
        return "ReplicatedChannel[" + name + ", " + choice + ", " + entries().stream().map(ComponentEntry::instanceId)
                .toList() + "]";
    }
}
