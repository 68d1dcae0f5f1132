package io.switchboard.bench;

import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoService;
import io.switchboard.protocol.DaemonThreads;
import io.switchboard.protocol.spi.PhaseMarks;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.server.ComponentServer;
import io.switchboard.registry.server.RegistryServer;
import io.switchboard.testing.TestCertificates;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;

/**
 * The server JVM of {@code ./switchboard bench}, forked by {@link ServerProcess}: serves the echo
 * workloads over every protocol under test on loopback, prints one {@code READY key=value ...}
 * line, then obeys commands on standard input ({@code gc}, {@code jit} (its JIT compilers' time so far, ms), {@code quit}, and {@code phases} when started
 * with {@code -Dswitchboard.phases=true}: the phase marks recorded since the last one); it exits when its input
 * closes, so it never outlives the client.
 *
 * <pre>{@code
 * java -Xms2g -Xmx2g -XX:+UseG1GC -cp CLASSPATH io.switchboard.bench.BenchServer
 * READY pid=4711 registry=http://127.0.0.1:40123/axis2/services/Registry socket=40125 oos=40127 rmi=rO0AB...
 * }</pre>
 *
 * <p>Started with {@code --tls KEY_STORE TRUST_STORE}, it also serves the security cost rows
 * ({@link SecuredEchoServers}) and names their endpoints on the ready line.
 */
public final class BenchServer {
    /** Largest message either side accepts: above SOAP's 64 MiB default, so the sweep's big cells are not refused. */
    static final long MAX_MESSAGE_BYTES = 1L << 30;

    private BenchServer() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("java.rmi.server.hostname", "127.0.0.1");
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        String secret = UUID.randomUUID().toString();
        try (RegistryServer registry = RegistryServer.builder().secret(secret).start();
             ComponentServer components = ComponentServer.builder()
                     .settings(ServerSettings.defaults().withMaxMessageBytes(MAX_MESSAGE_BYTES))
                     .registry(registry.endpoint(), secret).lease(java.time.Duration.ZERO).build();   // no heartbeats amid the timings
             ServerSocket raw = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
             ServerSocket oos = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
             ServerSocket fory = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            // with marks on, the server's chain marks INVOKE_START/INVOKE_END around each run (PhaseMarkInterceptor)
            components.export(EchoComponent.skeleton(new EchoService()));
            PhaseBreakdown.ServerMarks marks = PhaseMarks.ENABLED ? PhaseBreakdown.ServerMarks.install() : null;
            RawSocketPeer.serve(raw);
            java.nio.file.Path rawUnix = Files.createTempDirectory("sb-bench-").resolve("raw.sock");
            rawUnix.getParent().toFile().deleteOnExit();
            rawUnix.toFile().deleteOnExit();   // deleted before its directory: the last registered goes first
            RawSocketPeer.serve(rawUnix);
            ObjectStreamPeer.serve(oos);
            ForyPeer.serve(fory);
            // the plain libraries, with no Switchboard code: grpc-java unary (default and direct executor) and Axis2
            io.grpc.Server plainGrpc = PlainGrpcPeer.serve(false);
            io.grpc.Server plainGrpcDirect = PlainGrpcPeer.serve(true);
            int axis2 = BareAxis2Peer.serve();
            // the security cost rows, only when asked: --tls KEY_STORE TRUST_STORE (made by the client, its password TestCertificates')
            SecuredEchoServers secured = args.length == 3 && args[0].equals("--tls")
                    ? SecuredEchoServers.start(TlsSettings.of(Path.of(args[1]), Path.of(args[2]), TestCertificates.PASSWORD))
                    : null;
            out.println("READY pid=" + ProcessHandle.current().pid() + " registry=" + registry.endpoint()
                    + " socket=" + raw.getLocalPort() + " " + RawSocketPeer.UNIX_NAME + "=" + rawUnix + " oos=" + oos.getLocalPort() + " " + ForyPeer.NAME + "=" + fory.getLocalPort()
                    + " " + PlainGrpcPeer.NAME + "=" + plainGrpc.getPort() + " " + PlainGrpcPeer.DIRECT_NAME + "=" + plainGrpcDirect.getPort()
                    + " " + BareAxis2Peer.NAME + "=" + axis2 + (secured == null ? "" : " " + secured.readyFields())
                    + " protocols=" + String.join(",", Protocols.names()) + " rmi=" + RmiPeer.export()
                    // the registry's write secret, for the matrix workers this run starts; the pipe is the bench's own
                    + " secret=" + secret);
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null && !line.equals("quit"); line = in.readLine()) {
                if (line.equals("gc")) {
                    System.gc();   // a full collection with G1 unless -XX:+ExplicitGCInvokesConcurrent
                    out.println("gc-done");
                } else if (line.equals("jit")) {
                    out.println("jit " + java.lang.management.ManagementFactory.getCompilationMXBean().getTotalCompilationTime());
                } else if (line.equals("phases") && marks != null) {
                    out.println("phases " + marks.drain());   // every mark since the last drain, one line
                }
            }
        }
        System.exit(0);   // RMI's non-daemon threads would keep the JVM alive
    }

    /** What a server thread does with one accepted connection. */
    interface Connection<C> {
        void serve(C connection) throws Exception;
    }

    /** A listener's next connection: a socket's or a channel's {@code accept}. */
    interface Accept<C extends AutoCloseable> {
        C next() throws IOException;
    }

    /** Accepts connections on a daemon thread, one daemon thread per connection. */
    static void acceptLoop(ServerSocket listener, String name, Connection<Socket> handler) {
        acceptLoop(listener::accept, listener::isClosed, name, handler);
    }

    /** The same for a channel: a Unix domain socket's, which has no {@link ServerSocket}. */
    static void acceptLoop(java.nio.channels.ServerSocketChannel listener, String name,
                           Connection<java.nio.channels.SocketChannel> handler) {
        acceptLoop(listener::accept, () -> !listener.isOpen(), name, handler);
    }

    private static <C extends AutoCloseable> void acceptLoop(Accept<C> accept, java.util.function.BooleanSupplier closed,
                                                             String name, Connection<C> handler) {
        DaemonThreads.start(() -> {
            while (!closed.getAsBoolean()) {
                C c;
                try {
                    c = accept.next();
                } catch (IOException e) {
                    return;
                }
                DaemonThreads.start(() -> {
                    try (c) {
                        handler.serve(c);
                    } catch (Exception | StackOverflowError e) {
                        System.err.println(name + ": connection ended: " + e);
                    }
                }, name + "-connection");
            }
        }, name + "-accept");
    }
}
