package io.switchboard.cli.scaffold;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

/**
 * A Maven local repository of one's own for a child build, so that a test never installs into the
 * shared {@code ~/.m2}: this build's Switchboard artifacts laid out as {@code mvn install} would
 * (io/switchboard/A/V/A-V.jar and .pom; Maven takes a file there without {@code _remote.repositories}
 * as installed locally, SNAPSHOT or not), and every third-party folder of the shared repository
 * linked in, so that nothing is downloaded twice.
 */
final class PrivateMavenRepository {
    private PrivateMavenRepository() {
    }

    /** The shared local repository: the one the build runs with (the pom passes it), else ~/.m2/repository. */
    static Path shared() {
        String configured = System.getProperty("switchboard.test.localRepository");
        return configured != null && !configured.isBlank() && !configured.contains("${")
                ? Path.of(configured) : Path.of(System.getProperty("user.home"), ".m2", "repository");
    }

    /**
     * Fills {@code repository} with every published module of the build (the poms of the parent, the
     * aggregators and the BOM; the jars and the Maven plug-in from their target/) and links the rest
     * of {@code shared}.
     */
    static Path create(Path repository, Path shared) throws IOException {
        String version = Reactor.version();
        for (Reactor.Module m : Reactor.modules()) {
            if (!m.published() && !m.packaging().equals("pom")) {
                continue;   // the command line and test modules: no project depends on them
            }
            Path dir = Files.createDirectories(repository.resolve("io/switchboard/" + m.artifactId() + "/" + version));
            String base = m.artifactId() + "-" + version;
            Files.copy(m.pom(), dir.resolve(base + ".pom"), StandardCopyOption.REPLACE_EXISTING);
            if (!m.packaging().equals("pom")) {
                installJar(m, base, dir.resolve(base + ".jar"));
            }
        }
        Path io = Files.createDirectories(repository.resolve("io"));
        try (Stream<Path> groups = Files.list(shared)) {
            for (Path g : groups.toList()) {
                if (!g.getFileName().toString().equals("io")) {
                    Files.createSymbolicLink(repository.resolve(g.getFileName().toString()), g);
                }
            }
        }
        Path sharedIo = shared.resolve("io");
        if (Files.isDirectory(sharedIo)) {
            try (Stream<Path> groups = Files.list(sharedIo)) {
                for (Path g : groups.toList()) {
                    // Switchboard's own come from this build only, whatever someone once installed
                    if (!g.getFileName().toString().equals("switchboard")) {
                        Files.createSymbolicLink(io.resolve(g.getFileName().toString()), g);
                    }
                }
            }
        }
        return repository;
    }

    /**
     * The module's packaged jar if it is at least as new as its classes; otherwise (a build that stopped
     * at {@code test}, or classes compiled since) a jar of target/classes, which is what Maven would package.
     */
    private static void installJar(Reactor.Module m, String base, Path target) throws IOException {
        Path classes = m.dir().resolve("target/classes");
        Path packaged = m.dir().resolve("target").resolve(base + ".jar");
        if (!Files.isDirectory(classes) && !Files.isDirectory(m.dir().resolve("src/main"))) {
            // a starter: a pom of dependencies and an empty jar, as Maven packages it
            try (OutputStream out = Files.newOutputStream(target); JarOutputStream jar = new JarOutputStream(out)) {
                return;
            }
        }
        if (!Files.isDirectory(classes)) {
            throw new IllegalStateException(m.artifactId() + " is not built (no " + classes + "): run the reactor "
                    + "build first, e.g. mvn -B -pl cli -am verify");
        }
        if (Files.exists(packaged) && !Files.getLastModifiedTime(packaged).toInstant().isBefore(newest(classes))) {
            Files.copy(packaged, target, StandardCopyOption.REPLACE_EXISTING);
            return;
        }
        try (OutputStream out = Files.newOutputStream(target); JarOutputStream jar = new JarOutputStream(out);
             Stream<Path> files = Files.walk(classes)) {
            for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                jar.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
                Files.copy(f, jar);
                jar.closeEntry();
            }
        }
    }

    private static java.time.Instant newest(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            List<FileTime> times = files.filter(Files::isRegularFile).map(f -> {
                try {
                    return Files.getLastModifiedTime(f);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).toList();
            return times.stream().max(FileTime::compareTo).map(FileTime::toInstant).orElse(java.time.Instant.EPOCH);
        }
    }
}
