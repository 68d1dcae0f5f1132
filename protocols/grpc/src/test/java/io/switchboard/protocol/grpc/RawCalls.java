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

/** A gRPC client that sends chosen bytes, to test what the server does with hostile input. */
final class RawCalls implements AutoCloseable {
    private final ManagedChannel channel;

    RawCalls(Endpoint endpoint) {
        channel = NettyChannelBuilder.forAddress(endpoint.uri().getHost(), endpoint.uri().getPort())
                .usePlaintext().build();
    }

    /** What came back: the status, its trailers and the concatenated response data. */
    record Result(Status status, Metadata trailers, byte[] data) {
    }

    Result call(OperationDescriptor op, List<Frame> frames) throws Exception {
        CompletableFuture<Result> done = new CompletableFuture<>();
        ByteArrayOutputStream data = new ByteArrayOutputStream();
        ClientCall<Frame, Frame> call = channel.newCall(GrpcTransport.method(op),
                io.grpc.CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS));
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onMessage(Frame message) {
                Frame.Incoming chunk = (Frame.Incoming) message;
                try {
                    for (java.nio.ByteBuffer b : chunk.data) {
                        byte[] bytes = new byte[b.remaining()];
                        b.duplicate().get(bytes);
                        data.write(bytes, 0, bytes.length);
                    }
                } finally {
                    chunk.release();
                }
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                done.complete(new Result(status, trailers, data.toByteArray()));
            }
        }, new Metadata());
        call.request(Integer.MAX_VALUE);
        for (Frame f : frames) {
            call.sendMessage(f);
        }
        call.halfClose();
        return done.get(30, TimeUnit.SECONDS);
    }

    Result call(OperationDescriptor op, byte[] message) throws Exception {
        return call(op, List.of(Frame.ofData(message)));
    }

    @Override
    public void close() {
        channel.shutdownNow();
    }
}
