package io.switchboard.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/**
 * What {@code switchboard --version} prints: the version this build was made from (written into
 * {@code version.properties} by the build, so a release and a checkout say what they run) and the
 * Java that runs it.
 *
 * <pre>{@code
 * $ bin/switchboard --version
 * switchboard 0.1.0
 * Java 17.0.12 (Eclipse Adoptium) at /usr/lib/jvm/temurin-17
 * }</pre>
 */
public final class VersionProvider implements IVersionProvider {
    private static final String RESOURCE = "version.properties";

    @Override
    public String[] getVersion() {
        try (InputStream in = VersionProvider.class.getResourceAsStream(RESOURCE)) {
            return new String[] {"switchboard " + versionFrom(in),
                "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vendor") + ") at "
                        + System.getProperty("java.home")};
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The version in a {@code version.properties}; fails if it is missing or was never filled in. */
    static String versionFrom(InputStream properties) throws IOException {
        if (properties == null) {
            throw new IllegalStateException(RESOURCE + " is missing: the cli module was not built");
        }
        Properties p = new Properties();
        p.load(properties);
        String version = p.getProperty("version", "").strip();
        if (version.isEmpty() || version.contains("${")) {
            throw new IllegalStateException(RESOURCE + " holds no version (" + version + "): the build did not fill it in");
        }
        return version;
    }
}
