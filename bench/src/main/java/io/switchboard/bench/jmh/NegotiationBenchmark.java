package io.switchboard.bench.jmh;

import io.switchboard.components.echo.EchoComponent;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.metastub.CallContext;
import io.switchboard.metastub.MessageSize;
import io.switchboard.metastub.Policies;
import io.switchboard.metastub.ProtocolSuite;
import io.switchboard.metastub.SelectionPolicy;
import io.switchboard.protocol.Endpoint;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the meta-stub's per-call decision costs, without a network: a fresh {@link CallContext}
 * for the call (as {@code MetaStub.call} makes one) and the policy's {@code select} over a suite
 * whose server speaks gRPC and SOAP, for the SC2000 payload shapes. The payload estimate is part
 * of it: a policy that asks for one pays for the bounded walk over the message. The budget is
 * under 2 µs per call.
 *
 * <pre>{@code
 * java -cp "bench/target/classes:cli/target/lib/*" org.openjdk.jmh.Main Negotiation -f 1 -wi 3 -w 1 -i 5 -r 1
 * ./switchboard bench --jmh Negotiation                              # the same, through the launcher
 * }</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-XX:+UseG1GC"})
public class NegotiationBenchmark {
    @Param({"adaptive", "size", "first-common"})
    public String policy;

    /** {@code empty}, {@code doubles:N} or {@code list:N}. */
    @Param({"empty", "doubles:10", "doubles:1000000", "list:10", "list:1000000"})
    public String payload;

    private SelectionPolicy selection;
    private ProtocolSuite suite;
    private List<String> candidates;
    private MessageSize sizes;
    private OperationDescriptor operation;
    private Object request;

    @Setup
    public void setUp() {
        // addresses nobody listens on: nothing here opens a connection
        suite = ProtocolSuite.of(List.of("grpc", "soap"), List.of(
                new Endpoint("grpc", "grpc://127.0.0.1:9"),
                new Endpoint("soap", "http://127.0.0.1:9/axis2/services/Echo")));
        candidates = suite.candidates();
        selection = Policies.byName(policy);
        sizes = new MessageSize(EchoComponent.DESCRIPTOR.model());
        Payloads.Message m = Payloads.message(payload);
        operation = EchoComponent.DESCRIPTOR.operation(m.operation());
        request = m.request();
    }

    @Benchmark
    public String select() {
        return selection.select(CallContext.of(operation, request, suite, sizes), candidates);
    }
}
