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
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Entries in one JSON file (format in {@code StoreFormat}, versioned), the standalone registry's
 * default. Key {@code file}. Entries come back when the registry restarts.
 *
 * <pre>{@code
 * try (RegistryServer registry = RegistryServer.builder()
 *         .store(FileRegistryStore.open(Path.of("/var/lib/switchboard/registry.json"))).start()) { ... }
 * }</pre>
 *
 * <p>Every write replaces the whole file atomically: the new state goes to a temporary file in the
 * same directory, is forced to disk, and is renamed over the old file (then the directory is
 * forced), so a crash at any moment leaves either the old state or the new one, never a mix. The
 * in-memory state changes only after the file did; a failed write changes nothing and raises
 * {@link StoreException}. Reading is a decoder with a size limit: a file that is too large, torn
 * or not a registry store stops the registry from starting with a message naming the file, and is
 * left untouched (entries are never dropped silently). A lock file keeps a second registry process
 * off the same store.
 */
public final class FileRegistryStore implements RegistryStore {
    private static final Logger LOG = LoggerFactory.getLogger(FileRegistryStore.class);
    /** The largest store file read or written. */
    public static final long DEFAULT_MAX_BYTES = 64L << 20;

    private final Path file;
    private final long maxBytes;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private InMemoryRegistryStore entries;

    private FileRegistryStore(Path file, long maxBytes, FileChannel lockChannel, FileLock lock,
                              InMemoryRegistryStore entries) {
        this.file = file;
        this.maxBytes = maxBytes;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.entries = entries;
    }

    /** Opens (or creates) the store at {@code file} with the default size limit. */
    public static FileRegistryStore open(Path file) {
        return open(file, DEFAULT_MAX_BYTES);
    }

    /**
     * Opens (or creates, with its directory) the store at {@code file}.
     *
     * @throws StoreException the file cannot be read, is over {@code maxBytes}, is not a valid store,
     *                        or another process holds it
     */
    public static FileRegistryStore open(Path file, long maxBytes) {
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
            InMemoryRegistryStore loaded = new InMemoryRegistryStore();
            boolean exists = Files.exists(target);
            if (exists) {
                for (ComponentEntry e : read(target, maxBytes)) {
                    loaded.rebind(e);
                }
            }
            FileRegistryStore store = new FileRegistryStore(target, maxBytes, channel, lock, loaded);
            if (!exists) {
                store.persist(List.of());   // fail now, not at the first bind, if the place is not writable
            }
            LOG.info("registry store {}: {} entries", target, loaded.list().size());
            return store;
        } catch (IOException e) {
            closeQuietly(channel);
            throw new StoreException("cannot open registry store " + target + ": " + e, e);
        } catch (RuntimeException e) {
            closeQuietly(channel);
            throw e;
        }
    }

    /** The store's file. */
    public Path file() {
        return file;
    }

    @Override
    public synchronized void bind(ComponentEntry entry) throws AlreadyBoundException {
        InMemoryRegistryStore next = copy();
        next.bind(entry);
        commit(next);
    }

    @Override
    public synchronized void rebind(ComponentEntry entry) {
        InMemoryRegistryStore next = copy();
        next.rebind(entry);
        commit(next);
    }

    @Override
    public synchronized int unbind(String name, String instanceId) {
        InMemoryRegistryStore next = copy();
        int removed = next.unbind(name, instanceId);
        if (removed > 0) {
            commit(next);
        }
        return removed;
    }

    @Override
    public synchronized List<ComponentEntry> lookup(String name) {
        return entries.lookup(name);
    }

    @Override
    public synchronized List<ComponentEntry> list() {
        return entries.list();
    }

    @Override
    public synchronized void close() {
        try {
            lock.release();
        } catch (IOException e) {
            LOG.debug("releasing the lock of {}: {}", file, e.toString());
        }
        closeQuietly(lockChannel);
    }

    /** The next state goes to disk first; memory follows only when the file holds it. */
    private void commit(InMemoryRegistryStore next) {
        persist(next.list());
        entries = next;
    }

    private InMemoryRegistryStore copy() {
        InMemoryRegistryStore c = new InMemoryRegistryStore();
        entries.list().forEach(c::rebind);
        return c;
    }

    private void persist(List<ComponentEntry> all) {
        byte[] bytes = StoreFormat.encodeDocument(all);
        if (bytes.length > maxBytes) {
            // never write a file this registry would refuse to read back
            throw new IllegalArgumentException("the registry store would grow to " + bytes.length
                    + " bytes, over its limit of " + maxBytes);
        }
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
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            tmp = null;
            forceDirectory(dir);
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

    private static List<ComponentEntry> read(Path file, long maxBytes) throws IOException {
        long size = Files.size(file);
        if (size > maxBytes) {
            throw new StoreException("registry store " + file + " is " + size + " bytes, over the limit of " + maxBytes
                    + "; the registry does not start over it (raise the limit or move the file away)");
        }
        try {
            return StoreFormat.decodeDocument(Files.readAllBytes(file));
        } catch (IllegalArgumentException e) {
            throw new StoreException("registry store " + file + " is not readable: " + e.getMessage()
                    + "; the registry does not start over it (repair it, or move it away to start empty)", e);
        }
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
