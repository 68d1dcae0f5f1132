package io.switchboard.bench;

import java.io.PrintStream;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarConsumer;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * The bench's progress bar on standard error: redrawn in place on a terminal; when there is none
 * (CI, a redirected log), a plain line at most every {@link #LINE_INTERVAL_NANOS} and one at the
 * end, so that logs hold no carriage-return frames.
 *
 * <pre>{@code
 * try (ProgressBar progress = Progress.open("bench", cells)) {
 *     progress.step();
 * }
 * }</pre>
 */
final class Progress {
    static final long LINE_INTERVAL_NANOS = 10_000_000_000L;

    private Progress() {
    }

    static ProgressBar open(String task, long steps) {
        ProgressBarConsumer consumer = System.console() != null ? new ConsoleProgressBarConsumer(System.err)
                : new PlainLines(System.err);
        return new ProgressBarBuilder().setTaskName(task).setInitialMax(steps).setStyle(ProgressBarStyle.ASCII)
                .setConsumer(consumer).setUpdateIntervalMillis(250).continuousUpdate().build();
    }

    /** Prints the rendered bar as a whole line now and then, never a carriage return. */
    static final class PlainLines implements ProgressBarConsumer {
        private final PrintStream out;
        private String latest;
        private boolean latestPrinted = true;
        private long lastPrint = System.nanoTime() - LINE_INTERVAL_NANOS;

        PlainLines(PrintStream out) {
            this.out = out;
        }

        @Override
        public int getMaxRenderedLength() {
            return 120;
        }

        @Override
        public synchronized void accept(String rendered) {
            latest = rendered.replace("\r", "").strip();
            latestPrinted = false;
            long now = System.nanoTime();
            if (now - lastPrint >= LINE_INTERVAL_NANOS) {
                print(now);
            }
        }

        private void print(long now) {
            out.println(latest);
            latestPrinted = true;
            lastPrint = now;
        }

        @Override
        public synchronized void close() {
            if (!latestPrinted && latest != null) {
                print(System.nanoTime());
            }
            out.flush();
        }
    }
}
