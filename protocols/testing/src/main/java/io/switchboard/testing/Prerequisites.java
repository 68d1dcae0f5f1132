package io.switchboard.testing;

import java.util.Arrays;
import org.junit.jupiter.api.Assumptions;

/**
 * What a test needs from outside Java (a program, root, network namespaces): present, or the test
 * fails saying what is missing. {@code scripts/test-prerequisites.sh}, which {@code mvn verify}
 * runs once before the tests, installs the programs; no test installs anything. The one way to
 * leave such tests out is explicit: {@code SWITCHBOARD_TESTS_OFF=chromium,grpcurl,python,multihost}
 * (any of them) reports them as skipped with that reason.
 *
 * <pre>{@code
 * Prerequisites.require("grpcurl", Files.isExecutable(binary) ? null : "grpcurl is not installed at " + binary);
 * }</pre>
 */
public final class Prerequisites {
    /** The environment variable that turns groups of tests off, comma-separated. */
    public static final String OFF = "SWITCHBOARD_TESTS_OFF";

    private Prerequisites() {
    }

    /**
     * Returns when {@code missing} is null (all there); otherwise skips the test if {@code group}
     * is turned off by {@value #OFF}, and fails it with {@code missing} if not.
     */
    public static void require(String group, String missing) {
        if (missing == null) {
            return;
        }
        if (off(group)) {
            Assumptions.abort(group + " tests are off (" + OFF + "=" + System.getenv(OFF) + "): " + missing);
        }
        throw new AssertionError(missing + ". scripts/test-prerequisites.sh installs what can be installed ("
                + "mvn verify runs it); " + OFF + "=" + group + " turns these tests off.");
    }

    /** Whether {@value #OFF} names {@code group}. */
    public static boolean off(String group) {
        String v = System.getenv(OFF);
        return v != null && Arrays.stream(v.split(",")).map(String::strip).anyMatch(group::equals);
    }
}
