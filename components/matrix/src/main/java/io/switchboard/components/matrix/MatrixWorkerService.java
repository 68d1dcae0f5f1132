package io.switchboard.components.matrix;

import io.switchboard.protocol.ClientSettings;
import io.switchboard.metastub.Policies;
import io.switchboard.client.Switchboard;
import io.switchboard.server.ComponentContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The matrix-multiply worker. For the simple parallel algorithm it multiplies the blocks it is
 * given. For Cannon's algorithm it holds one grid position at a time: the manager sets it up with
 * its pre-skewed blocks and its neighbours' registry names, then calls {@code step} on every
 * worker once per step; in each step the worker adds a(s) × b(s) to its C block and hands a(s) to
 * its left neighbour and b(s) to its up neighbour itself, looking them up in the registry through
 * {@link Switchboard} (or through the {@link Neighbours} it was made with, another transport).
 * So the blocks of the shift never pass through the manager.
 *
 * <p>Every operation is safe to repeat (the failsafe may resend a call over SOAP): a delivery
 * names its job and step and a second one is recognised; a step already done is not done again;
 * a step commits its new C block only after both neighbours have their blocks, so a step that
 * failed half-way runs again from the start.
 *
 * <pre>{@code
 * try (MatrixWorkerService worker = new MatrixWorkerService(registryUrl, null);
 *      ComponentServer server = ComponentServer.builder().registry(registryUrl, secret).build()) {
 *     server.export("matrix-worker-0", MatrixWorkerComponent.skeleton(worker));
 *     ...
 * }
 * }</pre>
 */
public final class MatrixWorkerService implements MatrixWorker, AutoCloseable {
    private final String registryUrl;
    private final ClientSettings clientSettings;
    private final Runnable onShutdown;
    private final Map<String, Switchboard> clients = new ConcurrentHashMap<>();
    private final Neighbours reach;
    private final Map<String, MatrixWorker> neighbours = new ConcurrentHashMap<>();
    private final ProtocolTally outgoing = new ProtocolTally();
    private final AtomicLong multiplied = new AtomicLong();
    private volatile Job job;
    private volatile boolean closed;

    /**
     * @param registryUrl where to look up neighbours for Cannon's algorithm; null for a worker that
     *                    only multiplies blocks
     * @param onShutdown  what {@code shutdown} runs, shortly after answering (stop the process); null:
     *                    {@code shutdown} is refused (answers false)
     */
    public MatrixWorkerService(String registryUrl, Runnable onShutdown) {
        this(registryUrl, onShutdown, ClientSettings.defaults());
    }

    /** As above, reaching the registry and the neighbours with {@code clientSettings} (TLS, say). */
    public MatrixWorkerService(String registryUrl, Runnable onShutdown, ClientSettings clientSettings) {
        this(registryUrl, onShutdown, clientSettings, null);
    }

    /**
     * A worker that reaches its neighbours of Cannon's grid through {@code neighbours} instead of the
     * registry: the same algorithm over another transport (a plain Java baseline, say), where the
     * names {@code setup} gives are that transport's addresses. {@code shutdown} is refused.
     */
    public MatrixWorkerService(Neighbours neighbours) {
        this(null, null, ClientSettings.defaults(), Objects.requireNonNull(neighbours, "neighbours"));
    }

    private MatrixWorkerService(String registryUrl, Runnable onShutdown, ClientSettings clientSettings, Neighbours neighbours) {
        this.registryUrl = registryUrl;
        this.onShutdown = onShutdown;
        this.clientSettings = clientSettings;
        this.reach = neighbours != null ? neighbours : this::lookUp;
    }

    /**
     * How a worker reaches a neighbour of Cannon's grid by the name its {@code setup} gave. A worker
     * asks once per name and policy and keeps the answer until a call through it fails.
     */
    @FunctionalInterface
    public interface Neighbours {
        /** The neighbour called {@code name}, for calls under the selection policy {@code policy}. */
        MatrixWorker reach(String name, String policy);
    }

    /**
     * A worker served from the class path ({@code ./switchboard serve matrix-worker}): neighbours are
     * looked up in the context's registry, and {@code shutdown} stops the serving process if its host
     * lets components do that.
     */
    public MatrixWorkerService(ComponentContext context) {
        this(context.registryUrl(), context.canStopServing() ? context::stopServing : null, context.clientSettings());
    }

    /** One Cannon job: the grid position, the blocks and the progress. */
    private static final class Job {
        final String id;
        final int row;
        final int col;
        final int q;
        final String left;
        final String up;
        final String policy;
        final Map<Integer, Block> aIn = new ConcurrentHashMap<>();
        final Map<Integer, Block> bIn = new ConcurrentHashMap<>();
        /** Serialises steps; deliveries never take it, so two workers stepping at once cannot deadlock. */
        final Object stepLock = new Object();
        volatile int stepsDone;
        volatile Block c;

        Job(String id, int row, int col, int q, Block a, Block b, String left, String up, String policy) {
            this.id = id;
            this.row = row;
            this.col = col;
            this.q = q;
            this.left = left;
            this.up = up;
            this.policy = policy;
            aIn.put(0, a);
            bIn.put(0, b);
            c = Blocks.zeros(a.getRows(), b.getCols());
        }
    }

    @Override
    public Block multiplyBlock(Block a, Block b) throws MultiplyBlockFaultException {
        try {
            Block c = Blocks.multiply(a, b);
            multiplied.incrementAndGet();
            return c;
        } catch (IllegalArgumentException e) {
            MultiplyBlockFault f = new MultiplyBlockFault();
            f.setReason(e.getMessage());
            throw new MultiplyBlockFaultException(f);
        }
    }

    @Override
    public synchronized boolean setup(String jobId, int gridRow, int gridCol, int gridSize, Block a, Block b,
                                      String left, String up, String policy) {
        Job current = job;
        if (current != null && current.id.equals(jobId)) {
            return false;   // a repeat of the setup already done: keep the progress made since
        }
        Objects.requireNonNull(jobId, "job");
        if (gridSize < 1 || gridRow < 0 || gridRow >= gridSize || gridCol < 0 || gridCol >= gridSize) {
            throw new IllegalArgumentException("grid position (" + gridRow + ", " + gridCol + ") is outside a "
                    + gridSize + "x" + gridSize + " grid");
        }
        Blocks.check(a, "a");
        Blocks.check(b, "b");
        if (a.getCols() != b.getRows()) {
            throw new IllegalArgumentException("a is " + a.getRows() + "x" + a.getCols() + " and b is " + b.getRows()
                    + "x" + b.getCols() + ": they do not multiply");
        }
        if (gridSize > 1 && (left == null || left.isEmpty() || up == null || up.isEmpty())) {
            throw new IllegalArgumentException("a worker of a grid larger than 1x1 needs its left and up neighbours");
        }
        if (policy != null) {
            Policies.byName(policy);   // refuse an unknown policy now, not at the first step
        }
        job = new Job(jobId, gridRow, gridCol, gridSize, a, b, left, up, policy == null ? "adaptive" : policy);
        return true;
    }

    @Override
    public int step(String jobId, int s) throws StepFaultException {
        Job j = job;
        if (j == null || !j.id.equals(jobId)) {
            throw stepFault("this worker is not set up for job " + jobId);
        }
        synchronized (j.stepLock) {
            if (s < j.stepsDone) {
                return j.stepsDone;   // a repeat of a step already done
            }
            if (s >= j.q) {
                throw stepFault("step " + s + " of a " + j.q + "x" + j.q + " grid (steps are 0 to " + (j.q - 1) + ")");
            }
            if (s != j.stepsDone) {
                throw stepFault("step " + s + " asked for before step " + j.stepsDone);
            }
            Block a = j.aIn.get(s);
            Block b = j.bIn.get(s);
            if (a == null || b == null) {
                throw stepFault("the " + (a == null ? "A" : "B") + " block of step " + s + " has not arrived");
            }
            Block next;
            try {
                next = Blocks.multiplyAdd(j.c, a, b);
            } catch (IllegalArgumentException e) {
                throw stepFault("step " + s + ": " + e.getMessage());
            }
            if (s + 1 < j.q) {
                // hand the blocks on before committing: if a neighbour cannot be reached the step
                // fails as a whole and a retry starts it again from the same state
                send(j.policy, j.left, n -> n.receiveA(j.id, s + 1, a));
                send(j.policy, j.up, n -> n.receiveB(j.id, s + 1, b));
            }
            multiplied.incrementAndGet();
            j.c = next;
            j.stepsDone = s + 1;
            j.aIn.remove(s);   // one block of each at a time, as Cannon's algorithm promises
            j.bIn.remove(s);
            return j.stepsDone;
        }
    }

    @Override
    public boolean receiveA(String jobId, int s, Block block) {
        return deliver(jobId, s, block, true);
    }

    @Override
    public boolean receiveB(String jobId, int s, Block block) {
        return deliver(jobId, s, block, false);
    }

    private boolean deliver(String jobId, int s, Block block, boolean isA) {
        Job j = job;
        if (j == null || !j.id.equals(jobId)) {
            throw new IllegalStateException("this worker is not set up for job " + jobId);
        }
        if (s < 1 || s >= j.q) {
            throw new IllegalArgumentException("a block is passed on for steps 1 to " + (j.q - 1) + ", not " + s);
        }
        Blocks.check(block, isA ? "A block" : "B block");
        if (s < j.stepsDone) {
            return false;   // that step already ran with this block: a late repeat
        }
        return (isA ? j.aIn : j.bIn).putIfAbsent(s, block) == null;
    }

    @Override
    public Block result(String jobId) {
        Job j = job;
        if (j == null || !j.id.equals(jobId)) {
            throw new IllegalStateException("this worker is not set up for job " + jobId);
        }
        if (j.stepsDone < j.q) {
            throw new IllegalStateException("job " + jobId + " has run " + j.stepsDone + " of " + j.q + " steps");
        }
        return j.c;
    }

    @Override
    public WorkerStatus status() {
        Job j = job;
        WorkerStatus st = new WorkerStatus();
        if (j == null) {
            st.setState("idle");
        } else {
            st.setState(j.stepsDone == 0 ? "ready" : j.stepsDone < j.q ? "running" : "done");
            st.setJob(j.id);
            st.setGridRow(j.row);
            st.setGridCol(j.col);
            st.setGridSize(j.q);
            st.setStepsDone(j.stepsDone);
        }
        st.setBlocksMultiplied(multiplied.get());
        List<ProtocolCount> calls = new ArrayList<>();
        outgoing.byOperation().forEach((op, m) -> m.forEach((p, n) -> {
            ProtocolCount pc = new ProtocolCount();
            pc.setOperation(op);
            pc.setProtocol(p);
            pc.setCalls(n);
            calls.add(pc);
        }));
        st.setOutgoing(calls);
        return st;
    }

    @Override
    public boolean shutdown() {
        if (onShutdown == null) {
            return false;
        }
        // run it on another thread, a moment later, so that this answer still goes out
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            onShutdown.run();
        }, "matrix-worker-shutdown");
        t.start();
        return true;
    }

    /** The calls this worker made to its neighbours, by operation and protocol. */
    public ProtocolTally outgoing() {
        return outgoing;
    }

    /**
     * Calls a neighbour reached once per name and policy. A call that fails drops it, so that the
     * next one reaches the neighbour again (it may have been restarted at another address).
     */
    private void send(String policy, String name, Consumer<MatrixWorker> call) {
        String key = policy + " " + name;
        MatrixWorker neighbour = neighbours.computeIfAbsent(key, k -> reach.reach(name, policy));
        try {
            call.accept(neighbour);
        } catch (RuntimeException e) {
            neighbours.remove(key, neighbour);
            throw e;
        }
    }

    /** The default way to a neighbour: its name in the registry, a meta-stub with the policy. */
    private MatrixWorker lookUp(String name, String policy) {
        if (registryUrl == null) {
            throw new IllegalStateException("this worker has no registry to find its neighbour " + name + " in");
        }
        return client(policy).lookup(name, MatrixWorkerComponent.DESCRIPTOR, MatrixWorkerComponent::stub);
    }

    private Switchboard client(String policy) {
        if (closed) {
            throw new IllegalStateException("the worker is closed");
        }
        return clients.computeIfAbsent(policy, p -> Switchboard.builder(registryUrl).policy(Policies.byName(p))
                .settings(clientSettings).listener(outgoing).connect());
    }

    private static StepFaultException stepFault(String reason) {
        StepFault f = new StepFault();
        f.setReason(reason);
        return new StepFaultException(f);
    }

    /** Closes the worker's registry clients and the meta-stubs to its neighbours. */
    @Override
    public void close() {
        closed = true;
        neighbours.clear();
        clients.values().forEach(Switchboard::close);
        clients.clear();
    }
}
