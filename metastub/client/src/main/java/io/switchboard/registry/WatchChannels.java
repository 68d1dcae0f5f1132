package io.switchboard.registry;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.switchboard.protocol.DaemonThreads;
import io.switchboard.protocol.TlsSettings;
import io.switchboard.protocol.grpc.GrpcTls;
import java.net.URI;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * What every {@link RegistryWatch} of this JVM shares: one HTTP/2 connection per registry watch
 * stream (counted by its users, closed with the last), a few threads that run the listeners, and
 * the threads that connect and wait to try again. A thousand watches cost one connection and no
 * thread of their own.
 */
final class WatchChannels {
    /** Runs the listeners: one event at a time per watch, watches side by side. */
    static final ExecutorService EVENTS = Executors.newFixedThreadPool(
            Math.max(2, Runtime.getRuntime().availableProcessors()), DaemonThreads.numbered("registry-watch-events"));
    /**
     * Asks the registry where its stream is (a blocking SOAP call, once per client until the stream
     * fails) and opens it: a few threads, which end when idle for 30 s.
     */
    static final ExecutorService CONNECT = connectPool();
    static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(DaemonThreads.numbered("registry-watch-timer"));

    private record Key(String address, TlsSettings tls) {
    }

    private static final class Shared {
        final ManagedChannel channel;
        int users;

        Shared(ManagedChannel channel) {
            this.channel = channel;
        }
    }

    private static final Map<Key, Shared> CHANNELS = new HashMap<>();
    /** When each reason was last logged at WARN; the same again within {@link #QUIET_NANOS} goes to DEBUG. */
    private static final Map<String, Long> LOGGED = new java.util.concurrent.ConcurrentHashMap<>();
    private static final long QUIET_NANOS = TimeUnit.SECONDS.toNanos(10);

    private WatchChannels() {
    }

    /**
     * Whether a failure about {@code subject} (a registry's address) is worth a WARN line: the first
     * in 10 s is; the same for the other watches of the JVM (a registry that stops ends them all at
     * once) is not.
     */
    static boolean worthWarning(String subject) {
        long now = System.nanoTime();
        Long last = LOGGED.get(subject);
        if (last != null && now - last < QUIET_NANOS) {
            return false;
        }
        LOGGED.put(subject, now);
        return true;
    }

    /** {@code millis} moved by up to a quarter either way: watches that failed together do not come back together. */
    static long jitter(long millis) {
        return millis * 3 / 4 + java.util.concurrent.ThreadLocalRandom.current().nextLong(millis / 2 + 1);
    }

    private static ExecutorService connectPool() {
        java.util.concurrent.ThreadPoolExecutor pool = new java.util.concurrent.ThreadPoolExecutor(4, 4, 30,
                TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(), DaemonThreads.numbered("registry-watch-connect"));
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /** The connection to the stream at {@code address} ({@code grpc://} or {@code grpcs://HOST:PORT}); release it when done. */
    static synchronized ManagedChannel acquire(String address, TlsSettings tls) {
        Key key = new Key(address, tls);
        Shared s = CHANNELS.get(key);
        if (s == null || s.channel.isShutdown()) {
            s = new Shared(open(address, tls));
            CHANNELS.put(key, s);
        }
        s.users++;
        return s.channel;
    }

    static synchronized void release(ManagedChannel channel) {
        for (var it = CHANNELS.entrySet().iterator(); it.hasNext(); ) {
            Shared s = it.next().getValue();
            if (s.channel == channel) {
                if (--s.users <= 0) {
                    it.remove();
                    channel.shutdown();
                }
                return;
            }
        }
    }

    private static ManagedChannel open(String address, TlsSettings tls) {
        URI uri = URI.create(address);
        if (!("grpcs".equals(uri.getScheme()) || "grpc".equals(uri.getScheme())) || uri.getHost() == null
                || uri.getPort() < 0) {
            throw new IllegalArgumentException("not a watch stream address: " + address);
        }
        return NettyChannelBuilder.forAddress(uri.getHost(), uri.getPort(), GrpcTls.channel(uri.getScheme(), tls))
                .executor(EVENTS)
                .maxInboundMessageSize(WatchStreamMethod.MAX_MESSAGE_BYTES)
                // a registry that is cut off answers nothing: a ping unanswered for 5 s ends the
                // streams, and the watches move to the next registry server
                .keepAliveTime(10, TimeUnit.SECONDS)
                .keepAliveTimeout(5, TimeUnit.SECONDS)
                .build();
    }
}
