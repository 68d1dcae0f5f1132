package io.switchboard.bench;

import io.switchboard.components.matrix.Block;
import io.switchboard.components.matrix.Blocks;
import io.switchboard.components.matrix.MatrixWorker;
import io.switchboard.components.matrix.MatrixWorkerService;
import io.switchboard.components.matrix.ProtocolTally;
import io.switchboard.components.matrix.WorkerStatus;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * The matrix workload's raw-socket baseline: a hand-written binary protocol over plain sockets,
 * what a careful programmer would write for this job without a framework, in the style of
 * {@link RawSocketPeer} and with its array framing ({@link RawSocketPeer.Codec#writeDoubles}: a
 * length, then each double's 8 bytes). Each worker JVM serves a {@link MatrixWorkerService} of its
 * own (the same algorithm and arithmetic as the Switchboard worker) on a loopback port, a thread per
 * connection; the manager and the workers call it through {@link Client}, a {@link MatrixWorker}
 * holding one connection, so there is one connection per pair of peers, and Cannon's shifts go
 * worker to worker. A worker's name is its address, {@code 127.0.0.1:PORT}.
 *
 * <p>A request is an operation byte and its arguments: strings as {@link DataOutputStream#writeUTF},
 * ints as 4 bytes, a block as rows, cols and its values' array. The answer is a status byte, then
 * the result (a block, a boolean byte or an int) or, on failure, the reason as a string; the
 * connection stays usable after a failed operation. A block of more than {@link #MAX_VALUES} values
 * is refused before anything is allocated.
 *
 * <pre>{@code
 * String name = MatrixSocket.serve();                       // in a worker JVM
 * MatrixSocket.Client worker = new MatrixSocket.Client(name, tally);   // anywhere
 * }</pre>
 */
final class MatrixSocket {
    /** The most values a block may hold, on either side: 2^24 (128 MiB of doubles), 16 times an n = 1000 matrix. */
    static final int MAX_VALUES = 1 << 24;

    private static final int MULTIPLY_BLOCK = 1;
    private static final int SETUP = 2;
    private static final int STEP = 3;
    private static final int RECEIVE_A = 4;
    private static final int RECEIVE_B = 5;
    private static final int RESULT = 6;
    private static final int OK = 0;
    private static final int FAILED = 1;
    private static final int BUFFER = 64 * 1024;
    private static final int MAX_REASON = 1000;

    private MatrixSocket() {
    }

    /** Serves a worker of its own on a loopback port from now on; its name, {@code 127.0.0.1:PORT}. */
    static String serve() throws IOException {
        ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        MatrixWorkerService worker = new MatrixWorkerService((name, policy) -> new Client(name, null));
        BenchServer.acceptLoop(listener, "matrix-socket", s -> serve(s, worker));
        return "127.0.0.1:" + listener.getLocalPort();
    }

    private static void serve(Socket socket, MatrixWorker worker) throws IOException {
        socket.setTcpNoDelay(true);
        DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), BUFFER));
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream(), BUFFER));
        Wire wire = new Wire(in, out);
        for (int operation = in.read(); operation >= 0; operation = in.read()) {
            Operation run = wire.readRequest(operation, worker);
            Object answer;
            try {
                answer = run.call();
            } catch (Exception e) {
                out.writeByte(FAILED);
                String reason = String.valueOf(e.getMessage());
                out.writeUTF(reason.length() > MAX_REASON ? reason.substring(0, MAX_REASON) : reason);
                out.flush();
                continue;
            }
            out.writeByte(OK);
            if (answer instanceof Block b) {
                wire.writeBlock(b);
            } else if (answer instanceof Boolean yes) {
                out.writeBoolean(yes);
            } else {
                out.writeInt((Integer) answer);
            }
            out.flush();
        }
    }

    /** One operation of a request read off the wire, to run on the worker. */
    @FunctionalInterface
    private interface Operation {
        Object call() throws Exception;
    }

    /** The streams of one connection and the array framing, with its scratch buffer. */
    private static final class Wire {
        private final DataInputStream in;
        private final DataOutputStream out;
        private final RawSocketPeer.Codec codec = new RawSocketPeer.Codec();

        Wire(DataInputStream in, DataOutputStream out) {
            this.in = in;
            this.out = out;
        }

        void writeBlock(Block b) throws IOException {
            out.writeInt(b.getRows());
            out.writeInt(b.getCols());
            codec.writeDoubles(out, b.getValues() == null ? new double[0] : b.getValues());
        }

        Block readBlock() throws IOException {
            int rows = in.readInt();
            int cols = in.readInt();
            double[] values = codec.readDoubles(in, MAX_VALUES);
            try {
                return Blocks.of(rows, cols, values);
            } catch (IllegalArgumentException e) {
                throw new IOException("a malformed block: " + e.getMessage(), e);
            }
        }

        /** Reads the arguments of {@code operation} whole, so the stream is in step whatever running it does. */
        Operation readRequest(int operation, MatrixWorker worker) throws IOException {
            switch (operation) {
                case MULTIPLY_BLOCK: {
                    Block a = readBlock();
                    Block b = readBlock();
                    return () -> worker.multiplyBlock(a, b);
                }
                case SETUP: {
                    String job = in.readUTF();
                    int row = in.readInt();
                    int col = in.readInt();
                    int size = in.readInt();
                    Block a = readBlock();
                    Block b = readBlock();
                    String left = in.readUTF();
                    String up = in.readUTF();
                    return () -> worker.setup(job, row, col, size, a, b, left, up, null);
                }
                case STEP: {
                    String job = in.readUTF();
                    int step = in.readInt();
                    return () -> worker.step(job, step);
                }
                case RECEIVE_A:
                case RECEIVE_B: {
                    String job = in.readUTF();
                    int step = in.readInt();
                    Block block = readBlock();
                    return operation == RECEIVE_A ? () -> worker.receiveA(job, step, block) : () -> worker.receiveB(job, step, block);
                }
                case RESULT: {
                    String job = in.readUTF();
                    return () -> worker.result(job);
                }
                default:
                    throw new IOException("unknown operation " + operation);
            }
        }
    }

    /**
     * A worker reached over one connection, opened on the first call and again after a failed one
     * (the streams are out of step then); calls on it take turns. A call that fails throws an
     * unchecked exception with the reason; {@code status} and {@code shutdown} are no part of the
     * baseline.
     */
    static final class Client implements MatrixWorker, AutoCloseable {
        private final String host;
        private final int port;
        private final ProtocolTally tally;
        private Socket socket;
        private Wire wire;

        /** @param tally counts this client's calls as {@code socket}, or null */
        Client(String address, ProtocolTally tally) {
            int colon = address.lastIndexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException("not a HOST:PORT address: " + address);
            }
            this.host = address.substring(0, colon);
            this.port = Integer.parseInt(address.substring(colon + 1));
            this.tally = tally;
        }

        @Override
        public Block multiplyBlock(Block a, Block b) {
            return call("multiplyBlock", MULTIPLY_BLOCK, w -> {
                w.writeBlock(a);
                w.writeBlock(b);
            }, Wire::readBlock);
        }

        @Override
        public boolean setup(String job, int gridRow, int gridCol, int gridSize, Block a, Block b, String left, String up,
                String policy) {
            return call("setup", SETUP, w -> {
                w.out.writeUTF(job);
                w.out.writeInt(gridRow);
                w.out.writeInt(gridCol);
                w.out.writeInt(gridSize);
                w.writeBlock(a);
                w.writeBlock(b);
                w.out.writeUTF(left);
                w.out.writeUTF(up);
            }, w -> w.in.readBoolean());
        }

        @Override
        public int step(String job, int step) {
            return call("step", STEP, w -> {
                w.out.writeUTF(job);
                w.out.writeInt(step);
            }, w -> w.in.readInt());
        }

        @Override
        public boolean receiveA(String job, int step, Block block) {
            return receive("receiveA", RECEIVE_A, job, step, block);
        }

        @Override
        public boolean receiveB(String job, int step, Block block) {
            return receive("receiveB", RECEIVE_B, job, step, block);
        }

        private boolean receive(String name, int operation, String job, int step, Block block) {
            return call(name, operation, w -> {
                w.out.writeUTF(job);
                w.out.writeInt(step);
                w.writeBlock(block);
            }, w -> w.in.readBoolean());
        }

        @Override
        public Block result(String job) {
            return call("result", RESULT, w -> w.out.writeUTF(job), Wire::readBlock);
        }

        @Override
        public WorkerStatus status() {
            throw new UnsupportedOperationException("the socket baseline carries the algorithms' operations only");
        }

        @Override
        public boolean shutdown() {
            throw new UnsupportedOperationException("the socket baseline carries the algorithms' operations only");
        }

        private synchronized <T> T call(String name, int operation, Request request, Answer<T> answer) {
            if (tally != null) {
                tally.add(name, "socket", 1);
            }
            try {
                if (socket == null) {
                    Socket s = new Socket(host, port);
                    s.setTcpNoDelay(true);
                    s.setSoTimeout(Sweep.CALL_TIMEOUT_MILLIS);
                    socket = s;
                    wire = new Wire(new DataInputStream(new BufferedInputStream(s.getInputStream(), BUFFER)),
                            new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), BUFFER)));
                }
                wire.out.writeByte(operation);
                request.write(wire);
                wire.out.flush();
                int status = wire.in.readUnsignedByte();
                if (status == FAILED) {
                    throw new IllegalStateException(name + " on " + host + ":" + port + " failed: " + wire.in.readUTF());
                }
                if (status != OK) {
                    throw new IOException("unknown answer status " + status);
                }
                return answer.read(wire);
            } catch (IOException e) {
                close();   // the streams are out of step now; the next call reconnects
                throw new UncheckedIOException(name + " on " + host + ":" + port + ": " + e.getMessage(), e);
            }
        }

        @Override
        public synchronized void close() {
            if (socket != null) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // closing a loopback socket; nothing to do
                }
                socket = null;
                wire = null;
            }
        }
    }

    @FunctionalInterface
    private interface Request {
        void write(Wire wire) throws IOException;
    }

    @FunctionalInterface
    private interface Answer<T> {
        T read(Wire wire) throws IOException;
    }
}
