package io.switchboard.server.authz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Peer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A watched policy file: a change takes effect, a broken change keeps the old policy. Waits on reload events, never sleeps. */
class PolicyFileTest {
    private static final Peer ALICE = Peer.of("alice", Peer.Authentication.TOKEN, null);
    private static final String PATH = "/switchboard.echo.Echo/echoDoubles";

    @TempDir
    Path dir;

    private static String allowing(String principal) {
        return "{\"name\": \"v-" + principal + "\", \"allow_rules\": [{\"name\": \"only\", \"source\": {\"principals\": [\""
                + principal + "\"]}}]}";
    }

    /** As an editor or a deployment tool would: the new version appears whole. */
    private static void replace(Path file, String content) throws java.io.IOException {
        Path next = file.resolveSibling(file.getFileName() + ".next");
        Files.writeString(next, content);
        Files.move(next, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    @Test
    void aListenerWhoseHandleIsClosedIsToldNoMoreReloads() throws Exception {
        Path file = dir.resolve("authz.json");
        Files.writeString(file, allowing("bob"));
        BlockingQueue<AuthorizationPolicy> removed = new LinkedBlockingQueue<>();
        BlockingQueue<AuthorizationPolicy> kept = new LinkedBlockingQueue<>();
        try (PolicyFile policy = PolicyFile.watch(file, Duration.ofMillis(20))) {
            AutoCloseable handle = policy.onReload(removed::add);   // told first, while it listens
            policy.onReload(kept::add);
            replace(file, allowing("alice"));
            assertEquals("v-alice", kept.poll(30, TimeUnit.SECONDS).name());
            assertEquals("v-alice", removed.poll().name(), "both were told while both listened");

            handle.close();
            replace(file, allowing("carol"));
            assertEquals("v-carol", kept.poll(30, TimeUnit.SECONDS).name(), "the kept listener is told");
            assertTrue(removed.isEmpty(), "the removed listener was told again: " + removed);
        }
    }

    /**
     * A listener is the caller's code: one that throws must not stop the watch, or a policy that
     * takes a caller's rights away later would never come into force.
     */
    @Test
    void aListenerThatThrowsNeitherStopsTheWatchNorKeepsTheOthersFromBeingTold() throws Exception {
        Path file = dir.resolve("authz.json");
        Files.writeString(file, allowing("bob"));
        BlockingQueue<AuthorizationPolicy> told = new LinkedBlockingQueue<>();
        try (PolicyFile policy = PolicyFile.watch(file, Duration.ofMillis(20))) {
            policy.onReload(p -> {
                throw new IllegalStateException("a listener's own failure");
            });
            policy.onReload(told::add);
            replace(file, allowing("alice"));
            AuthorizationPolicy first = told.poll(30, TimeUnit.SECONDS);
            assertEquals("v-alice", first == null ? null : first.name(), "the next listener is told");

            replace(file, allowing("carol"));
            AuthorizationPolicy next = told.poll(30, TimeUnit.SECONDS);
            assertEquals("v-carol", next == null ? null : next.name(), "the watch goes on");
            assertEquals("v-carol", policy.get().name());
            assertEquals(2, policy.reloads());
        }
    }

    @Test
    void aChangedFileTakesEffectAndABrokenOneKeepsTheLastGoodPolicy() throws Exception {
        Path file = dir.resolve("authz.json");
        Files.writeString(file, allowing("bob"));
        BlockingQueue<Optional<AuthorizationPolicy>> events = new LinkedBlockingQueue<>();
        try (PolicyFile policy = PolicyFile.watch(file, Duration.ofMillis(20))) {
            policy.onReload(p -> events.add(Optional.ofNullable(p)));
            AuthorizationInterceptor authz = new AuthorizationInterceptor(policy, CallPaths.COMPONENT,
                    AuthorizationInterceptor.Denials.NONE);
            assertFalse(authz.policy().evaluate(ALICE, PATH).allowed());

            replace(file, allowing("alice"));
            Optional<AuthorizationPolicy> reloaded = events.poll(30, TimeUnit.SECONDS);
            assertTrue(reloaded != null && reloaded.isPresent(), "the changed file was read: " + reloaded);
            assertTrue(authz.policy().evaluate(ALICE, PATH).allowed(), "the new policy is in force");
            assertEquals(1, policy.reloads());
            AuthorizationPolicy good = policy.get();

            replace(file, "{\"name\": \"broken\", \"allow_rules\": [");
            Optional<AuthorizationPolicy> refused = events.poll(30, TimeUnit.SECONDS);
            assertTrue(refused != null && refused.isEmpty(), "the broken file was refused: " + refused);
            assertSame(good, policy.get(), "the last good policy stays");
            assertTrue(authz.policy().evaluate(ALICE, PATH).allowed());
            assertEquals(1, policy.rejected());

            replace(file, allowing("carol"));
            Optional<AuthorizationPolicy> fixed = events.poll(30, TimeUnit.SECONDS);
            assertTrue(fixed != null && fixed.isPresent());
            assertEquals("v-carol", policy.get().name());
            assertEquals(1, policy.rejected(), "the broken version was reported once, not at every look");
            assertNull(events.poll(), "nothing else happened");
        }
    }

    @Test
    void aFileCaughtHalfWrittenIsReadAgainNotReported() throws Exception {
        Path file = dir.resolve("authz.json");
        Files.writeString(file, allowing("bob"));
        try (PolicyFile policy = PolicyFile.watch(file, Duration.ofHours(1))) {   // looks only when told to here
            String whole = allowing("alice");
            Files.writeString(file, whole.substring(0, whole.length() / 2));
            policy.check();
            assertEquals(0, policy.rejected(), "a version seen once that does not parse may be half written");
            Files.writeString(file, whole);
            policy.check();
            assertEquals("v-alice", policy.get().name());
            assertEquals(0, policy.rejected());

            Files.writeString(file, "{}");
            policy.check();
            policy.check();
            assertEquals(1, policy.rejected(), "the same bad version twice is reported");
            assertEquals("v-alice", policy.get().name());
        }
    }

    @Test
    void anInvalidFileRefusesToStart() throws Exception {
        Path file = dir.resolve("authz.json");
        Files.writeString(file, "{\n  \"name\": \"p\"\n}");
        PolicyException e = assertThrows(PolicyException.class, () -> PolicyFile.watch(file, Duration.ofSeconds(1)));
        assertTrue(e.getMessage().contains("allow_rules"), e.getMessage());
        assertThrows(PolicyException.class, () -> PolicyFile.watch(dir.resolve("missing.json"), Duration.ofSeconds(1)));
    }
}
