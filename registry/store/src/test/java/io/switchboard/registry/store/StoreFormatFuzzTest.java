package io.switchboard.registry.store;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.store.StoreFormat;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.switchboard.protocol.Endpoint;
import io.switchboard.testing.DecoderCheck;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;

/**
 * Fuzzes the registry's store format ({@link StoreFormat}): the file store reads a snapshot and a
 * journal of records at start-up and the ZooKeeper store one entry per znode, all written by other
 * processes. The first byte picks the decoder (its low two bits: 0 a document read for its entries,
 * 1 an entry, 2 a snapshot, 3 a journal record); the rest is the bytes. Only
 * {@link IllegalArgumentException}, the documented refusal (the stores turn it into a
 * {@link StoreException}), may come out, within 5 s. Whatever decodes must encode and
 * decode again to the same thing.
 *
 * <p>CI runs the inputs in {@code src/test/resources/io/switchboard/registry/store/StoreFormatFuzzTestInputs};
 * to fuzz: {@code JAZZER_FUZZ=1 JAZZER_INSTRUMENT='io.switchboard.**,com.google.gson.**' mvn -pl registry test
 * -Dtest=StoreFormatFuzzTest}. {@link #main} rewrites the seed inputs.
 */
class StoreFormatFuzzTest {
    private static final DecoderCheck CHECK = new DecoderCheck(Duration.ofSeconds(5),
            List.of(IllegalArgumentException.class));

    @FuzzTest(maxDuration = "2m")
    void decode(byte[] input) {
        if (input.length < 1) {
            return;
        }
        byte[] bytes = Arrays.copyOfRange(input, 1, input.length);
        switch (input[0] & 3) {
            case 0 -> {
                List<ComponentEntry> entries = CHECK.run(bytes.length, () -> StoreFormat.decodeDocument(bytes));
                if (entries != null && !entries.equals(StoreFormat.decodeDocument(StoreFormat.encodeDocument(entries)))) {
                    throw new AssertionError("a decoded document does not survive encoding: " + entries);
                }
            }
            case 1 -> {
                ComponentEntry entry = CHECK.run(bytes.length, () -> StoreFormat.decodeEntry(bytes));
                if (entry != null && !entry.equals(StoreFormat.decodeEntry(StoreFormat.encodeEntry(entry)))) {
                    throw new AssertionError("a decoded entry does not survive encoding: " + entry);
                }
            }
            case 2 -> {
                StoreFormat.Snapshot s = CHECK.run(bytes.length, () -> StoreFormat.decodeSnapshot(bytes));
                if (s != null && !s.entries().equals(StoreFormat.decodeSnapshot(StoreFormat.encodeSnapshot(s.entries(),
                        s.generation(), new StoreFormat.Texts())).entries())) {
                    throw new AssertionError("a decoded snapshot does not survive encoding: " + s.entries());
                }
            }
            default -> {
                StoreFormat.Change c = CHECK.run(bytes.length, () -> StoreFormat.decodeChange(bytes,
                        new StoreFormat.Texts()));
                if (c != null && !c.equals(StoreFormat.decodeChange(StoreFormat.encodeChange(c, new StoreFormat.Texts()),
                        new StoreFormat.Texts()))) {
                    throw new AssertionError("a decoded record does not survive encoding: " + c);
                }
            }
        }
    }

    /** Writes the seed inputs into {@code args[0]} (the module's {@code src/test/resources}). */
    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0], "io/switchboard/registry/store/StoreFormatFuzzTestInputs/decode");
        Files.createDirectories(dir);
        ComponentEntry full = new ComponentEntry("Echo", "i-1", List.of(new Endpoint("soap",
                "http://127.0.0.1:8080/axis2/services/Echo"), new Endpoint("grpc", "grpc://127.0.0.1:9090")),
                "<xs:schema/>", "syntax = \"proto3\";", "http://127.0.0.1:8080/Echo.wsdl",
                Instant.parse("2026-11-22T10:00:00Z"), List.of(ComponentEntry.CALL_IDS), 30);
        ComponentEntry bare = new ComponentEntry("Matrix", "i-2", List.of(new Endpoint("soap", "http://h/x")),
                null, null, null, null, List.of(), 0);
        write(dir.resolve("seed-document"), 0, StoreFormat.encodeDocument(List.of(full, bare)));
        write(dir.resolve("seed-document-empty"), 0, StoreFormat.encodeDocument(List.of()));
        write(dir.resolve("seed-entry-full"), 1, StoreFormat.encodeEntry(full));
        write(dir.resolve("seed-entry-bare"), 1, StoreFormat.encodeEntry(bare));
        write(dir.resolve("seed-snapshot"), 2, StoreFormat.encodeSnapshot(List.of(full, bare, full.withLeaseSeconds(5)),
                7, new StoreFormat.Texts()));
        write(dir.resolve("seed-record-put"), 3, StoreFormat.encodeChange(new StoreFormat.Put(full),
                new StoreFormat.Texts()));
        write(dir.resolve("seed-record-unbind"), 3, StoreFormat.encodeChange(new StoreFormat.Unbind("Echo", "i-1"),
                new StoreFormat.Texts()));
    }

    private static void write(Path file, int selector, byte[] bytes) throws IOException {
        byte[] input = new byte[bytes.length + 1];
        input[0] = (byte) selector;
        System.arraycopy(bytes, 0, input, 1, bytes.length);
        Files.write(file, input);
    }
}
