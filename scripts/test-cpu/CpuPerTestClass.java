import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * Notes each test class's CPU in a line of {@code $SWITCHBOARD_TEST_CPU_LOG}: the test JVM's own
 * and that of the child processes it waited for meanwhile (JVMs, Python, Maven the tests start),
 * from {@code /proc/self/stat}, and its wall time. Put on every test JVM's class path by
 * scripts/test-cpu-per-class.sh; found by JUnit through ServiceLoader. Classes of one JVM run one
 * at a time here, so the deltas are the class's.
 */
public final class CpuPerTestClass implements TestExecutionListener {
    private static final String LOG = System.getenv("SWITCHBOARD_TEST_CPU_LOG");
    private final Map<String, long[]> started = new ConcurrentHashMap<>();

    /** Clock ticks of this JVM and of its waited-for children (utime+stime, cutime+cstime), and nanoTime. */
    private static long[] now() throws Exception {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");   // f[0] is field 3, the state
        return new long[] {Long.parseLong(f[11]) + Long.parseLong(f[12]), Long.parseLong(f[13]) + Long.parseLong(f[14]),
                System.nanoTime()};
    }

    @Override
    public void executionStarted(TestIdentifier id) {
        if (LOG != null && id.isContainer() && id.getSource().orElse(null) instanceof ClassSource) {
            try {
                started.put(id.getUniqueId(), now());
            } catch (Exception e) {
                // not Linux: nothing noted
            }
        }
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        long[] before = started.remove(id.getUniqueId());
        if (before == null || !(id.getSource().orElse(null) instanceof ClassSource c)) {
            return;
        }
        try {
            long[] after = now();
            // ticks are USER_HZ, 100 a second on Linux
            String line = String.format(Locale.ROOT, "%s %.2f %.2f %.1f%n", c.getClassName(), (after[0] - before[0]) / 100.0,
                    (after[1] - before[1]) / 100.0, (after[2] - before[2]) / 1e9);
            Files.writeString(Path.of(LOG), line, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (Exception e) {
            // a class not noted is left out of the table
        }
    }
}
