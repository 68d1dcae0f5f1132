package io.switchboard.registry.server;

import io.switchboard.testing.ChildJvm;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.RegistryClient;
import io.switchboard.registry.file.FileRegistryStore;
import io.switchboard.registry.store.RegistryStore;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Endpoint;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The file store: entries survive a restart, and neither a crash nor a bad file loses any silently. */
class FileRegistryStoreTest {
    @TempDir
    Path dir;

    private static ComponentEntry entry(String name, String instance) {
        return new ComponentEntry(name, instance, List.of(new Endpoint("grpc", "grpc://127.0.0.1:9999/" + name),
                new Endpoint("soap", "http://127.0.0.1:9998/axis2/services/" + name)),
                ConformanceComponent.DESCRIPTOR.schema(), "syntax = \"proto3\";", "http://127.0.0.1:9998/x?wsdl",
                Instant.parse("2026-11-22T10:15:30.123456789Z"), List.of(ComponentEntry.CALL_IDS), 30);
    }

    @Test
    void entriesComeBackAfterARestartExactlyAsTheyWere() throws Exception {
        Path file = dir.resolve("nested/registry.json");
        try (FileRegistryStore store = FileRegistryStore.open(file)) {
            store.bind(entry("Alpha", "a1"));
            store.bind(entry("Alpha", "a2"));
            store.bind(entry("Beta", "b1"));
            store.rebind(entry("Gamma", "g1"));
            assertEquals(1, store.unbind("Gamma", null));
        }
        try (FileRegistryStore store = FileRegistryStore.open(file)) {
            assertEquals(List.of(entry("Alpha", "a1"), entry("Alpha", "a2")), store.lookup("Alpha"),
                    "every field, and the order of instances, come back");
            assertEquals(3, store.list().size());
            assertEquals(3, store.size(), "counted as listed");
            assertThrows(RegistryStore.AlreadyBoundException.class, () -> store.bind(entry("Beta", "b1")));
        }
        assertTrue(Files.readString(file).contains("\"format\": \"switchboard-registry\""));
    }

    @Test
    void aRegistryServerRestartedOverTheFileServesItsEntries() {
        Path file = dir.resolve("registry.json");
        try (RegistryServer registry = RegistryServer.builder().store(FileRegistryStore.open(file)).secret("s").start();
             RegistryClient writer = RegistryClient.connect(registry.endpoint(), "s")) {
            writer.bind(entry("Durable", "d1").withLeaseSeconds(0));
        }
        try (RegistryServer registry = RegistryServer.builder().store(FileRegistryStore.open(file)).start();
             RegistryClient reader = RegistryClient.connect(registry.endpoint())) {
            List<ComponentEntry> found = reader.lookup("Durable");
            assertEquals(1, found.size());
            assertEquals(ConformanceComponent.DESCRIPTOR.schema(), found.get(0).interfaceSchema());
        }
        assertTrue(!readString(file).contains("\"s\""), "the store holds entries only, no credential");
    }

    @Test
    void aBadFileStopsTheStoreWithAMessageNamingItAndIsLeftAlone() throws Exception {
        Path file = dir.resolve("registry.json");
        try (FileRegistryStore store = FileRegistryStore.open(file)) {
            store.bind(entry("Alpha", "a1"));
        }
        byte[] good = Files.readAllBytes(file);
        List<byte[]> bad = List.of(
                java.util.Arrays.copyOf(good, good.length / 2),                       // torn in the middle
                new byte[0],                                                           // empty
                "{\"format\":\"switchboard-registry\",\"version\":3,\"entries\":[]}".getBytes(StandardCharsets.UTF_8),
                "{\"format\":\"something-else\",\"version\":1,\"entries\":[]}".getBytes(StandardCharsets.UTF_8),
                "{\"format\":\"switchboard-registry\",\"version\":1,\"entries\":[{\"name\":\"X\"}]}"
                        .getBytes(StandardCharsets.UTF_8),                             // an entry without its id
                new byte[] {(byte) 0xC3, (byte) 0x28, '{', '}'},                       // not UTF-8
                (new String(good, StandardCharsets.UTF_8) + "{}").getBytes(StandardCharsets.UTF_8));
        for (byte[] content : bad) {
            Files.write(file, content);
            RegistryStore.StoreException e = assertThrows(RegistryStore.StoreException.class,
                    () -> FileRegistryStore.open(file));
            assertTrue(e.getMessage().contains(file.toString()) && e.getMessage().contains("does not start"),
                    e.getMessage());
            assertArrayEquals(content, Files.readAllBytes(file), "a bad store is never overwritten");
        }
        Files.write(file, good);
        RegistryStore.StoreException tooLarge = assertThrows(RegistryStore.StoreException.class,
                () -> FileRegistryStore.open(file, 100));
        assertTrue(tooLarge.getMessage().contains("over the limit"), tooLarge.getMessage());
        try (FileRegistryStore store = FileRegistryStore.open(file, 100_000)) {
            assertEquals(1, store.list().size());
            assertThrows(IllegalArgumentException.class, () -> store.rebind(FileStoreWriterMain.burst(1,
                    "y".repeat(200_000))), "a write that would pass the limit is refused");
            assertEquals(1, store.list().size());
        }
        assertArrayEquals(good, Files.readAllBytes(file));
    }

    @Test
    void aSecondOpenOfTheSameFileIsRefusedAndLeftoversOfACrashAreCleared() throws Exception {
        Path file = dir.resolve("registry.json");
        Path leftover = dir.resolve(".registry.json.12345.tmp");
        Files.writeString(leftover, "{half");
        try (FileRegistryStore store = FileRegistryStore.open(file)) {
            assertTrue(Files.notExists(leftover));
            RegistryStore.StoreException e = assertThrows(RegistryStore.StoreException.class,
                    () -> FileRegistryStore.open(file));
            assertTrue(e.getMessage().contains("in use"), e.getMessage());
            store.bind(entry("Alpha", "a1"));
        }
        try (FileRegistryStore again = FileRegistryStore.open(file)) {
            assertEquals(1, again.list().size(), "closing releases the lock");
        }
    }

    /**
     * A separate JVM writes in a burst and is killed with SIGKILL at a random moment, over and
     * over; every time the store loads and holds a prefix of the writes (see {@link #assertPrefix}).
     */
    @Test
    void killingTheWriterMidBurstAlwaysLeavesALoadablePrefix() throws Exception {
        Path file = dir.resolve("registry.json");
        Random random = new Random(42);
        Prefix before = new Prefix(0, -1);
        int rounds = 8;
        for (int round = 0; round < rounds; round++) {
            try (ChildJvm writer = ChildJvm.start(dir.resolve("writer-" + round + ".err"), FileStoreWriterMain.class,
                    file.toString(), "4000")) {
                assertEquals(before.bursts(), Integer.parseInt(writer.await("ready")), "round " + round
                        + " starts where the last one's store ended");
                Thread.sleep(50 + random.nextInt(400));   // pacing: the moment of the kill, not a wait for an event
                writer.kill();
            }
            before = assertPrefix(file, before, round);
        }
        assertTrue(before.bursts() > rounds, "the writer made progress (" + before.bursts() + " writes)");
        try (var leftovers = Files.list(dir)) {
            assertTrue(leftovers.noneMatch(p -> p.getFileName().toString().endsWith(".tmp")));
        }
    }

    /**
     * A writer stopped right after the first write of its round, which follows a round stopped
     * between the two writes of one step: the counter then still says what the round before last
     * wrote (Burst 2 is there, Counter says 0), a prefix of the writes all the same. Halting at
     * chosen writes makes this case, which random kills reach only now and then, happen every run.
     */
    @Test
    void aWriterStoppedAfterTheFirstWriteOfARoundLeavesAPrefixToo() throws Exception {
        Path file = dir.resolve("registry.json");
        Prefix before = new Prefix(0, -1);
        int[] haltAfter = {3, 1};   // Burst 0, Counter 0, Burst 1 | Burst 2
        for (int round = 0; round < haltAfter.length; round++) {
            runHaltingWriter(file, round, Integer.toString(haltAfter[round]));
            before = assertPrefix(file, before, round);
        }
        assertEquals(new Prefix(3, 0), before);
    }

    /**
     * A writer halted right after each step of a compaction (new snapshot written to its
     * temporary file; renamed over the old one; old journal deleted), at different compactions,
     * leaves a prefix every time, and the next writer goes on from it.
     */
    @Test
    void aWriterHaltedBetweenTheStepsOfACompactionLeavesAPrefix() throws Exception {
        Path file = dir.resolve("registry.json");
        Prefix before = new Prefix(0, -1);
        String[] haltAt = {FileRegistryStore.SNAPSHOT_WRITTEN + ":1", FileRegistryStore.SNAPSHOT_RENAMED + ":1",
                FileRegistryStore.JOURNAL_DELETED + ":1", FileRegistryStore.SNAPSHOT_RENAMED + ":2",
                FileRegistryStore.SNAPSHOT_WRITTEN + ":3"};
        for (int round = 0; round < haltAt.length; round++) {
            runHaltingWriter(file, round, "0", haltAt[round]);
            before = assertPrefix(file, before, round);
            assertTrue(before.bursts() > 0, "round " + round + " compacted, so it wrote");
            try (var files = Files.list(dir)) {
                assertEquals(List.of(), files.map(p -> p.getFileName().toString())
                        .filter(n -> n.endsWith(".tmp")).toList(), "the open after the halt cleared leftovers");
            }
            assertTrue(journals().size() <= 1, "a replaced journal is deleted at the next open: " + journals());
        }
    }

    /** A crash in the middle of an append leaves a torn last record: ignored, and cut off at the next write. */
    @Test
    void aTornLastRecordIsIgnoredAndTheNextWriteGoesOnFromTheRecordBefore() throws Exception {
        Path file = dir.resolve("registry.json");
        runHaltingWriter(file, 0, "6");   // Burst 0, Counter 0 .. Burst 2, Counter 2, in the journal
        Path journal = onlyJournal();
        byte[] whole = Files.readAllBytes(journal);
        List<byte[]> torn = List.of(
                java.util.Arrays.copyOf(whole, whole.length - 3),                      // cut short
                flip(whole, whole.length - 2),                                         // last record fails its checksum
                concat(whole, new byte[37]),                                           // zero-filled after the last
                concat(whole, new byte[] {0, 0, 0}));                                  // a length cut short
        for (byte[] content : torn) {
            Files.write(journal, content);
            Prefix p = assertPrefix(file, new Prefix(0, -1), 0);
            assertTrue(p.equals(new Prefix(3, 1)) || p.equals(new Prefix(3, 2)), "at most the last write is lost: " + p);
        }
        Files.write(journal, java.util.Arrays.copyOf(whole, whole.length - 3));
        runHaltingWriter(file, 1, "1");   // Burst 3 after the torn Counter 2, and no compaction at close
        assertEquals(new Prefix(4, 1), assertPrefix(file, new Prefix(3, 1), 1),
                "the write after the torn record is read back: the torn bytes were cut off before it");
    }

    /** A record that fails its checksum with records after it is damage, not a crash: the store refuses to start. */
    @Test
    void aCorruptRecordInTheMiddleOfTheJournalIsRefusedNamingTheFileAndOffset() throws Exception {
        Path file = dir.resolve("registry.json");
        runHaltingWriter(file, 0, "6");
        Path journal = onlyJournal();
        byte[] whole = Files.readAllBytes(journal);
        int second = 16 + 12 + ByteBuffer.wrap(whole, 16, 4).getInt();   // header, then the first record
        for (byte[] content : List.of(flip(whole, second + 14), flip(whole, second + 1))) {
            Files.write(journal, content);
            RegistryStore.StoreException e = assertThrows(RegistryStore.StoreException.class,
                    () -> FileRegistryStore.open(file));
            assertTrue(e.getMessage().contains(journal.toString()) && e.getMessage().contains("offset " + second)
                    && e.getMessage().contains("does not start"), e.getMessage());
            assertArrayEquals(content, Files.readAllBytes(journal), "a damaged journal is left as it is");
        }
    }

    /** A journal that does not continue the snapshot means a file was lost or replaced: refused, never skipped. */
    @Test
    void aJournalWithoutItsSnapshotIsRefused() throws Exception {
        Path file = dir.resolve("registry.json");
        runHaltingWriter(file, 0, "2");   // snapshot of generation 0, its journal holding two writes
        Path journal = onlyJournal();
        Path later = dir.resolve("registry.json.5.journal");
        Files.move(journal, later);
        RegistryStore.StoreException e = assertThrows(RegistryStore.StoreException.class,
                () -> FileRegistryStore.open(file));
        assertTrue(e.getMessage().contains(later.toString()) && e.getMessage().contains("does not start"),
                e.getMessage());
        Files.delete(file);
        e = assertThrows(RegistryStore.StoreException.class, () -> FileRegistryStore.open(file));
        assertTrue(e.getMessage().contains("missing") && e.getMessage().contains(later.toString()), e.getMessage());
        assertTrue(Files.exists(later) && Files.notExists(file), "nothing was written or deleted");
    }

    /** Ten thousand instances of one interface bind quickly, come back after a restart, and hold its schema once. */
    @Test
    void tenThousandBindsFromSeveralThreadsComeBackAndKeepTheSchemaOnce() throws Exception {
        Path file = dir.resolve("registry.json");
        int threads = 8;
        int each = 1250;
        try (FileRegistryStore store = FileRegistryStore.open(file)) {
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> done = new java.util.ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int thread = t;
                    done.add(pool.submit(() -> {
                        for (int i = 0; i < each; i++) {
                            store.bind(entry("Many", thread + "-" + i));
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get(5, TimeUnit.MINUTES);
                }
            } finally {
                pool.shutdownNow();
            }
            assertEquals(threads * each, store.lookup("Many").size());
            assertEquals(1, store.unbind("Many", "0-0"));
        }
        int schema = ConformanceComponent.DESCRIPTOR.schema().length();
        assertTrue(Files.size(file) < 10L * schema + 1_000L * (threads * each),
                "the snapshot holds the schema once, not per instance: " + Files.size(file) + " bytes");
        try (FileRegistryStore store = FileRegistryStore.open(file)) {
            List<ComponentEntry> many = store.lookup("Many");
            assertEquals(threads * each - 1, many.size());
            assertTrue(store.find("Many", "0-0").isEmpty());
            assertEquals(entry("Many", "7-1249"), store.find("Many", "7-1249").orElseThrow());
        }
    }

    /** A store written by a registry of version 1 (one document) opens, and is rewritten as a snapshot at the first write. */
    @Test
    void aSingleFileStoreOfVersionOneOpensAndIsMigratedAtTheFirstWrite() throws Exception {
        Path file = dir.resolve("registry.json");
        Files.write(file, io.switchboard.registry.store.StoreFormat.encodeDocument(
                List.of(entry("Alpha", "a1"), entry("Alpha", "a2"))));
        try (FileRegistryStore store = FileRegistryStore.open(file)) {
            assertEquals(List.of(entry("Alpha", "a1"), entry("Alpha", "a2")), store.lookup("Alpha"));
            assertTrue(Files.readString(file).contains("\"version\": 1"), "reading changes nothing");
            store.bind(entry("Beta", "b1"));
            assertTrue(Files.readString(file).contains("\"version\": 2"), "the first write migrates it");
        }
        try (FileRegistryStore store = FileRegistryStore.open(file)) {
            assertEquals(3, store.list().size());
            assertEquals(entry("Alpha", "a2"), store.find("Alpha", "a2").orElseThrow());
        }
    }

    private void runHaltingWriter(Path file, int round, String... halt) throws Exception {
        String[] args = new String[2 + halt.length];
        args[0] = file.toString();
        args[1] = "100";
        System.arraycopy(halt, 0, args, 2, halt.length);
        try (ChildJvm writer = ChildJvm.start(dir.resolve("writer-" + round + ".err"), FileStoreWriterMain.class,
                args)) {
            writer.await("ready");
            assertTrue(writer.process().waitFor(2, TimeUnit.MINUTES), "the writer halts itself");
            assertEquals(0, writer.process().exitValue());
        }
    }

    private List<Path> journals() throws java.io.IOException {
        try (var files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".journal")).toList();
        }
    }

    private Path onlyJournal() throws java.io.IOException {
        List<Path> js = journals();
        assertEquals(1, js.size(), js.toString());
        return js.get(0);
    }

    private static byte[] flip(byte[] b, int at) {
        byte[] c = b.clone();
        c[at] ^= 0x5A;
        return c;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    /** How far the writes got: Burst 0..bursts-1, and the last step Counter says (-1: none). */
    record Prefix(int bursts, int counter) {
    }

    /**
     * Whether the store holds a prefix of the writer's writes, Burst i then Counter i for each
     * step: Burst 0..n-1 without a gap, nothing lost since {@code before}, and Counter at the last
     * step (n-1), or one step behind when the writer stopped between the two writes of a step:
     * n-2, or what the round before left when that step was the round's first.
     */
    private static Prefix assertPrefix(Path file, Prefix before, int round) {
        try (FileRegistryStore store = FileRegistryStore.open(file)) {
            List<String> ids = store.lookup("Burst").stream().map(ComponentEntry::instanceId).toList();
            int n = ids.size();
            assertEquals(IntStream.range(0, n).mapToObj(Integer::toString).toList(), ids,
                    "round " + round + ": the writes form a prefix");
            assertTrue(n >= before.bursts(), "nothing written before is lost");
            List<ComponentEntry> counters = store.lookup("Counter");
            int counter = counters.isEmpty() ? -1 : Integer.parseInt(counters.get(0).features().get(0));
            int stepBehind = n - 1 == before.bursts() ? before.counter() : n - 2;
            assertTrue(counter == n - 1 || counter == stepBehind,
                    "round " + round + ": counter " + counter + " after " + n + " (expected " + (n - 1) + " or "
                            + stepBehind + ")");
            return new Prefix(n, counter);
        }
    }

    private static String readString(Path p) {
        try {
            return Files.readString(p);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
