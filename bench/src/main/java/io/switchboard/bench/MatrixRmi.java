package io.switchboard.bench;

import io.switchboard.components.matrix.Block;
import io.switchboard.components.matrix.Blocks;
import io.switchboard.components.matrix.MatrixWorker;
import io.switchboard.components.matrix.MatrixWorkerService;
import io.switchboard.components.matrix.ProtocolTally;
import io.switchboard.components.matrix.WorkerStatus;
import io.switchboard.idl.runtime.DeclaredFault;
import java.io.IOException;
import java.io.ObjectInputFilter;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.rmi.Remote;
import java.rmi.RemoteException;
import java.rmi.server.UnicastRemoteObject;
import java.util.ArrayList;
import java.util.List;

/**
 * The matrix workload's Java RMI baseline, plain Java with no Switchboard code on the wire: the
 * worker's operations as an RMI remote interface ({@link Worker}), served in each worker JVM by a
 * {@link MatrixWorkerService} of its own (the same algorithm and arithmetic as the Switchboard
 * worker), and called through {@link Client}, a {@link MatrixWorker}, by the manager and by the
 * workers themselves: Cannon's shifts go worker to worker over RMI. A worker's name, for the
 * manager and its neighbours, is its stub as Base64. Blocks travel as a serializable record whose
 * values Java serialization writes as raw 8-byte doubles.
 *
 * <pre>{@code
 * String name = MatrixRmi.export();                       // in a worker JVM
 * MatrixWorker worker = new MatrixRmi.Client(name, tally); // anywhere
 * }</pre>
 */
final class MatrixRmi {
    /** What a worker's RMI deserialization accepts: blocks of at most {@link MatrixSocket#MAX_VALUES} values and nothing else. */
    private static final ObjectInputFilter FILTER = ObjectInputFilter.Config.createFilter("maxdepth=4;maxrefs=64;maxarray="
            + MatrixSocket.MAX_VALUES + ";" + Matrix.class.getName() + ";!*");
    private static final List<Server> EXPORTED = new ArrayList<>();   // strongly held, so no exported worker is collected

    private MatrixRmi() {
    }

    /** The worker's operations of the two algorithms; a failure comes back as a RemoteException with its message. */
    interface Worker extends Remote {
        Matrix multiplyBlock(Matrix a, Matrix b) throws RemoteException;

        boolean setup(String job, int gridRow, int gridCol, int gridSize, Matrix a, Matrix b, String left, String up)
                throws RemoteException;

        int step(String job, int step) throws RemoteException;

        boolean receiveA(String job, int step, Matrix block) throws RemoteException;

        boolean receiveB(String job, int step, Matrix block) throws RemoteException;

        Matrix result(String job) throws RemoteException;
    }

    /** A block on the wire: rows, cols and the row-major values, the array shared with the {@link Block}, not copied. */
    record Matrix(int rows, int cols, double[] values) implements Serializable {
        static Matrix of(Block b) {
            return new Matrix(b.getRows(), b.getCols(), b.getValues());
        }

        Block block() {
            return Blocks.of(rows, cols, values);
        }
    }

    /**
     * Exports a worker in this JVM (set {@code java.rmi.server.hostname} first) and returns its stub
     * as Base64: the worker's name for the manager and its neighbours.
     */
    static synchronized String export() throws IOException {
        Server server = new Server(new MatrixWorkerService((name, policy) -> new Client(name, null)));
        EXPORTED.add(server);
        return RmiPeer.toBase64(UnicastRemoteObject.exportObject(server, 0, FILTER));
    }

    /** The exported object: each operation runs on the worker, a fault becomes a RemoteException. */
    private static final class Server implements Worker {
        private final MatrixWorkerService worker;

        Server(MatrixWorkerService worker) {
            this.worker = worker;
        }

        @Override
        public Matrix multiplyBlock(Matrix a, Matrix b) throws RemoteException {
            try {
                return Matrix.of(worker.multiplyBlock(a.block(), b.block()));
            } catch (DeclaredFault f) {
                throw new RemoteException(f.getMessage());
            }
        }

        @Override
        public boolean setup(String job, int gridRow, int gridCol, int gridSize, Matrix a, Matrix b, String left, String up) {
            return worker.setup(job, gridRow, gridCol, gridSize, a.block(), b.block(), left, up, null);
        }

        @Override
        public int step(String job, int step) throws RemoteException {
            try {
                return worker.step(job, step);
            } catch (DeclaredFault f) {
                throw new RemoteException(f.getMessage());
            }
        }

        @Override
        public boolean receiveA(String job, int step, Matrix block) {
            return worker.receiveA(job, step, block.block());
        }

        @Override
        public boolean receiveB(String job, int step, Matrix block) {
            return worker.receiveB(job, step, block.block());
        }

        @Override
        public Matrix result(String job) {
            return Matrix.of(worker.result(job));
        }
    }

    /**
     * A worker reached over RMI from its Base64 stub. A call that fails throws an unchecked
     * exception with RMI's reason; {@code status} and {@code shutdown} are no part of the baseline.
     */
    static final class Client implements MatrixWorker {
        private final Worker remote;
        private final ProtocolTally tally;

        /** @param tally counts this client's calls as {@code rmi}, or null */
        Client(String base64Stub, ProtocolTally tally) {
            try {
                this.remote = (Worker) RmiPeer.fromBase64(base64Stub);
            } catch (IOException | ClassNotFoundException e) {
                throw new IllegalArgumentException("not an RMI matrix worker's stub: " + e, e);
            }
            this.tally = tally;
        }

        @Override
        public Block multiplyBlock(Block a, Block b) {
            return call("multiplyBlock", () -> remote.multiplyBlock(Matrix.of(a), Matrix.of(b))).block();
        }

        @Override
        public boolean setup(String job, int gridRow, int gridCol, int gridSize, Block a, Block b, String left, String up,
                String policy) {
            return call("setup", () -> remote.setup(job, gridRow, gridCol, gridSize, Matrix.of(a), Matrix.of(b), left, up));
        }

        @Override
        public int step(String job, int step) {
            return call("step", () -> remote.step(job, step));
        }

        @Override
        public boolean receiveA(String job, int step, Block block) {
            return call("receiveA", () -> remote.receiveA(job, step, Matrix.of(block)));
        }

        @Override
        public boolean receiveB(String job, int step, Block block) {
            return call("receiveB", () -> remote.receiveB(job, step, Matrix.of(block)));
        }

        @Override
        public Block result(String job) {
            return call("result", () -> remote.result(job)).block();
        }

        @Override
        public WorkerStatus status() {
            throw new UnsupportedOperationException("the RMI baseline carries the algorithms' operations only");
        }

        @Override
        public boolean shutdown() {
            throw new UnsupportedOperationException("the RMI baseline carries the algorithms' operations only");
        }

        private <T> T call(String operation, RemoteCall<T> call) {
            if (tally != null) {
                tally.add(operation, "rmi", 1);
            }
            try {
                return call.call();
            } catch (RemoteException e) {
                throw new UncheckedIOException(operation + " over RMI: " + e.getMessage(), e);
            }
        }
    }

    @FunctionalInterface
    private interface RemoteCall<T> {
        T call() throws RemoteException;
    }
}
