package io.switchboard.bench;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Plain grpc-java, what a team using gRPC alone would write: one unary method whose hand-written
 * {@link MethodDescriptor.Marshaller} encodes the raw socket's packed layout (doubles as one block,
 * list nodes field by field, no recursion), no Switchboard code on either side. Two variants: the
 * server's default executor ({@code grpc-plain}) and {@code directExecutor} on both sides
 * ({@code grpc-plain-direct}), the fastest configuration grpc-java offers.
 *
 * <pre>{@code
 * try (PlainGrpcPeer peer = new PlainGrpcPeer(port, false)) {
 *     Object back = peer.roundTrip(Payload.of(Workload.DOUBLES, 1000));
 * }
 * }</pre>
 */
final class PlainGrpcPeer implements Peer, AsyncBench.Target {
    static final String NAME = "grpc-plain";
    static final String DIRECT_NAME = "grpc-plain-direct";
    /** What an empty call sends: gRPC messages are never null. */
    private static final Object NOTHING = new Object();
    private static final MethodDescriptor<Object, Object> ECHO = MethodDescriptor.newBuilder(new RawMarshaller(), new RawMarshaller())
            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName("bench.Plain/Echo").build();

    private final boolean direct;
    private final ManagedChannel channel;
    private final int port;

    PlainGrpcPeer(int port, boolean direct) {
        this.port = port;
        this.direct = direct;
        this.channel = channel(port, direct);
    }

    @Override
    public String name() {
        return direct ? DIRECT_NAME : NAME;
    }

    @Override
    public Object roundTrip(Payload payload) {
        return call(channel, payload);
    }

    @Override
    public double[] echo(double[] values) {
        return (double[]) call(channel, new Payload(Workload.DOUBLES, values.length, values, null, null));
    }

    /** grpc-java's async unary call, its answer completing the future on gRPC's own thread. */
    @Override
    public CompletableFuture<double[]> echoAsync(double[] values) {
        CompletableFuture<double[]> answer = new CompletableFuture<>();
        ClientCalls.asyncUnaryCall(channel.newCall(ECHO, CallOptions.DEFAULT.withDeadlineAfter(Sweep.CALL_TIMEOUT_MILLIS,
                TimeUnit.MILLISECONDS)), values, new StreamObserver<>() {
                    @Override
                    public void onNext(Object value) {
                        answer.complete((double[]) value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        answer.complete(null);   // no-op after onNext
                    }
                });
        return answer;
    }

    @Override
    public long requestBytes(Payload payload) throws IOException {
        try (CountingProxy proxy = new CountingProxy(port)) {
            ManagedChannel counted = channel(proxy.port(), direct);
            try {
                call(counted, payload);   // the connection's preface and first headers are not a request's cost
                long before = proxy.upstreamBytes();
                call(counted, payload);
                return proxy.upstreamBytes() - before;
            } finally {
                counted.shutdownNow();
            }
        }
    }

    @Override
    public void close() {
        channel.shutdownNow();
    }

    private static Object call(ManagedChannel channel, Payload payload) {
        Object value = payload.javaValue();
        Object back = ClientCalls.blockingUnaryCall(channel, ECHO,
                CallOptions.DEFAULT.withDeadlineAfter(Sweep.CALL_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS),
                value == null ? NOTHING : value);
        return back == NOTHING ? null : back;
    }

    private static ManagedChannel channel(int port, boolean direct) {
        NettyChannelBuilder b = NettyChannelBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))
                .usePlaintext().maxInboundMessageSize(Integer.MAX_VALUE);
        return (direct ? b.directExecutor() : b).build();
    }

    /** Server side, in the forked JVM: the echo method on its own port. */
    static Server serve(boolean direct) throws IOException {
        ServerServiceDefinition service = ServerServiceDefinition.builder("bench.Plain")
                .addMethod(ECHO, ServerCalls.asyncUnaryCall((request, response) -> {
                    response.onNext(request);
                    response.onCompleted();
                })).build();
        NettyServerBuilder b = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .addService(service).maxInboundMessageSize(Integer.MAX_VALUE);
        return (direct ? b.directExecutor() : b).build().start();
    }

    /** A byte buffer read back without the copy {@link ByteArrayOutputStream#toByteArray} makes. */
    private static final class Bytes extends ByteArrayOutputStream {
        Bytes(int size) {
            super(size);
        }

        InputStream asInputStream() {
            return new ByteArrayInputStream(buf, 0, count);
        }
    }

    /** The raw socket's layout as a gRPC message; one codec (with its 64 KiB block) per thread. */
    private static final class RawMarshaller implements MethodDescriptor.Marshaller<Object> {
        private static final ThreadLocal<RawSocketPeer.Codec> CODEC = ThreadLocal.withInitial(RawSocketPeer.Codec::new);

        @Override
        public InputStream stream(Object value) {
            Bytes bytes = new Bytes(value instanceof double[] d ? d.length * 8 + 8 : 64);
            try (DataOutputStream out = new DataOutputStream(bytes)) {
                CODEC.get().write(out, value == NOTHING ? null : value);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return bytes.asInputStream();
        }

        @Override
        public Object parse(InputStream stream) {
            try {
                Object value = CODEC.get().read(new DataInputStream(stream));
                return value == null ? NOTHING : value;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
