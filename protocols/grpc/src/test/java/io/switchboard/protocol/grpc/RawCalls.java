package io.switchboard.protocol.grpc;

import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.switchboard.idl.runtime.OperationDescriptor;
import io.switchboard.protocol.Endpoint;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** A gRPC client that sends chosen parts, to test what the server does with hostile input. */
final class RawCalls implements AutoCloseable {
    private final ManagedChannel channel;

    RawCalls(Endpoint endpoint) {
        channel = NettyChannelBuilder.forAddress(endpoint.uri().getHost(), endpoint.uri().getPort())
                .usePlaintext().build();
    }

    /** What came back: the status, its trailers and the concatenated response data. */
    record Result(Status status, Metadata trailers, byte[] data) {
    }

    Result call(OperationDescriptor op, List<byte[]> parts) throws Exception {
        return call(op, parts, new Metadata());
    }

    /** Sends {@code parts} as the call's gRPC messages, with {@code headers}. */
    Result call(OperationDescriptor op, List<byte[]> parts, Metadata headers) throws Exception {
        CompletableFuture<Result> done = new CompletableFuture<>();
        ByteArrayOutputStream data = new ByteArrayOutputStream();
        ClientCall<Part, Part> call = channel.newCall(GrpcTransport.method(op),
                io.grpc.CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS));
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onMessage(Part message) {
                data.write(message.read(new Part.Scratch()), 0, message.length);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                done.complete(new Result(status, trailers, data.toByteArray()));
            }
        }, headers);
        call.request(Integer.MAX_VALUE);
        for (byte[] p : parts) {
            call.sendMessage(new Part(p, p.length));
        }
        call.halfClose();
        return done.get(30, TimeUnit.SECONDS);
    }

    /** A message as one part. */
    Result call(OperationDescriptor op, byte[] message) throws Exception {
        return call(op, List.of(message));
    }

    @Override
    public void close() {
        channel.shutdownNow();
    }
}
