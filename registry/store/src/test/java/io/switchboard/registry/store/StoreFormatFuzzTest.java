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
 * Fuzzes the registry's store format ({@link StoreFormat}): the file store reads a whole document
 * at start-up and the ZooKeeper store one entry per znode, both written by other processes. The
 * first byte picks the decoder (even: document, odd: entry); the rest is the bytes. Only
 * {@link IllegalArgumentException}, the documented refusal (the stores turn it into a
 * {@link StoreException}), may come out, within 5 s. An entry that decodes must encode and
 * decode again to the same entry.
 *
 * <p>CI runs the inputs in {@code src/test/resources/io/switchboard/registry/StoreFormatFuzzTestInputs};
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
        if ((input[0] & 1) == 0) {
            List<ComponentEntry> entries = CHECK.run(bytes.length, () -> StoreFormat.decodeDocument(bytes));
            if (entries != null && !entries.equals(StoreFormat.decodeDocument(StoreFormat.encodeDocument(entries)))) {
                throw new AssertionError("a decoded document does not survive encoding: " + entries);
            }
        } else {
            ComponentEntry entry = CHECK.run(bytes.length, () -> StoreFormat.decodeEntry(bytes));
            if (entry != null && !entry.equals(StoreFormat.decodeEntry(StoreFormat.encodeEntry(entry)))) {
                throw new AssertionError("a decoded entry does not survive encoding: " + entry);
            }
        }
    }

    /** Writes the seed inputs into {@code args[0]} (the module's {@code src/test/resources}). */
    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0], "io/switchboard/registry/StoreFormatFuzzTestInputs/decode");
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
    }

    private static void write(Path file, int selector, byte[] bytes) throws IOException {
        byte[] input = new byte[bytes.length + 1];
        input[0] = (byte) selector;
        System.arraycopy(bytes, 0, input, 1, bytes.length);
        Files.write(file, input);
    }
}
