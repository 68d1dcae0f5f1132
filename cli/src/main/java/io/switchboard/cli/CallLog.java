package io.switchboard.cli;

import io.switchboard.idl.runtime.DeclaredFault;
import io.switchboard.protocol.ServerCall;
import io.switchboard.protocol.ServerInterceptor;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

/**
 * {@code serve --call-log FILE}: a line for every call the component ran, written when it ends.
 * It sits where {@code ComponentServer} puts its builder's interceptors, after the de-duplicator
 * and the drain: a repeat of a call id answered from memory, or a call refused as draining, did not
 * run and is not written. Each line is written and flushed whole, so that a reader sees every call
 * that ended before it looked, even if the process is killed afterwards.
 *
 * <pre>
 * ran 2026-11-27T09:12:03.417Z Counter increment grpc ok 201.4 5f0b8e52-3c5e-4a43-9d5e-0c7f2b1a9e11
 * </pre>
 *
 * Fields, separated by one space: {@code ran}, when the call ended (UTC), the component's name,
 * the operation, the protocol, the outcome ({@code ok}, {@code fault}: a declared fault,
 * {@code error}: anything else), the milliseconds it ran, and the call id the client gave it
 * ({@code -} for none; anything but printable ASCII in it shows as {@code ?}).
 */
final class CallLog implements ServerInterceptor, AutoCloseable {
    private final PrintStream out;
    private final boolean owned;

    private CallLog(PrintStream out, boolean owned) {
        this.out = out;
        this.owned = owned;
    }

    /** Appends to {@code file}, creating it; {@code -} for standard output. */
    static CallLog open(String file) {
        if (file.equals("-")) {
            return new CallLog(System.out, false);
        }
        try {
            return new CallLog(new PrintStream(Files.newOutputStream(Path.of(file), StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND, StandardOpenOption.WRITE), false, StandardCharsets.UTF_8), true);
        } catch (IOException e) {
            throw new UncheckedIOException("--call-log: cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    @Override
    public Object intercept(ServerCall call, Chain next) throws DeclaredFault {
        long start = System.nanoTime();
        String outcome = "error";
        try {
            Object response = next.proceed(call);
            outcome = "ok";
            return response;
        } catch (DeclaredFault fault) {
            outcome = "fault";
            throw fault;
        } finally {
            String line = String.format(Locale.ROOT, "ran %s %s %s %s %s %.1f %s", Instant.now().truncatedTo(ChronoUnit.MILLIS), call.component(),
                    call.operation().name(), call.protocol(), outcome, (System.nanoTime() - start) / 1e6,
                    call.callId() == null ? "-" : printable(call.callId()));
            synchronized (out) {
                out.println(line);
                out.flush();
            }
        }
    }

    /** A call id as the client sent it, with anything but printable ASCII (a space, a line break) as '?': one field, one line. */
    static String printable(String id) {
        StringBuilder s = new StringBuilder(id.length());
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            s.append(c > ' ' && c < 127 ? c : '?');
        }
        return s.toString();
    }

    @Override
    public void close() {
        if (owned) {
            out.close();
        }
    }
}
