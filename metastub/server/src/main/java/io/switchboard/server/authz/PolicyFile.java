package io.switchboard.server.authz;

import io.switchboard.protocol.DaemonThreads;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An authorization policy file, read at start and again whenever its content changes (checked
 * every interval, as grpc-java's {@code FileAuthorizationServerInterceptor} does): a new policy
 * replaces the old one atomically, so every call sees one or the other whole. A file that does
 * not parse at start is refused ({@link PolicyException}); one that stops parsing later leaves
 * the last good policy in force, with one ERROR line per bad version of the file (a version is
 * reported once it reads the same at two looks in a row, so that a file caught half written is
 * not). API.
 *
 * <pre>{@code
 * try (PolicyFile policy = PolicyFile.watch(Path.of("/etc/switchboard/authz.json"), Duration.ofSeconds(5))) {
 *     ComponentServer server = ComponentServer.builder().authorization(policy).build();
 *     ...
 * }
 * }</pre>
 */
public final class PolicyFile implements Supplier<AuthorizationPolicy>, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PolicyFile.class);

    private final Path file;
    private final AtomicReference<AuthorizationPolicy> current;
    /** The bytes last read, good or bad, so that one bad version is reported once. */
    private volatile byte[] lastSeen;
    /** A version that did not parse, seen once: a file caught half written is read again before it is reported. */
    private volatile byte[] unsettled;
    private final AtomicLong reloads = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    private final List<Consumer<AuthorizationPolicy>> listeners = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService poller;

    private PolicyFile(Path file, byte[] content, AuthorizationPolicy policy, Duration interval) {
        this.file = file;
        this.lastSeen = content;
        this.current = new AtomicReference<>(policy);
        this.poller = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("authz-policy-watch"));
        long every = Math.max(1, interval.toMillis());
        poller.scheduleWithFixedDelay(this::checkAndGoOn, every, every, TimeUnit.MILLISECONDS);
    }

    /**
     * Reads {@code file} and checks it again every {@code interval}.
     *
     * @throws PolicyException when the file cannot be read or its policy is invalid
     */
    public static PolicyFile watch(Path file, Duration interval) {
        Objects.requireNonNull(file, "file");
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("the interval is positive");
        }
        byte[] content = readBytes(file);
        AuthorizationPolicy policy = AuthorizationPolicy.read(file);
        return new PolicyFile(file, content, policy, interval);
    }

    private static byte[] readBytes(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new PolicyException(0, 0, "cannot read " + file + ": " + e.getMessage());
        }
    }

    /** The policy in force. */
    @Override
    public AuthorizationPolicy get() {
        return current.get();
    }

    public Path file() {
        return file;
    }

    /** How many times a changed file replaced the policy. */
    public long reloads() {
        return reloads.get();
    }

    /** How many changed versions of the file were refused (the policy before them stayed). */
    public long rejected() {
        return rejected.get();
    }

    /**
     * Calls {@code listener} on the watching thread with each new policy once it is in force, and
     * with null for each changed version of the file that was refused, until the returned handle
     * is closed (a listener of a server that stops before the file does).
     */
    public AutoCloseable onReload(Consumer<AuthorizationPolicy> listener) {
        listeners.add(Objects.requireNonNull(listener));
        return () -> listeners.remove(listener);
    }

    /**
     * One look, whatever it meets: an exception out of a task scheduled with a fixed delay cancels
     * every later run, and the policy in force would then never change again.
     */
    private void checkAndGoOn() {
        try {
            check();
        } catch (RuntimeException e) {
            LOG.error("authorization policy {}: a look at the file failed, keeping policy {}; will look again", file,
                    current.get().name(), e);
        }
    }

    /** Tells each listener, each whatever the others do: a listener is the caller's code. */
    private void tell(AuthorizationPolicy next) {
        for (Consumer<AuthorizationPolicy> l : listeners) {
            try {
                l.accept(next);
            } catch (RuntimeException e) {
                LOG.error("authorization policy {}: a reload listener failed", file, e);
            }
        }
    }

    /** One look at the file: parses it when its bytes changed. */
    void check() {
        byte[] content;
        try {
            content = Files.readAllBytes(file);
        } catch (IOException e) {
            if (lastSeen != null) {   // once per disappearance, not every interval
                LOG.error("authorization policy {} cannot be read; keeping policy {}: {}", file, current.get().name(),
                        e.toString());
                lastSeen = null;
            }
            return;
        }
        if (Arrays.equals(content, lastSeen)) {
            return;
        }
        lastSeen = content;
        AuthorizationPolicy next;
        try {
            next = AuthorizationPolicy.parse(new String(content, java.nio.charset.StandardCharsets.UTF_8));
        } catch (PolicyException e) {
            if (!Arrays.equals(content, unsettled)) {
                unsettled = content;
                lastSeen = null;   // look again at the next interval
                return;
            }
            unsettled = null;
            rejected.incrementAndGet();
            LOG.error("authorization policy {} not reloaded, keeping policy {}: {}", file, current.get().name(),
                    e.getMessage());
            tell(null);
            return;
        }
        unsettled = null;
        current.set(next);
        reloads.incrementAndGet();
        LOG.info("authorization policy {} reloaded: {}", file, next);
        tell(next);
    }

    /** Stops watching; the policy in force stays. */
    @Override
    public void close() {
        poller.shutdownNow();
    }

    @Override
    public String toString() {
        return "PolicyFile[" + file + ": " + current.get() + "]";
    }
}
