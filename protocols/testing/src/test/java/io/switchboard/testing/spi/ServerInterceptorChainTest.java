package io.switchboard.testing.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.idl.runtime.ServiceDescriptor;
import io.switchboard.protocol.ServerCall;
import io.switchboard.protocol.ServerInterceptor;
import io.switchboard.protocol.ServerInterceptorChain;
import io.switchboard.protocol.Skeleton;
import io.switchboard.testing.conformance.ConformanceComponent;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The linking of server steps: their order, what each sees, refusals told to every one. */
class ServerInterceptorChainTest {
    private static final OperationDescriptor OP = ConformanceComponent.DESCRIPTOR.operation("increment");

    private final List<String> events = new CopyOnWriteArrayList<>();
    private final Object answer = new Object();

    private final Skeleton component = new Skeleton() {
        @Override
        public ServiceDescriptor descriptor() {
            return ConformanceComponent.DESCRIPTOR;
        }

        @Override
        public Object invoke(OperationDescriptor operation, Object request) {
            events.add("skeleton " + operation.name() + " " + request);
            return answer;
        }

        @Override
        public Object invoke(OperationDescriptor operation, Object request, String callId) {
            events.add("skeleton " + operation.name() + " " + request + " " + callId);
            return answer;
        }

        @Override
        public void refused(OperationDescriptor operation, String reason) {
            events.add("skeleton refused " + reason);
        }
    };

    private ServerInterceptor step(String name) {
        return new Step(name);
    }

    /** Notes what it sees, going in and out. */
    private final class Step implements ServerInterceptor {
        private final String name;

        Step(String name) {
            this.name = name;
        }

        @Override
        public Object intercept(ServerCall call, Chain next) throws io.switchboard.idl.runtime.DeclaredFault {
            events.add(name + " in: " + call.component() + " " + call.protocol() + " " + call.operation().name()
                    + " " + call.callId());
            Object out = next.proceed(call);
            events.add(name + " out");
            return out;
        }

        @Override
        public void refused(ServerCall call, String reason) {
            events.add(name + " refused " + call.operation().name() + " over " + call.protocol() + ": " + reason
                    + ", request " + call.request());
        }
    }

    @Test
    void aCallMeetsTheStepsInOrderThenTheSkeleton() throws Exception {
        ServerInterceptorChain chain = ServerInterceptorChain.of("Counter", "grpc", List.of(step("a"), step("b")), component);

        assertSame(answer, chain.invoke(OP, "req", "id-1"));
        assertEquals(List.of("a in: Counter grpc increment id-1", "b in: Counter grpc increment id-1",
                "skeleton increment req id-1", "b out", "a out"), events);
        assertEquals(ConformanceComponent.DESCRIPTOR, chain.descriptor());
        assertEquals("Counter over grpc: Step -> Step -> the skeleton", chain.toString(), "the chain in one line");
        assertEquals(2, chain.interceptors().size());
    }

    @Test
    void aStepThatDoesNotProceedAnswersForTheRest() throws Exception {
        Object cached = new Object();
        ServerInterceptorChain chain = ServerInterceptorChain.of(null, null,
                List.of(step("a"), (call, next) -> cached, step("never")), component);

        assertSame(cached, chain.invoke(OP, "req"));
        assertEquals(List.of("a in: Conformance null increment null", "a out"), events,
                "served under its interface name when none is given; the steps after it and the skeleton never ran");
    }

    @Test
    void aRefusalIsToldToEveryStepInOrderThenTheSkeleton() {
        ServerInterceptorChain chain = ServerInterceptorChain.of("Counter", "soap",
                List.of(step("a"), (call, next) -> next.proceed(call), step("b")), component);

        chain.refused(OP, "malformed");

        assertEquals(List.of("a refused increment over soap: malformed, request null",
                "b refused increment over soap: malformed, request null", "skeleton refused malformed"), events);
    }
}
