package io.switchboard.registry;

import io.grpc.MethodDescriptor;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.registry.wire.ListEntries;
import io.switchboard.registry.wire.ListEntriesResponse;
import io.switchboard.registry.wire.Lookup;
import io.switchboard.registry.wire.LookupLean;
import io.switchboard.registry.wire.LookupLeanResponse;
import io.switchboard.registry.wire.LookupResponse;
import io.switchboard.registry.wire.RegistryComponent;
import io.switchboard.registry.wire.Watch;
import io.switchboard.registry.wire.WatchResponse;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * Internal: the registry's watch stream and reads as gRPC methods, shared by the registry server,
 * {@link RegistryWatch} and {@link RegistryClient}. Besides {@code follow}, the unary {@code lookup},
 * {@code lookupLean} and {@code listEntries} answer as the SOAP operations of the same names do, in the registry's
 * proto3 form: a client that knows the stream reads there (an answer of 10,000 entries is a few
 * milliseconds of protobuf, not XML on both sides), and falls back to SOAP when it cannot. {@code switchboard.registry.RegistryWatch/follow} is a server-streaming
 * call: the request is the SOAP {@code watch} operation's message ({@code names}, {@code epoch},
 * {@code sinceVersion}; {@code waitSeconds} is ignored), each streamed message a {@code
 * watchResponse}, both in the registry's proto3 form. A {@code reset} message is a snapshot: its
 * events are an {@code APPEAR} for every instance of the names watched, bound at its version; the
 * others carry the changes after the previous message's version.
 */
public final class WatchStreamMethod {
    public static final String SERVICE = "switchboard.registry.RegistryWatch";
    public static final String FULL_NAME = MethodDescriptor.generateFullMethodName(SERVICE, "follow");
    public static final MethodDescriptor<Lookup, LookupResponse> LOOKUP = unary(Lookup.class, "lookup",
            LookupResponse.class, "lookupResponse");
    /** {@code lookup} with each interface document once, by digest; a fault is {@code INVALID_ARGUMENT}. */
    public static final MethodDescriptor<LookupLean, LookupLeanResponse> LOOKUP_LEAN = unary(LookupLean.class,
            "lookupLean", LookupLeanResponse.class, "lookupLeanResponse");
    public static final MethodDescriptor<ListEntries, ListEntriesResponse> LIST = unary(ListEntries.class, "listEntries",
            ListEntriesResponse.class, "listEntriesResponse");
    /** The largest request a registry reads: a list of at most 256 names. */
    public static final int MAX_REQUEST_BYTES = 128 << 10;
    /** The bearer token a client sends on the listener's calls ({@code Bearer <jwt>}), as gRPC's own. */
    public static final io.grpc.Metadata.Key<String> AUTHORIZATION = io.grpc.Metadata.Key.of("authorization",
            io.grpc.Metadata.ASCII_STRING_MARSHALLER);
    /** The largest message a client reads: a snapshot of tens of thousands of entries without schemas. */
    public static final int MAX_MESSAGE_BYTES = 64 << 20;
    private static final int MAX_REQUEST_NODES = 1_024;
    private static final int MAX_MESSAGE_NODES = 4_000_000;
    private static final ProtoCodec CODEC = RegistryComponent.DESCRIPTOR.codec(ProtoCodec.class);
    /**
     * {@code lookupLean} with its answer in wire form, as the registry sends answers it keeps
     * encoded and a client compares an answer with the last of the same name before decoding it
     * ({@link #decodeLookupLean}). The same method on the wire as {@link #LOOKUP_LEAN}.
     */
    public static final MethodDescriptor<LookupLean, byte[]> LOOKUP_LEAN_WIRE = MethodDescriptor.newBuilder(
                    marshaller(LookupLean.class, "lookupLean", MAX_REQUEST_NODES,
                            MessageLimits.of(MAX_REQUEST_BYTES, MAX_REQUEST_NODES)), new Bytes())
            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName(LOOKUP_LEAN.getFullMethodName())
            .setIdempotent(true).build();

    private WatchStreamMethod() {
    }

    /** The method as a client calls it. */
    public static MethodDescriptor<Watch, WatchResponse> client() {
        return MethodDescriptor.newBuilder(marshaller(Watch.class, "watch", MAX_REQUEST_NODES,
                        MessageLimits.of(MAX_REQUEST_BYTES, MAX_REQUEST_NODES)),
                        marshaller(WatchResponse.class, "watchResponse", MAX_MESSAGE_NODES,
                                MessageLimits.of(MAX_MESSAGE_BYTES, MAX_MESSAGE_NODES)))
                .setType(MethodDescriptor.MethodType.SERVER_STREAMING).setFullMethodName(FULL_NAME).build();
    }

    /** The method as the registry serves it: answers encoded once ({@link #encode}) and sent to every watcher alike. */
    public static MethodDescriptor<Watch, byte[]> server() {
        return MethodDescriptor.newBuilder(marshaller(Watch.class, "watch", MAX_REQUEST_NODES,
                        MessageLimits.of(MAX_REQUEST_BYTES, MAX_REQUEST_NODES)), new Bytes())
                .setType(MethodDescriptor.MethodType.SERVER_STREAMING).setFullMethodName(FULL_NAME).build();
    }

    private static <Q, A> MethodDescriptor<Q, A> unary(Class<Q> request, String requestName, Class<A> answer,
                                                        String answerName) {
        return MethodDescriptor.newBuilder(marshaller(request, requestName, MAX_REQUEST_NODES,
                        MessageLimits.of(MAX_REQUEST_BYTES, MAX_REQUEST_NODES)),
                        marshaller(answer, answerName, MAX_MESSAGE_NODES, MessageLimits.of(MAX_MESSAGE_BYTES, MAX_MESSAGE_NODES)))
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, requestName)).setIdempotent(true).build();
    }

    /** One streamed message in its wire form. */
    public static byte[] encode(WatchResponse message) {
        return CODEC.toBytes("watchResponse", message, MAX_MESSAGE_NODES);
    }

    /** A {@code lookupLeanResponse} in its wire form. */
    public static byte[] encodeLookupLean(LookupLeanResponse answer) {
        return CODEC.toBytes("lookupLeanResponse", answer, MAX_MESSAGE_NODES);
    }

    /** A {@code lookupLeanResponse} read from its wire form, within the limits of every answer a client reads. */
    public static LookupLeanResponse decodeLookupLean(byte[] answer) {
        return (LookupLeanResponse) CODEC.fromBytes("lookupLeanResponse", answer,
                MessageLimits.of(MAX_MESSAGE_BYTES, MAX_MESSAGE_NODES));
    }

    private static <T> MethodDescriptor.Marshaller<T> marshaller(Class<T> type, String message, int maxNodes,
                                                                MessageLimits limits) {
        return new MethodDescriptor.Marshaller<>() {
            @Override
            public InputStream stream(T value) {
                return new MessageBytes(CODEC.toBytes(message, value, maxNodes));
            }

            @Override
            public T parse(InputStream stream) {
                // gRPC has bounded the message already (the channel's or server's inbound limit)
                return type.cast(CODEC.fromBytes(message, readAll(stream, limits.maxMessageBytes()), limits));
            }
        };
    }

    private static byte[] readAll(InputStream in, long max) {
        try (in) {
            if (in instanceof io.grpc.KnownLength) {
                // gRPC's own message stream knows its length: one array of that size, no growing copies
                int length = in.available();
                if (length > max) {
                    throw new IllegalArgumentException("a watch message is longer than " + max + " bytes");
                }
                byte[] bytes = in.readNBytes(length);
                if (bytes.length == length && in.read() < 0) {
                    return bytes;
                }
                throw new IllegalArgumentException("a watch message is not as long as its stream said");
            }
            byte[] bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 16, max + 1));
            if (bytes.length > max) {
                throw new IllegalArgumentException("a watch message is longer than " + max + " bytes");
            }
            return bytes;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static final class Bytes implements MethodDescriptor.Marshaller<byte[]> {
        @Override
        public InputStream stream(byte[] value) {
            return new MessageBytes(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            return readAll(stream, MAX_MESSAGE_BYTES);
        }
    }

    /**
     * An encoded message as gRPC sends it best: of a known length, and drained into the frame in
     * one write. A plain stream is copied through a fresh 8 KiB buffer per message.
     */
    private static final class MessageBytes extends ByteArrayInputStream implements io.grpc.Drainable,
            io.grpc.KnownLength {
        MessageBytes(byte[] bytes) {
            super(bytes);
        }

        @Override
        public synchronized int drainTo(java.io.OutputStream target) throws IOException {
            int n = count - pos;
            target.write(buf, pos, n);
            pos = count;
            return n;
        }
    }
}
