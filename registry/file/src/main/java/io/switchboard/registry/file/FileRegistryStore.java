package io.switchboard.registry.file;

import io.switchboard.registry.store.InMemoryRegistryStore;
import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.store.StoreFormat;
import io.switchboard.registry.ComponentEntry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Entries in a snapshot file and a journal beside it, the standalone registry's default. Key
 * {@code file}. Entries come back when the registry restarts.
 *
 * <pre>{@code
 * try (RegistryServer registry = RegistryServer.builder()
 *         .store(FileRegistryStore.open(Path.of("/var/lib/switchboard/registry.json"))).start()) { ... }
 * }</pre>
 *
 * <p><b>Files.</b> {@code registry.json} is the snapshot (format in {@code StoreFormat}, document
 * version 2: each interface schema and {@code .proto} text once, by hash) and names its
 * generation G; {@code registry.json.G.journal} holds the writes made since. Each bind, rebind or
 * unbind that changes something appends one record (its length and that length's CRC32C, the change's CRC32C, the change) and is
 * forced to disk before it returns; writers that arrive while a force is under way wait for the
 * next one together (group commit), so the cost of a write does not grow with the entries held.
 * When the journal passes its bound (larger than the snapshot and than
 * {@code compactAfterBytes}, 1 MiB by default) and when the store is closed, the store compacts:
 * the whole state goes to a temporary file that is forced and renamed over the snapshot with
 * generation G+1 (the directory forced too), then the journal of G is deleted; the next write
 * starts the journal of G+1. A crash at any step leaves either the old snapshot with its whole
 * journal or the new snapshot, whose stale journal the next open deletes. A version 1 file (one
 * document, every write rewriting it) opens as a snapshot of generation 0 without a journal and
 * is rewritten as version 2 at the first write.
 *
 * <p><b>Reading.</b> Every decoder has a limit: the snapshot and the journal are at most
 * {@code maxBytes} each, and so is a record. On open the journal is replayed over the snapshot;
 * a torn record at its end (a crash in the middle of an append: cut short, zero-filled, or failing
 * its checksum with nothing after it) is ignored and cut off at the next write, as that write never
 * returned. A record that fails its checksum with records after it, a length that fails its own
 * checksum (it could not tell where the next record starts), an unreadable snapshot or a
 * file over the limit stops the registry from starting with a message naming the file (and the
 * offset), and is left untouched: entries are never dropped silently. A lock file keeps a second
 * registry process off the same store.
 *
 * <p><b>Failures.</b> A write refused before its record is written (too large, or a compaction
 * that would pass the limit) changes nothing and raises {@link IllegalArgumentException}. A
 * write whose record cannot be written or forced raises {@link StoreException}; what the disk
 * holds is then unknown, so the store refuses every later write until the registry restarts and
 * reads the files again. Readers may see an entry while its record is being forced; the write
 * that made it returns only once it is on disk.
 */
public final class FileRegistryStore implements RegistryStore {
    private static final Logger LOG = LoggerFactory.getLogger(FileRegistryStore.class);
    /** The largest snapshot, journal or record read or written. */
    public static final long DEFAULT_MAX_BYTES = 64L << 20;
    /** The journal is compacted when it is larger than this and than the snapshot. */
    public static final long DEFAULT_COMPACT_AFTER_BYTES = 1L << 20;
    /** Compaction steps reported to an observer ({@link #open(Path, long, long, Consumer)}). */
    public static final String SNAPSHOT_WRITTEN = "snapshot-written";
    public static final String SNAPSHOT_RENAMED = "snapshot-renamed";
    public static final String JOURNAL_DELETED = "journal-deleted";

    private final Path file;
    private final long maxBytes;
    private final long compactAfterBytes;
    private final Consumer<String> compactionSteps;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final InMemoryRegistryStore entries;
    /**
     * Guards {@link #durableSeq}; held while forcing, so that writers arriving meanwhile share the
     * next force, and by a compaction inside the store's monitor (never the other way round).
     */
    private final Object forceLock = new Object();

    // guarded by this
    private int snapshotVersion;
    private long generation;
    private long snapshotBytes;
    private StoreFormat.Texts texts;
    private FileChannel journal;            // null until the first write of this generation
    private long journalBytes;              // valid bytes of this generation's journal (0: none yet)
    private long journalRecords;
    private long lastSeq;
    private volatile IOException failed;
    // guarded by forceLock
    private long durableSeq;
    /** The journal and the last record written to it, for the forcer. */
    private volatile Tail tail = new Tail(null, null, 0);

    private record Tail(FileChannel channel, Path path, long seq) {
    }

    private FileRegistryStore(Path file, long maxBytes, long compactAfterBytes, Consumer<String> compactionSteps,
                              FileChannel lockChannel, FileLock lock, InMemoryRegistryStore entries) {
        this.file = file;
        this.maxBytes = maxBytes;
        this.compactAfterBytes = compactAfterBytes;
        this.compactionSteps = compactionSteps;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.entries = entries;
    }

    /** Opens (or creates) the store at {@code file} with the default limits. */
    public static FileRegistryStore open(Path file) {
        return open(file, DEFAULT_MAX_BYTES);
    }

    /** Opens (or creates) the store at {@code file}; {@code maxBytes} bounds the snapshot, the journal and a record. */
    public static FileRegistryStore open(Path file, long maxBytes) {
        return open(file, maxBytes, DEFAULT_COMPACT_AFTER_BYTES, step -> { });
    }

    /**
     * Opens (or creates, with its directory) the store at {@code file}.
     *
     * @param maxBytes          the largest snapshot, journal or record read or written
     * @param compactAfterBytes the journal is compacted once larger than this and than the snapshot
     * @param compactionSteps   told each step of a compaction as it is done ({@link #SNAPSHOT_WRITTEN},
     *                          {@link #SNAPSHOT_RENAMED}, {@link #JOURNAL_DELETED}), under the store's lock
     * @throws StoreException the files cannot be read, are over {@code maxBytes}, are not a valid store,
     *                        or another process holds them
     */
    public static FileRegistryStore open(Path file, long maxBytes, long compactAfterBytes,
                                         Consumer<String> compactionSteps) {
        Path target = file.toAbsolutePath().normalize();
        FileChannel channel = null;
        try {
            Files.createDirectories(target.getParent());
            channel = FileChannel.open(lockPath(target), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            }
            if (lock == null) {
                throw new StoreException("registry store " + target + " is in use by another registry (lock "
                        + lockPath(target) + ")");
            }
            deleteLeftoverTemporaryFiles(target);
            FileRegistryStore store = new FileRegistryStore(target, maxBytes, compactAfterBytes, compactionSteps,
                    channel, lock, new InMemoryRegistryStore());
            store.load();
            LOG.info("registry store {}: {} entries (generation {}, {} journal records)", target,
                    store.entries.size(), store.generation, store.journalRecords);
            return store;
        } catch (IOException e) {
            closeQuietly(channel);
            throw new StoreException("cannot open registry store " + target + ": " + e, e);
        } catch (RuntimeException e) {
            closeQuietly(channel);
            throw e;
        }
    }

    /** The store's snapshot file. */
    public Path file() {
        return file;
    }

    /** The journal of {@code generation}. */
    Path journalPath(long gen) {
        return file.resolveSibling(file.getFileName() + "." + gen + ".journal");
    }

    @Override
    public void bind(ComponentEntry entry) throws AlreadyBoundException {
        long seq;
        synchronized (this) {
            if (entries.find(entry.name(), entry.instanceId()).isPresent()) {
                throw new AlreadyBoundException(entry.name() + " instance " + entry.instanceId() + " is already bound");
            }
            seq = append(new StoreFormat.Put(entry));
            entries.rebind(entry);
        }
        awaitDurable(seq);
    }

    @Override
    public void rebind(ComponentEntry entry) {
        long seq;
        synchronized (this) {
            seq = append(new StoreFormat.Put(entry));
            entries.rebind(entry);
        }
        awaitDurable(seq);
    }

    @Override
    public int unbind(String name, String instanceId) {
        long seq;
        int removed;
        synchronized (this) {
            if (entries.count(name, instanceId) == 0) {
                return 0;
            }
            seq = append(new StoreFormat.Unbind(name, instanceId));
            removed = entries.unbind(name, instanceId);
        }
        awaitDurable(seq);
        return removed;
    }

    @Override
    public List<ComponentEntry> lookup(String name) {
        return entries.lookup(name);
    }

    /** Lookups read the entries in memory; the journal's writes and syncs hold another lock. */
    @Override
    public List<ComponentEntry> lookupNow(String name) {
        return entries.lookup(name);
    }

    @Override
    public Optional<ComponentEntry> find(String name, String instanceId) {
        return entries.find(name, instanceId);
    }

    @Override
    public List<ComponentEntry> list() {
        return entries.list();
    }

    @Override
    public int size() {
        return entries.size();
    }

    /** Compacts a journal that holds records, then lets the files go. */
    @Override
    public synchronized void close() {
        try {
            if (failed == null && journalRecords > 0) {
                compact();
            }
        } catch (RuntimeException e) {
            LOG.warn("registry store {}: not compacted at close ({}); the journal is read at the next open", file,
                    e.toString());
        } finally {
            closeQuietly(journal);
            journal = null;
            try {
                lock.release();
            } catch (IOException e) {
                LOG.debug("releasing the lock of {}: {}", file, e.toString());
            }
            closeQuietly(lockChannel);
        }
    }

    private void load() throws IOException {
        List<Long> journals = journalGenerations();
        if (!Files.exists(file)) {
            if (!journals.isEmpty()) {
                throw new StoreException("registry store " + file + " is missing but its journal "
                        + journalPath(journals.get(0)) + " is there; the registry does not start over it (put the "
                        + "snapshot back, or move the journals away to start empty)");
            }
            snapshotVersion = StoreFormat.SNAPSHOT_VERSION;
            texts = new StoreFormat.Texts();
            // fail now, not at the first bind, if the place is not writable
            snapshotBytes = writeAtomically(StoreFormat.encodeSnapshot(List.of(), 0, texts), null);
            return;
        }
        StoreFormat.Snapshot snapshot = readSnapshot();
        snapshotVersion = snapshot.version();
        generation = snapshot.generation();
        snapshotBytes = Files.size(file);
        texts = snapshot.texts();
        snapshot.entries().forEach(entries::rebind);
        for (long g : journals) {
            if (g > generation) {
                throw new StoreException("registry store " + file + " is at generation " + generation
                        + " but journal " + journalPath(g) + " continues a later one; the registry does not "
                        + "start over it (a snapshot was replaced by an older copy?)");
            }
        }
        if (journals.contains(generation)) {
            replay(journalPath(generation));
        }
        for (long g : journals) {
            if (g < generation) {
                Files.deleteIfExists(journalPath(g));   // folded into the snapshot by a compaction a crash cut short
            }
        }
        lastSeq = journalRecords;
        synchronized (forceLock) {
            durableSeq = lastSeq;
        }
    }

    private StoreFormat.Snapshot readSnapshot() throws IOException {
        long size = Files.size(file);
        if (size > maxBytes) {
            throw new StoreException("registry store " + file + " is " + size + " bytes, over the limit of " + maxBytes
                    + "; the registry does not start over it (raise the limit or move the file away)");
        }
        try {
            return StoreFormat.decodeSnapshot(Files.readAllBytes(file));
        } catch (IllegalArgumentException e) {
            throw new StoreException("registry store " + file + " is not readable: " + e.getMessage()
                    + "; the registry does not start over it (repair it, or move it away to start empty)", e);
        }
    }

    /** Applies the journal's records; sets {@link #journalBytes} to the end of the last whole one. */
    private void replay(Path path) throws IOException {
        journalBytes = JournalFormat.read(path, generation, maxBytes, payload -> {
            StoreFormat.Change change = StoreFormat.decodeChange(payload, texts);
            if (change instanceof StoreFormat.Put put) {
                entries.rebind(put.entry());
            } else {
                StoreFormat.Unbind u = (StoreFormat.Unbind) change;
                entries.unbind(u.name(), u.instanceId());
            }
            journalRecords++;
        });
    }

    /** Writes one record (not yet forced) and returns its sequence number; memory follows the caller's. */
    private long append(StoreFormat.Change change) {
        if (failed != null) {
            throw new StoreException("registry store " + file + " refuses writes after a failed one (" + failed
                    + "); restart the registry to read what the disk holds", failed);
        }
        if (snapshotVersion != StoreFormat.SNAPSHOT_VERSION) {
            compact();   // a version 1 file: rewrite it as a snapshot before a journal continues it
        }
        StoreFormat.Texts next = change instanceof StoreFormat.Put put && !texts.holds(put.entry())
                ? texts.copy() : texts;
        byte[] payload = StoreFormat.encodeChange(change, next);
        long frame = JournalFormat.RECORD_HEADER + (long) payload.length;
        if (JournalFormat.HEADER + frame > maxBytes) {
            // never write a record this registry would refuse to read back
            throw new IllegalArgumentException("a registry store record of " + frame
                    + " bytes would pass the store's limit of " + maxBytes);
        }
        if (Math.max(journalBytes, JournalFormat.HEADER) + frame > maxBytes) {
            compact();
            next = change instanceof StoreFormat.Put put && !texts.holds(put.entry()) ? texts.copy() : texts;
            payload = StoreFormat.encodeChange(change, next);
            frame = JournalFormat.RECORD_HEADER + (long) payload.length;
        }
        ByteBuffer buf = JournalFormat.record(payload);
        try {
            FileChannel ch = journal();
            long at = journalBytes;
            while (buf.hasRemaining()) {
                at += ch.write(buf, at);
            }
        } catch (IOException e) {
            failed = e;
            throw new StoreException("cannot write registry store journal " + journalPath(generation) + ": " + e, e);
        }
        texts = next;
        journalBytes += frame;
        journalRecords++;
        tail = new Tail(journal, journalPath(generation), ++lastSeq);
        return lastSeq;
    }

    /** This generation's journal, created (header forced, directory forced) or cut to its last whole record. */
    private FileChannel journal() throws IOException {
        if (journal != null) {
            return journal;
        }
        Path path = journalPath(generation);
        FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        try {
            if (journalBytes < JournalFormat.HEADER) {
                ch.truncate(0);
                ByteBuffer header = JournalFormat.header(generation);
                while (header.hasRemaining()) {
                    ch.write(header, header.position());
                }
                journalBytes = JournalFormat.HEADER;
                ch.force(true);
                forceDirectory(file.getParent());   // the journal's name is as durable as its records
            } else if (ch.size() > journalBytes) {
                ch.truncate(journalBytes);          // the torn tail replay ignored: no record may follow it
                ch.force(true);
            }
        } catch (IOException e) {
            closeQuietly(ch);
            throw e;
        }
        journal = ch;
        return ch;
    }

    /**
     * Returns once record {@code seq} is on disk. One writer forces the journal for every record
     * written so far; writers arriving meanwhile wait on the lock and usually find theirs done.
     * Then compacts when the journal has grown past its bound.
     */
    private void awaitDurable(long seq) {
        synchronized (forceLock) {
            if (durableSeq < seq) {
                Tail t = tail;
                try {
                    if (t.channel() != null && t.channel().isOpen()) {    // closed: a compaction made every record durable
                        t.channel().force(false);
                    }
                } catch (IOException e) {
                    failed = e;
                    throw new StoreException("cannot force registry store journal " + t.path() + ": " + e, e);
                }
                durableSeq = Math.max(durableSeq, t.seq());
            }
        }
        compactIfDue();
    }

    private synchronized void compactIfDue() {
        if (failed == null && journalBytes > Math.max(compactAfterBytes, snapshotBytes)) {
            try {
                compact();
            } catch (RuntimeException e) {
                LOG.warn("registry store {}: compaction failed ({}); the journal keeps every write", file,
                        e.toString());
            }
        }
    }

    /**
     * Writes the whole state as the snapshot of the next generation and deletes the journal it
     * replaces. Every record written so far becomes durable with the snapshot.
     */
    private void compact() {
        synchronized (forceLock) {
            StoreFormat.Texts nextTexts = new StoreFormat.Texts();
            byte[] bytes = StoreFormat.encodeSnapshot(entries.list(), generation + 1, nextTexts);
            if (bytes.length > maxBytes) {
                // never write a file this registry would refuse to read back
                throw new IllegalArgumentException("the registry store would grow to " + bytes.length
                        + " bytes, over its limit of " + maxBytes);
            }
            writeAtomically(bytes, compactionSteps);
            Path old = journalPath(generation);
            closeQuietly(journal);
            journal = null;
            generation++;
            snapshotVersion = StoreFormat.SNAPSHOT_VERSION;
            snapshotBytes = bytes.length;
            texts = nextTexts;
            journalBytes = 0;
            journalRecords = 0;
            durableSeq = lastSeq;
            tail = new Tail(null, null, lastSeq);
            try {
                Files.deleteIfExists(old);
                forceDirectory(file.getParent());
            } catch (IOException e) {
                LOG.warn("registry store {}: cannot delete the replaced journal {} ({}); the next open does",
                        file, old, e.toString());
            }
            compactionSteps.accept(JOURNAL_DELETED);
        }
    }

    /** Temporary file, forced, renamed over the snapshot, directory forced; returns the size. */
    private long writeAtomically(byte[] bytes, Consumer<String> steps) {
        Path dir = file.getParent();
        Path tmp = null;
        try {
            tmp = Files.createTempFile(dir, tempPrefix(file), ".tmp");
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ByteBuffer buf = ByteBuffer.wrap(bytes);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(true);
            }
            if (steps != null) {
                steps.accept(SNAPSHOT_WRITTEN);
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            tmp = null;
            forceDirectory(dir);
            if (steps != null) {
                steps.accept(SNAPSHOT_RENAMED);
            }
            return bytes.length;
        } catch (IOException e) {
            throw new StoreException("cannot write registry store " + file + ": " + e, e);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // a leftover temporary file is removed at the next open
                }
            }
        }
    }

    private List<Long> journalGenerations() throws IOException {
        List<Long> found = new ArrayList<>();
        String prefix = file.getFileName() + ".";
        try (DirectoryStream<Path> js = Files.newDirectoryStream(file.getParent(), prefix + "*.journal")) {
            for (Path p : js) {
                String name = p.getFileName().toString();
                String middle = name.substring(prefix.length(), name.length() - ".journal".length());
                try {
                    found.add(Long.parseLong(middle));
                } catch (NumberFormatException e) {
                    // not one of ours
                }
            }
        }
        found.sort(null);
        return found;
    }

    /** Makes the rename durable; where a directory cannot be opened (not POSIX) the rename is all we have. */
    private static void forceDirectory(Path dir) {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException e) {
            LOG.debug("cannot force directory {}: {}", dir, e.toString());
        }
    }

    private static void deleteLeftoverTemporaryFiles(Path file) throws IOException {
        try (DirectoryStream<Path> leftovers = Files.newDirectoryStream(file.getParent(), tempPrefix(file) + "*.tmp")) {
            for (Path p : leftovers) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static String tempPrefix(Path file) {
        return "." + file.getFileName() + ".";
    }

    private static Path lockPath(Path file) {
        return file.resolveSibling(file.getFileName() + ".lock");
    }

    private static void closeQuietly(FileChannel c) {
        if (c != null) {
            try {
                c.close();
            } catch (IOException ignored) {
                // closing a lock channel that is already gone
            }
        }
    }
}
