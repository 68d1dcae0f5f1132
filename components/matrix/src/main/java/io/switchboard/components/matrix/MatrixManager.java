package io.switchboard.components.matrix;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.protocol.DaemonThreads;
import io.switchboard.registry.ComponentEntry;
import io.switchboard.client.Switchboard;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Multiplies matrices on k matrix workers found in the registry, the two ways the
 * Rahimi/Wainer/Lewis study compares:
 * <ul>
 * <li>{@link #multiplySimple} (the simple parallel algorithm): worker i gets a block of rows of A
 *     and all of B and returns its rows of C; few calls, each large;</li>
 * <li>{@link #multiplyCannon} (Cannon's algorithm on a q × q grid, k = q²): the manager pre-skews
 *     and sends each worker one block of A and one of B, then calls {@code step} on all workers
 *     q times; in each step every worker passes its A block left and its B block up itself, so the
 *     shifted blocks go worker to worker; at the end the manager collects the C blocks.</li>
 * </ul>
 * The protocol of every call is left to the {@link Switchboard}'s policy; give the switchboard a
 * {@link ProtocolTally} to see how it came out. The manager does not own the switchboard. The
 * same algorithms run over any {@link MatrixWorker}s given with the names their neighbours reach
 * them by (the bench's plain Java baselines do that).
 *
 * <pre>{@code
 * try (Switchboard sb = Switchboard.builder(registryUrl).listener(tally).connect();
 *      MatrixManager manager = new MatrixManager(sb, MatrixManager.discover(sb, "matrix-worker-"))) {
 *     Block c = manager.multiplyCannon(a, b);
 * }
 * }</pre>
 */
public final class MatrixManager implements AutoCloseable {
    private final List<String> names;
    private final List<MatrixWorker> workers;
    private final ExecutorService pool;
    private volatile String workerPolicy;

    /** Looks up every named worker now; {@link Switchboard.NotBoundException} if one is not bound. */
    public MatrixManager(Switchboard switchboard, List<String> workerNames) {
        this(workerNames, workerNames.stream()
                .map(name -> switchboard.lookup(name, MatrixWorkerComponent.DESCRIPTOR, MatrixWorkerComponent::stub))
                .toList());
    }

    /**
     * A manager of workers reached some other way (a plain Java baseline over its own transport):
     * {@code workers.get(i)} is the worker whose neighbours know it as {@code workerNames.get(i)}
     * in Cannon's algorithm, so each name must be an address the workers' own transport reaches.
     */
    public MatrixManager(List<String> workerNames, List<? extends MatrixWorker> workers) {
        if (workerNames.isEmpty()) {
            throw new IllegalArgumentException("a manager needs at least one worker");
        }
        if (workerNames.size() != workers.size()) {
            throw new IllegalArgumentException(workerNames.size() + " names for " + workers.size() + " workers");
        }
        this.names = List.copyOf(workerNames);
        this.workers = List.copyOf(workers);
        this.pool = Executors.newFixedThreadPool(names.size(), DaemonThreads.numbered("matrix-manager"));
    }

    /** The names bound in the registry that start with {@code prefix}, sorted. */
    public static List<String> discover(Switchboard switchboard, String prefix) {
        TreeSet<String> found = new TreeSet<>();
        for (ComponentEntry e : switchboard.registry().list()) {
            if (e.name().startsWith(prefix)) {
                found.add(e.name());
            }
        }
        return List.copyOf(found);
    }

    /** The workers, in the order they take rows (simple) and grid positions (Cannon, row by row). */
    public List<String> workers() {
        return names;
    }

    /**
     * The policy the workers use for their calls to each other in Cannon's algorithm (a name
     * {@code Policies.byName} knows); null: each worker's default, adaptive.
     */
    public MatrixManager workerPolicy(String policyName) {
        this.workerPolicy = policyName;
        return this;
    }

    /** a × b by the simple parallel algorithm on all workers. */
    public Block multiplySimple(Block a, Block b) {
        Blocks.check(a, "a");
        Blocks.check(b, "b");
        if (a.getCols() != b.getRows()) {
            throw new IllegalArgumentException("cannot multiply " + a.getRows() + "x" + a.getCols() + " by "
                    + b.getRows() + "x" + b.getCols());
        }
        int k = workers.size();
        int[] rows = Blocks.split(a.getRows(), k);
        List<CompletableFuture<Block>> parts = new ArrayList<>();
        for (int w = 0; w < k; w++) {
            MatrixWorker worker = workers.get(w);
            Block slice = Blocks.sub(a, rows[w], rows[w + 1] - rows[w], 0, a.getCols());
            parts.add(async(() -> worker.multiplyBlock(slice, b)));
        }
        Block c = Blocks.zeros(a.getRows(), b.getCols());
        for (int w = 0; w < k; w++) {
            Blocks.put(c, join(parts.get(w), w), rows[w], 0);
        }
        return c;
    }

    /**
     * a × b by Cannon's algorithm on a q × q grid of the workers (their number must be a square).
     * Rows of A and of C split into q parts, the inner dimension into q parts and the columns of B
     * and C into q parts, the first parts one longer when they do not divide evenly.
     */
    public Block multiplyCannon(Block a, Block b) {
        Blocks.check(a, "a");
        Blocks.check(b, "b");
        if (a.getCols() != b.getRows()) {
            throw new IllegalArgumentException("cannot multiply " + a.getRows() + "x" + a.getCols() + " by "
                    + b.getRows() + "x" + b.getCols());
        }
        int k = workers.size();
        int q = (int) Math.round(Math.sqrt(k));
        if (q * q != k) {
            throw new IllegalStateException("Cannon's algorithm needs a square number of workers, not " + k);
        }
        int[] rows = Blocks.split(a.getRows(), q);
        int[] inner = Blocks.split(a.getCols(), q);
        int[] cols = Blocks.split(b.getCols(), q);
        String job = UUID.randomUUID().toString();
        String policy = workerPolicy;

        // setup: worker (i, j) starts with the pre-skewed A(i, i+j) and B(i+j, j)
        List<CompletableFuture<Boolean>> setups = new ArrayList<>();
        for (int i = 0; i < q; i++) {
            for (int j = 0; j < q; j++) {
                int s = (i + j) % q;
                Block ab = Blocks.sub(a, rows[i], rows[i + 1] - rows[i], inner[s], inner[s + 1] - inner[s]);
                Block bb = Blocks.sub(b, inner[s], inner[s + 1] - inner[s], cols[j], cols[j + 1] - cols[j]);
                String left = names.get(i * q + (j + q - 1) % q);
                String up = names.get(((i + q - 1) % q) * q + j);
                int row = i;
                int col = j;
                MatrixWorker worker = workers.get(i * q + j);
                setups.add(async(() -> worker.setup(job, row, col, q, ab, bb, left, up, policy)));
            }
        }
        for (int w = 0; w < k; w++) {
            join(setups.get(w), w);
        }
        // q steps; the manager's barrier between them is what makes every block of step s+1
        // arrive before any worker asks for it: step s returns only once the blocks are passed on
        for (int s = 0; s < q; s++) {
            int step = s;
            List<CompletableFuture<Integer>> steps = new ArrayList<>();
            for (MatrixWorker worker : workers) {
                steps.add(async(() -> worker.step(job, step)));
            }
            for (int w = 0; w < k; w++) {
                join(steps.get(w), w);
            }
        }
        List<CompletableFuture<Block>> results = new ArrayList<>();
        for (MatrixWorker worker : workers) {
            results.add(async(() -> worker.result(job)));
        }
        Block c = Blocks.zeros(a.getRows(), b.getCols());
        for (int i = 0; i < q; i++) {
            for (int j = 0; j < q; j++) {
                Blocks.put(c, join(results.get(i * q + j), i * q + j), rows[i], cols[j]);
            }
        }
        return c;
    }

    /** Every worker's status, in worker order (small calls: the control path). */
    public List<WorkerStatus> status() {
        List<WorkerStatus> out = new ArrayList<>();
        for (MatrixWorker w : workers) {
            out.add(w.status());
        }
        return out;
    }

    /** Asks every worker to stop its process; answers how many accepted. */
    public int shutdownWorkers() {
        int accepted = 0;
        for (MatrixWorker w : workers) {
            if (w.shutdown()) {
                accepted++;
            }
        }
        return accepted;
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }

    @FunctionalInterface
    private interface RemoteCall<T> {
        T call() throws DeclaredFault;
    }

    private <T> CompletableFuture<T> async(RemoteCall<T> call) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return call.call();
            } catch (DeclaredFault f) {
                throw new CompletionException(f);
            }
        }, pool);
    }

    private <T> T join(CompletableFuture<T> f, int worker) {
        try {
            return Objects.requireNonNull(f.join(), "no answer");
        } catch (CompletionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new MatrixJobException("worker " + names.get(worker) + " failed: " + cause.getMessage(), cause);
        }
    }

    /** A worker failed during a multiplication; the cause is what its stub raised. */
    public static final class MatrixJobException extends RuntimeException {
        public MatrixJobException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
