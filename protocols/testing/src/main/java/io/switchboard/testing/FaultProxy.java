package io.switchboard.testing;

import io.switchboard.protocol.DaemonThreads;
import io.switchboard.protocol.Endpoint;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on loopback for fault-injection tests: it forwards every connection to a real
 * server and, on command, delays, drops (black-holes), resets or truncates the traffic.
 *
 * <pre>{@code
 * try (FaultProxy proxy = FaultProxy.to(grpcEndpoint)) {
 *     Endpoint viaProxy = proxy.route(grpcEndpoint);
 *     proxy.resetOnce(FaultProxy.Direction.REQUEST, 2 << 20);   // cut the next connection after 2 MiB sent
 *     ...
 * }
 * }</pre>
 *
 * Faults apply to traffic from then on, on open and new connections: {@link #hold} holds each
 * piece of data back until {@link #pass}, {@link #blackHole} reads and discards everything (the peer sees silence),
 * {@link #resetOnce} and {@link #truncateOnce} fire once, when one connection has carried the
 * given number of bytes in one direction: a reset aborts both sides with a TCP RST, a truncation
 * forwards exactly that many bytes and then closes both sides normally (FIN). {@link #trickle}
 * forwards one direction a byte at a time. {@link #resetAll} aborts every open connection now.
 * Loopback only: it listens on 127.0.0.1.
 */
public final class FaultProxy implements AutoCloseable {
    /** Which way data flows: from the caller to the server, or back. */
    public enum Direction { REQUEST, RESPONSE }

    private final InetSocketAddress target;
    private final ServerSocket listener;
    private final List<Link> links = new CopyOnWriteArrayList<>();
    private final AtomicInteger accepted = new AtomicInteger();
    private volatile CountDownLatch holding;
    /** Pieces read and not yet forwarded or dropped. */
    private final AtomicInteger inHand = new AtomicInteger();
    private volatile boolean blackHole;
    private volatile boolean refusing;
    private volatile Trigger trigger;
    /** {@link #trickle}: the direction slowed, and the pause after each byte of it, in nanoseconds. */
    private volatile Direction trickling;
    private volatile long tricklePauseNanos;

    private record Trigger(Direction direction, long afterBytes, boolean reset) {
    }

    private FaultProxy(InetSocketAddress target) throws IOException {
        this.target = target;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        DaemonThreads.start(this::acceptLoop, "fault-proxy-" + listener.getLocalPort());
    }

    /** A proxy in front of {@code host:port}. */
    public static FaultProxy to(String host, int port) {
        try {
            return new FaultProxy(new InetSocketAddress(host, port));
        } catch (IOException e) {
            throw new IllegalStateException("cannot open a proxy port", e);
        }
    }

    /** A proxy in front of the host and port of an endpoint's address. */
    public static FaultProxy to(Endpoint endpoint) {
        URI uri = endpoint.uri();
        return to(uri.getHost(), uri.getPort());
    }

    public int port() {
        return listener.getLocalPort();
    }

    /**
     * The same endpoint with its address pointing at this proxy, and without its query: a tcp
     * endpoint's names the server's Unix socket, which a client on this host would take instead.
     */
    public Endpoint route(Endpoint endpoint) {
        URI u = endpoint.uri();
        if (u.getPort() != target.getPort()) {
            throw new IllegalArgumentException(endpoint + " is not the proxy's target " + target);
        }
        String address = endpoint.address().replaceFirst(":" + u.getPort(), ":" + port());
        int query = address.indexOf('?');
        if (query >= 0) {
            address = address.substring(0, query);
        }
        return new Endpoint(endpoint.protocol(), address);
    }

    /** Connections accepted so far. */
    public int connections() {
        return accepted.get();
    }

    /** Forward everything as it comes (the default): releases what is held; clears black hole and pending triggers. */
    public void pass() {
        release();
        blackHole = false;
        refusing = false;
        trigger = null;
        trickling = null;
    }

    /**
     * Hold each piece of data back, in both directions, until {@link #pass}: a server as slow as
     * the test wants, with no clock involved.
     */
    public synchronized void hold() {
        if (holding == null) {
            holding = new CountDownLatch(1);
        }
    }

    private synchronized void release() {
        if (holding != null) {
            holding.countDown();
            holding = null;
        }
    }

    /**
     * Waits until the proxy has nothing in hand: every piece of data it read forwarded, or dropped
     * with its connection (after {@link #pass}, what was held too), or {@code timeout} passes; true
     * if so.
     */
    public boolean awaitNothingHeld(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (inHand.get() > 0) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(5);   // polling the count of held pieces
        }
        return true;
    }

    /**
     * Forward {@code direction}'s data one byte at a time, pausing {@code pause} after each, until
     * {@link #pass}: a peer that keeps a connection just alive, each byte well within any read
     * timeout, while a whole message takes far longer.
     */
    public void trickle(Direction direction, Duration pause) {
        tricklePauseNanos = pause.toNanos();
        trickling = direction;
    }

    /** Read and discard everything, in both directions; connections stay open. */
    public void blackHole() {
        blackHole = true;
    }

    /** Abort (RST) the first connection that carries more than {@code afterBytes} in {@code direction}; once. */
    public void resetOnce(Direction direction, long afterBytes) {
        trigger = new Trigger(direction, afterBytes, true);
    }

    /** Forward {@code afterBytes} in {@code direction} on the first connection that gets there, then close it; once. */
    public void truncateOnce(Direction direction, long afterBytes) {
        trigger = new Trigger(direction, afterBytes, false);
    }

    /** Cut the line: abort every open connection, and every new one as it arrives, until {@link #pass()}. */
    public void refuse() {
        refusing = true;
        resetAll();
    }

    /** Abort every open connection now with a TCP RST. */
    public void resetAll() {
        for (Link l : links) {
            l.abort(true);
        }
    }

    @Override
    public void close() {
        release();
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing
        }
        resetAll();
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                accepted.incrementAndGet();
                if (refusing) {
                    client.setSoLinger(true, 0);
                    client.close();
                    continue;
                }
                Socket server = new Socket();
                try {
                    server.connect(target, 5_000);
                } catch (IOException e) {
                    client.close();
                    continue;
                }
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                Link link = new Link(client, server);
                links.add(link);
                link.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    /** One proxied connection: two pumps. */
    private final class Link {
        private final Socket client;
        private final Socket server;
        private final long[] carried = new long[2];
        private final AtomicInteger pumps = new AtomicInteger(2);
        private volatile boolean closed;

        Link(Socket client, Socket server) {
            this.client = client;
            this.server = server;
        }

        void start() {
            pump(client, server, Direction.REQUEST);
            pump(server, client, Direction.RESPONSE);
        }

        private void pump(Socket from, Socket to, Direction direction) {
            DaemonThreads.start(() -> {
                byte[] buf = new byte[16 << 10];
                try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                    for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
                        if (blackHole) {
                            continue;
                        }
                        inHand.incrementAndGet();   // counted before the gate is read: see awaitNothingHeld
                        try {
                            CountDownLatch gate = holding;
                            if (gate != null) {
                                gate.await();
                            }
                            if (!forward(out, buf, n, direction)) {
                                return;
                            }
                        } finally {
                            inHand.decrementAndGet();
                        }
                    }
                    to.shutdownOutput(); // pass the peer's FIN on
                    if (pumps.decrementAndGet() == 0) {
                        abort(false);
                    }
                } catch (IOException | InterruptedException e) {
                    abort(false);
                }
            }, "fault-proxy-" + direction);
        }

        /** Writes one piece read, as far as a trigger allows; false when the connection is done. */
        private boolean forward(OutputStream out, byte[] buf, int n, Direction direction) throws IOException {
            int allowed = n;
            Trigger armed = trigger;
            boolean fire = false;
            synchronized (this) {
                long before = carried[direction.ordinal()];
                if (armed != null && armed.direction == direction && before + n > armed.afterBytes) {
                    synchronized (FaultProxy.this) {
                        if (trigger == armed) {
                            trigger = null;
                            fire = true;
                            allowed = (int) Math.max(0, armed.afterBytes - before);
                        }
                    }
                }
                carried[direction.ordinal()] = before + allowed;
            }
            if (fire && armed.reset) {
                abort(true);
                return false;
            }
            if (trickling == direction) {
                for (int i = 0; i < allowed; i++) {
                    out.write(buf[i]);
                    out.flush();
                    try {
                        TimeUnit.NANOSECONDS.sleep(tricklePauseNanos);   // the fault itself: a peer this slow
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        abort(true);
                        return false;
                    }
                }
            } else {
                out.write(buf, 0, allowed);
                out.flush();
            }
            if (fire) {
                abort(false);
                return false;
            }
            return true;
        }

        /** Closes both sides: with a TCP RST when {@code reset}, else normally. */
        void abort(boolean reset) {
            if (closed) {
                return;
            }
            closed = true;
            links.remove(this);
            for (Socket s : new Socket[] {client, server}) {
                try {
                    if (reset) {
                        s.setSoLinger(true, 0);
                    }
                    s.close();
                } catch (IOException ignored) {
                    // already gone
                }
            }
        }
    }
}
