package io.switchboard.bench;

import io.switchboard.components.matrix.MatrixWorkerMain;

/**
 * A worker JVM of the matrix workload: the Switchboard matrix worker as {@link MatrixWorkerMain}
 * runs it (bound in the registry, every protocol on the class path) and, in the same JVM and heap,
 * the plain Java baselines, each a worker of its own: over Java RMI ({@link MatrixRmi}) and over a
 * raw socket ({@link MatrixSocket}). Its ready line adds their names:
 *
 * <pre>{@code
 * java -cp CLASSPATH io.switchboard.bench.MatrixBenchWorker REGISTRY_URL NAME SECRET
 * READY NAME rmi=rO0ABXNy... socket=127.0.0.1:40127
 * }</pre>
 */
public final class MatrixBenchWorker {
    private MatrixBenchWorker() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: MatrixBenchWorker REGISTRY_URL NAME SECRET");
            System.exit(2);
        }
        System.setProperty("java.rmi.server.hostname", "127.0.0.1");
        String rmi = MatrixRmi.export();
        String socket = MatrixSocket.serve();
        MatrixWorkerMain.serve(args[0], args[1], args[2], " rmi=" + rmi + " socket=" + socket);
    }
}
