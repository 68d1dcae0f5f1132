package io.switchboard.registry.file;

import io.switchboard.registry.store.RegistryStore.StoreException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.function.Consumer;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The framing of the file store's journal: a header ({@code SBJRNL01} and the generation of the
 * snapshot it continues, 16 bytes), then records, each its length (4 bytes, big-endian), the
 * CRC32C of those 4 bytes, the CRC32C of the payload, and the payload (a {@code StoreFormat}
 * change). Reading tells a crash from damage: a torn last record (cut short, zero-filled, or
 * failing its checksum with nothing after it) ends the journal where the record starts; a
 * damaged record with more after it, a length failing its checksum, or a payload the store cannot
 * read is a {@link StoreException} naming the file and the record's offset.
 */
final class JournalFormat {
    private static final Logger LOG = LoggerFactory.getLogger(JournalFormat.class);
    private static final byte[] MAGIC = "SBJRNL01".getBytes(StandardCharsets.US_ASCII);
    /** Magic and generation. */
    static final int HEADER = MAGIC.length + Long.BYTES;
    /** A record's length, the CRC32C of that length, and the CRC32C of the record. */
    static final int RECORD_HEADER = 3 * Integer.BYTES;

    private JournalFormat() {
    }

    static ByteBuffer header(long generation) {
        return ByteBuffer.allocate(HEADER).put(MAGIC).putLong(generation).flip();
    }

    static ByteBuffer record(byte[] payload) {
        return ByteBuffer.allocate(RECORD_HEADER + payload.length).putInt(payload.length)
                .putInt(lengthCrc(payload.length)).putInt(crc32c(payload)).put(payload).flip();
    }

    /**
     * Gives {@code apply} the payload of every whole record of the journal at {@code path}, in
     * order, and returns where the last whole one ends (0 when the header itself is torn); the
     * caller's next record goes there. {@code apply} refuses a payload with
     * {@link IllegalArgumentException}.
     *
     * @throws StoreException the journal is over {@code maxBytes}, belongs to another generation, or is damaged
     */
    static long read(Path path, long generation, long maxBytes, Consumer<byte[]> apply) throws IOException {
        long size = Files.size(path);
        if (size > maxBytes) {
            throw new StoreException("registry store journal " + path + " is " + size + " bytes, over the limit of "
                    + maxBytes + "; the registry does not start over it (raise the limit or move the file away)");
        }
        ByteBuffer buf = ByteBuffer.wrap(Files.readAllBytes(path));
        if (buf.remaining() < HEADER) {
            return 0;   // torn while it was being created: not one record in it
        }
        byte[] magic = new byte[MAGIC.length];
        buf.get(magic);
        if (!Arrays.equals(magic, MAGIC) || buf.getLong() != generation) {
            throw corrupt(path, 0, "not a journal of generation " + generation + " of this store");
        }
        while (buf.remaining() > 0) {
            int at = buf.position();
            if (buf.remaining() < RECORD_HEADER || zeros(buf)) {
                break;                                          // torn tail: cut short or zero-filled
            }
            int length = buf.getInt();
            if (buf.getInt() != lengthCrc(length)) {
                throw corrupt(path, at, "a record whose length fails its checksum");
            }
            int crc = buf.getInt();
            if (length <= 0 || length > maxBytes) {
                throw corrupt(path, at, "a record length of " + length);
            }
            if (length > buf.remaining()) {
                buf.position(at);
                break;                                          // torn tail: the record is cut short
            }
            byte[] payload = new byte[length];
            buf.get(payload);
            if (crc32c(payload) != crc) {
                if (buf.remaining() == 0) {
                    buf.position(at);
                    break;                                      // torn tail: the last record never finished
                }
                throw corrupt(path, at, "a record failing its checksum, with " + buf.remaining()
                        + " bytes of records after it");
            }
            try {
                apply.accept(payload);
            } catch (IllegalArgumentException e) {
                throw corrupt(path, at, "a record that is not readable (" + e.getMessage() + ")");
            }
        }
        if (buf.position() < size) {
            LOG.warn("registry store journal {}: ignored a torn record at offset {} ({} bytes; a write cut short "
                    + "by a crash, which never returned)", path, buf.position(), size - buf.position());
        }
        return buf.position();
    }

    private static boolean zeros(ByteBuffer buf) {
        for (int i = buf.position(); i < buf.limit(); i++) {
            if (buf.get(i) != 0) {
                return false;
            }
        }
        return true;
    }

    private static StoreException corrupt(Path path, long offset, String what) {
        return new StoreException("registry store journal " + path + " has " + what + " at offset " + offset
                + "; the registry does not start over it (entries are never dropped silently: repair it, or move "
                + "the store away to start empty)");
    }

    private static int lengthCrc(int length) {
        return crc32c(ByteBuffer.allocate(Integer.BYTES).putInt(length).array());
    }

    private static int crc32c(byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes);
        return (int) crc.getValue();
    }
}
