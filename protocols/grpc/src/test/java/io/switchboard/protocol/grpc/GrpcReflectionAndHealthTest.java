package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.DynamicMessage;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a gRPC client that knows nothing of Switchboard finds on any Switchboard gRPC server: server
 * reflection describing each exported component (so grpcurl and other generic clients can list and
 * call it) and the standard health service with each component's status.
 */
class GrpcReflectionAndHealthTest {
    private static final String SERVICE = "switchboard.conformance.Conformance";

    private ProtocolServer server;
    private Endpoint endpoint;
    private ManagedChannel channel;

    @BeforeEach
    void start() {
        server = Protocols.get("grpc").newServer(ServerSettings.defaults());
        endpoint = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
        channel = NettyChannelBuilder.forAddress(endpoint.uri().getHost(), endpoint.uri().getPort())
                .usePlaintext().build();
    }

    @AfterEach
    void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.close();
    }

    @Test
    void reflectionListsTheComponentBesideTheStandardServices() throws Exception {
        assertEquals(Set.of(SERVICE, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"), listServices());
    }

    @Test
    void reflectionDescribesEveryOperationAsTheServerServesIt() throws Exception {
        FileDescriptor file = fileContaining(SERVICE);
        assertEquals("Conformance.proto", file.getName());
        assertEquals("switchboard.conformance", file.getPackage());
        com.google.protobuf.Descriptors.ServiceDescriptor service = file.findServiceByName("Conformance");
        assertNotNull(service, "the service is in the file that reflection returns for its name");
        List<String> operations = ConformanceComponent.DESCRIPTOR.operations().stream()
                .map(OperationDescriptor::name).toList();
        assertEquals(operations, service.getMethods().stream().map(MethodDescriptor::getName).toList());
        for (MethodDescriptor m : service.getMethods()) {
            OperationDescriptor op = ConformanceComponent.DESCRIPTOR.operation(m.getName());
            boolean streams = GrpcTransport.streams(op);
            assertEquals(streams, m.isClientStreaming(), m.getName());
            assertEquals(streams, m.isServerStreaming(), m.getName());
            assertEquals("switchboard.conformance." + op.requestElement().getLocalPart(), m.getInputType().getFullName());
            assertEquals("switchboard.conformance." + (op.oneWay() ? "Empty" : op.responseElement().getLocalPart()),
                    m.getOutputType().getFullName());
        }
        assertTrue(service.findMethodByName("echoDoubles").isClientStreaming(), "a packed array streams");
        assertFalse(service.findMethodByName("divide").isClientStreaming(), "two longs are one unary message");
        assertEquals(file.toProto(), fileNamed("Conformance.proto").toProto(), "by file name, the same file");
    }

    /** The proof that the descriptors are right: a generic client calls with what reflection told it. */
    @Test
    void aClientBuiltFromReflectionAloneCallsTheComponent() throws Exception {
        FileDescriptor file = fileContaining(SERVICE);
        MethodDescriptor divide = file.findServiceByName("Conformance").findMethodByName("divide");
        io.grpc.MethodDescriptor<DynamicMessage, DynamicMessage> unary = dynamic(divide,
                io.grpc.MethodDescriptor.MethodType.UNARY);
        Descriptor in = divide.getInputType();
        DynamicMessage request = DynamicMessage.newBuilder(in).setField(in.findFieldByName("dividend"), -7L)
                .setField(in.findFieldByName("divisor"), 2L).build();
        DynamicMessage response = ClientCalls.blockingUnaryCall(channel, unary,
                io.grpc.CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), request);
        assertEquals(-3L, response.getField(divide.getOutputType().findFieldByName("quotient")));
        assertEquals(-1L, response.getField(divide.getOutputType().findFieldByName("remainder")));

        // a streaming method: the request in two parts, the response merged from its parts
        MethodDescriptor echo = file.findServiceByName("Conformance").findMethodByName("echoDoubles");
        FieldDescriptor values = echo.getInputType().findFieldByName("values");
        BlockingQueue<Object> answers = new LinkedBlockingQueue<>();
        StreamObserver<DynamicMessage> requests = ClientCalls.asyncBidiStreamingCall(
                channel.newCall(dynamic(echo, io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING),
                        io.grpc.CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS)),
                new Collect<>(answers));
        requests.onNext(DynamicMessage.newBuilder(echo.getInputType()).addRepeatedField(values, 1.5).build());
        requests.onNext(DynamicMessage.newBuilder(echo.getInputType()).addRepeatedField(values, -0.0).build());
        requests.onCompleted();
        DynamicMessage.Builder merged = DynamicMessage.newBuilder(echo.getOutputType());
        for (Object answer = answers.poll(30, TimeUnit.SECONDS); answer instanceof DynamicMessage m;
                answer = answers.poll(30, TimeUnit.SECONDS)) {
            merged.mergeFrom(m);
        }
        assertEquals(List.of(1.5, -0.0), merged.build().getField(echo.getOutputType().findFieldByName("values")));
    }

    private static io.grpc.MethodDescriptor<DynamicMessage, DynamicMessage> dynamic(MethodDescriptor m,
                                                                                   io.grpc.MethodDescriptor.MethodType type) {
        return io.grpc.MethodDescriptor.<DynamicMessage, DynamicMessage>newBuilder()
                .setType(type)
                .setFullMethodName(io.grpc.MethodDescriptor.generateFullMethodName(SERVICE, m.getName()))
                .setRequestMarshaller(ProtoUtils.marshaller(DynamicMessage.getDefaultInstance(m.getInputType())))
                .setResponseMarshaller(ProtoUtils.marshaller(DynamicMessage.getDefaultInstance(m.getOutputType())))
                .build();
    }

    @Test
    void anUnexportedComponentLeavesReflectionAndReadsNotServing() throws Exception {
        HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        assertEquals(ServingStatus.SERVING, health.check(check(SERVICE)).getStatus());
        assertEquals(ServingStatus.SERVING, health.check(check("")).getStatus(), "the server as a whole");

        server.unexport("Conformance");
        assertEquals(ServingStatus.NOT_SERVING, health.check(check(SERVICE)).getStatus());
        assertFalse(listServices().contains(SERVICE));
        assertEquals(ServingStatus.SERVING, health.check(check("")).getStatus(), "the server still serves");

        server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
        assertEquals(ServingStatus.SERVING, health.check(check(SERVICE)).getStatus());
        assertTrue(listServices().contains(SERVICE));
    }

    @Test
    void healthKnowsNoServiceThatWasNeverExported() {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> HealthGrpc.newBlockingStub(channel)
                .withDeadlineAfter(30, TimeUnit.SECONDS).check(check("switchboard.other.Other")));
        assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
    }

    @Test
    void aWatcherHearsNotServingWhenTheServerCloses() throws Exception {
        BlockingQueue<Object> statuses = new LinkedBlockingQueue<>();
        HealthGrpc.newStub(channel).watch(check(SERVICE), new Collect<>(statuses));
        assertEquals(ServingStatus.SERVING, ((HealthCheckResponse) statuses.poll(30, TimeUnit.SECONDS)).getStatus());

        server.close();
        assertEquals(ServingStatus.NOT_SERVING, ((HealthCheckResponse) statuses.poll(30, TimeUnit.SECONDS)).getStatus());
    }

    private static HealthCheckRequest check(String service) {
        return HealthCheckRequest.newBuilder().setService(service).build();
    }

    private Set<String> listServices() throws Exception {
        return reflect(ServerReflectionRequest.newBuilder().setListServices("*").build())
                .getListServicesResponse().getServiceList().stream().map(ServiceResponse::getName)
                .collect(Collectors.toSet());
    }

    private FileDescriptor fileContaining(String symbol) throws Exception {
        return build(reflect(ServerReflectionRequest.newBuilder().setFileContainingSymbol(symbol).build()));
    }

    private FileDescriptor fileNamed(String name) throws Exception {
        return build(reflect(ServerReflectionRequest.newBuilder().setFileByFilename(name).build()));
    }

    private static FileDescriptor build(ServerReflectionResponse response) throws Exception {
        List<ByteString> files = response.getFileDescriptorResponse().getFileDescriptorProtoList();
        assertEquals(1, files.size(), "the file imports nothing: " + response);
        return FileDescriptor.buildFrom(FileDescriptorProto.parseFrom(files.get(0)), new FileDescriptor[0]);
    }

    /** One request on the reflection stream, as a reflection client (grpcurl) makes it. */
    private ServerReflectionResponse reflect(ServerReflectionRequest request) throws Exception {
        CompletableFuture<ServerReflectionResponse> answer = new CompletableFuture<>();
        StreamObserver<ServerReflectionRequest> requests = ServerReflectionGrpc.newStub(channel)
                .withDeadlineAfter(30, TimeUnit.SECONDS).serverReflectionInfo(new StreamObserver<>() {
                    @Override
                    public void onNext(ServerReflectionResponse value) {
                        answer.complete(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        answer.completeExceptionally(new AssertionError("no answer"));
                    }
                });
        requests.onNext(request);
        requests.onCompleted();
        ServerReflectionResponse response = answer.get(30, TimeUnit.SECONDS);
        assertFalse(response.hasErrorResponse(), () -> "reflection refused: " + response.getErrorResponse());
        return response;
    }

    /** Puts each message, then the end (a Status), into a queue the test polls. */
    private record Collect<T>(BlockingQueue<Object> into) implements StreamObserver<T> {
        @Override
        public void onNext(T value) {
            into.add(value);
        }

        @Override
        public void onError(Throwable t) {
            into.add(Status.fromThrowable(t));
        }

        @Override
        public void onCompleted() {
            into.add(Status.OK);
        }
    }
}
