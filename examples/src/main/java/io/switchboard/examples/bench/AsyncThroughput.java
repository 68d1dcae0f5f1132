package io.switchboard.examples.bench;

import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoService;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.metastub.MetaStub;
import io.switchboard.protocol.CallOptions;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ProtocolServer;
import io.switchboard.protocol.Protocols;
import io.switchboard.protocol.ServerSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Calls per second of the meta-stub's non-blocking form with 1, 8 and 64 calls in flight, each
 * protocol pinned, echoing a {@code double[10]} (every answer checked). Client and servers share
 * this JVM and talk over loopback; a measurement of the async machinery, not of the network.
 *
 * <pre>{@code
 * java -cp "examples/target/classes:examples/target/lib/*" io.switchboard.examples.bench.AsyncThroughput [seconds]
 * }</pre>
 */
public final class AsyncThroughput {
    private AsyncThroughput() {
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5;
        List<ProtocolServer> servers = new ArrayList<>();
        List<Endpoint> endpoints = new ArrayList<>();
        for (String p : List.of("grpc", "soap")) {
            ProtocolServer s = Protocols.get(p).newServer(ServerSettings.defaults());
            servers.add(s);
            endpoints.add(s.export(EchoComponent.skeleton(new EchoService())));
        }
        try (MetaStub channel = MetaStub.builder(EchoComponent.DESCRIPTOR).protocols("grpc", "soap")
                .endpoints(endpoints).build()) {
            System.out.println("| protocol | in flight | calls/s | blocking calls/s, 1 thread |");
            System.out.println("| --- | ---: | ---: | ---: |");
            for (String protocol : List.of("grpc", "soap")) {
                EchoStub stub = EchoComponent.stub(channel).withOptions(CallOptions.DEFAULT.with(MetaStub.PROTOCOL, protocol));
                measure(stub, 8, seconds / 2);   // warm-up of both forms
                blocking(stub, seconds / 2);
                double blocking = blocking(stub, seconds);
                for (int inFlight : new int[] {1, 8, 64}) {
                    double rate = measure(stub, inFlight, seconds);
                    System.out.printf(Locale.ROOT, "| %s | %d | %,.0f | %s |%n", protocol, inFlight, rate,
                            inFlight == 1 ? String.format(Locale.ROOT, "%,.0f", blocking) : "");
                }
            }
        } finally {
            servers.forEach(ProtocolServer::close);
        }
    }

    private static double blocking(EchoStub stub, double seconds) {
        double[] values = values();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long start = System.nanoTime();
        long n = 0;
        while (System.nanoTime() < end) {
            check(values, stub.echoDoubles(values));
            n++;
        }
        return n / ((System.nanoTime() - start) / 1e9);
    }

    /** Keeps {@code inFlight} calls outstanding for {@code seconds}; returns completed calls per second. */
    private static double measure(EchoStub stub, int inFlight, double seconds) throws InterruptedException {
        double[] values = values();
        AtomicLong done = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch drained = new CountDownLatch(inFlight);
        long start = System.nanoTime();
        for (int i = 0; i < inFlight; i++) {
            next(stub, values, done, stop, drained);
        }
        TimeUnit.NANOSECONDS.sleep((long) (seconds * 1e9));
        stop.set(true);
        long counted = done.get();
        double elapsed = (System.nanoTime() - start) / 1e9;
        if (!drained.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("calls still in flight a minute after the run");
        }
        return counted / elapsed;
    }

    /** One call; when it ends, the next, until stopped: a fixed number in flight without a thread each. */
    private static void next(EchoStub stub, double[] values, AtomicLong done, AtomicBoolean stop, CountDownLatch drained) {
        CompletableFuture<double[]> call = stub.echoDoublesAsync(values);
        call.whenComplete((back, failure) -> {
            if (failure != null) {
                failure.printStackTrace();
                stop.set(true);
            } else {
                check(values, back);
                done.incrementAndGet();
            }
            if (stop.get()) {
                drained.countDown();
            } else {
                next(stub, values, done, stop, drained);
            }
        });
    }

    private static double[] values() {
        double[] v = new double[10];
        for (int i = 0; i < v.length; i++) {
            v[i] = i - 0.25;
        }
        return v;
    }

    private static void check(double[] sent, double[] back) {
        if (!java.util.Arrays.equals(sent, back)) {
            throw new IllegalStateException("wrong answer");
        }
    }
}
