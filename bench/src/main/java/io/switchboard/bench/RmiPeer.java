package io.switchboard.bench;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.net.InetAddress;
import java.net.Socket;
import java.rmi.Remote;
import java.rmi.RemoteException;
import java.rmi.ServerError;
import java.rmi.server.RMIClientSocketFactory;
import java.rmi.server.UnicastRemoteObject;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Plain Java RMI (JRMP). The server exports an echo object; its stub travels to the client as
 * Base64 on the server's ready line, so no RMI registry port is needed. The stub carries a client
 * socket factory that counts the bytes the client sends (for the wire-bytes column); counting adds
 * one addition per write and nothing else.
 *
 * <pre>{@code
 * String stub = RmiPeer.export();               // in the server JVM
 * try (RmiPeer peer = new RmiPeer(stub)) {      // in the client JVM
 *     Object back = peer.roundTrip(Payload.of(Workload.DOUBLES, 1000));
 * }
 * }</pre>
 */
final class RmiPeer implements Peer {
    private static final AtomicLong SENT = new AtomicLong();
    private static Echo exported;   // strongly held, so the exported object is never collected

    private final Echo echo;

    RmiPeer(String base64Stub) throws IOException, ClassNotFoundException {
        this.echo = (Echo) fromBase64(base64Stub);
    }

    /** An exported object's stub as Base64, to travel on a ready line: no RMI registry port is needed. */
    static String toBase64(Remote stub) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(stub);
        }
        return Base64.getEncoder().encodeToString(bytes.toByteArray());
    }

    /** The stub {@link #toBase64} wrote. */
    static Remote fromBase64(String base64Stub) throws IOException, ClassNotFoundException {
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(Base64.getDecoder().decode(base64Stub)))) {
            return (Remote) in.readObject();
        }
    }

    /** The SC2000 echo interface as an RMI remote interface. */
    public interface Echo extends Remote {
        void empty() throws RemoteException;

        double[] echoDoubles(double[] values) throws RemoteException;

        JavaLinkEntry echoList(JavaLinkEntry head) throws RemoteException;
    }

    @Override
    public String name() {
        return "rmi";
    }

    @Override
    public Object roundTrip(Payload p) throws Exception {
        try {
            switch (p.workload()) {
                case DOUBLES:
                    return echo.echoDoubles(p.doubles());
                case LIST:
                    return echo.echoList(p.javaList());
                default:
                    echo.empty();
                    return null;
            }
        } catch (StackOverflowError e) {
            throw new Failure("StackOverflowError in the client (Java serialization recurses per node)");
        } catch (ServerError e) {
            if (e.getCause() instanceof StackOverflowError) {
                throw new Failure("StackOverflowError in the server (Java serialization recurses per node)");
            }
            throw e;
        } catch (RemoteException e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof StackOverflowError) {
                    throw new Failure("StackOverflowError (Java serialization recurses per node): " + e.getMessage());
                }
            }
            throw e;
        }
    }

    @Override
    public long requestBytes(Payload p) throws Exception {
        long before = SENT.get();
        roundTrip(p);
        return SENT.get() - before;
    }

    @Override
    public void close() {
        // the stub holds no resources of its own; RMI closes idle connections itself
    }

    /** Server side, in the forked JVM: exports the echo object and returns its stub as Base64. */
    static String export() throws IOException {
        exported = new Echo() {
            @Override
            public void empty() {
            }

            @Override
            public double[] echoDoubles(double[] values) {
                return values;
            }

            @Override
            public JavaLinkEntry echoList(JavaLinkEntry head) {
                return head;
            }
        };
        return toBase64(UnicastRemoteObject.exportObject(exported, 0, new CountingSocketFactory(), null));
    }

    /** Opens plain loopback sockets whose output is counted into {@link #SENT}. */
    static final class CountingSocketFactory implements RMIClientSocketFactory, Serializable {
        private static final long serialVersionUID = 1L;

        @Override
        public Socket createSocket(String host, int port) throws IOException {
            return new Socket(InetAddress.getByName(host), port) {
                private OutputStream counted;

                @Override
                public synchronized OutputStream getOutputStream() throws IOException {
                    if (counted == null) {
                        counted = new CountingOutputStream(super.getOutputStream(), SENT);
                    }
                    return counted;
                }
            };
        }

        // RMI reuses a connection only for an equal factory
        @Override
        public boolean equals(Object o) {
            return o instanceof CountingSocketFactory;
        }

        @Override
        public int hashCode() {
            return CountingSocketFactory.class.hashCode();
        }
    }
}
