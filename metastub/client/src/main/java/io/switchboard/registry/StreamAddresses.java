package io.switchboard.registry;

import io.switchboard.protocol.PermissionDeniedException;
import io.switchboard.protocol.TlsSettings;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;

/**
 * Where each registry streams its changes, asked once per JVM (not once per {@link RegistryClient}):
 * a process that opens thousands of clients to one registry, as thousands of processes would, asks
 * once, and its watches open at once on the shared HTTP/2 connection instead of queueing behind a
 * SOAP call each on the few connect threads. After a stream fails, the next ask starts at the
 * registry after the one that named it: that one may be the registry that hangs.
 */
final class StreamAddresses {
    private static final long QUIET_NANOS = Duration.ofSeconds(1).toNanos();

    /** The registry servers a client reads from, in the order it tries them, and the trust its stream is reached with. */
    record Key(List<String> urls, TlsSettings tls) {
    }

    /** Where a registry streams (empty: it does not), and which of the key's registries said so. */
    record Answer(Optional<String> stream, int registry) {
    }

    /** One registry's answer, or its latest failure, and where the next ask starts; guarded by itself. */
    private static final class Probe {
        Optional<String> stream;
        int answeredBy;
        int startAt;
        RuntimeException failure;
        long failedAt;
    }

    private static final Map<Key, Probe> PROBES = new ConcurrentHashMap<>();

    private StreamAddresses() {
    }

    /**
     * The stream address for {@code key} (null: the registry has none), asking {@code ask} when
     * nobody has yet, from the registry it is given (an index into the key's). Clients that ask
     * together wait for one answer; within 1 s of a failure they hear that failure, not a call
     * each (no storm of calls to a registry that is down).
     */
    static String get(Key key, IntFunction<Answer> ask) {
        return get(key, ask, false);
    }

    /**
     * {@link #get(Key, IntFunction)}; {@code byName}: the ask names the names it watches, and a
     * registry's policy that refused a watch of every name (or of other names) may allow it, so a
     * refusal is neither taken from the last ask nor kept for the next.
     */
    static String get(Key key, IntFunction<Answer> ask, boolean byName) {
        Probe p = PROBES.computeIfAbsent(key, k -> new Probe());
        synchronized (p) {
            if (p.stream == null) {
                if (p.failure != null && System.nanoTime() - p.failedAt < QUIET_NANOS
                        && !(byName && p.failure instanceof PermissionDeniedException)) {
                    throw p.failure;
                }
                try {
                    Answer a = Objects.requireNonNull(ask.apply(p.startAt));
                    p.stream = Objects.requireNonNull(a.stream());
                    p.answeredBy = a.registry();
                    p.failure = null;
                } catch (PermissionDeniedException e) {
                    if (!byName) {
                        p.failure = e;
                        p.failedAt = System.nanoTime();
                    }
                    throw e;
                } catch (RuntimeException e) {
                    p.failure = e;
                    p.failedAt = System.nanoTime();
                    throw e;
                }
            }
            return p.stream.orElse(null);
        }
    }

    /**
     * The stream at {@code address} failed: the next client to need it asks again, starting at the
     * registry after the one that named it.
     */
    static void failed(Key key, String address) {
        Probe p = PROBES.get(key);
        if (p == null) {
            return;
        }
        synchronized (p) {
            if (p.stream != null && Objects.equals(p.stream.orElse(null), address)) {
                p.stream = null;
                p.startAt = (p.answeredBy + 1) % key.urls().size();
            }
        }
    }
}
