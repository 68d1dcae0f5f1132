package io.switchboard.protocol.spi;

import io.switchboard.codec.message.MessageChecks;
import io.switchboard.codec.message.NodeTable;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoOutput;
import io.switchboard.idl.runtime.ServiceDescriptor;
import java.io.OutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * A decoded message's canonical bytes, digested or counted: its encoding by the interface's binary
 * codec, which is the same for the same message whichever protocol it arrived over (SOAP's XML and
 * gRPC's protobuf decode to the same beans, and the codec writes fields in schema order and a
 * linked structure's nodes in the order it reaches them), with every NaN written as one canonical
 * NaN, since SOAP's XML keeps no NaN's sign or payload. Internal to the de-duplicator.
 */
final class RequestDigest {
    /** The largest block the encoding streams through: a large message is never held whole. */
    private static final int BLOCK = 8 * 1024;
    /** One digest per thread, reset by each {@code digest()}: {@code getInstance} costs a provider lookup per call. */
    private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(RequestDigest::newSha256);

    private RequestDigest() {
    }

    /**
     * SHA-256 of {@code message}'s encoding as the message element {@code element}; null when the
     * interface has no binary codec (an interface built by hand), so requests cannot be told apart.
     */
    static byte[] sha256(ServiceDescriptor service, String element, Object message) {
        ProtoCodec codec = service.codec(ProtoCodec.class);
        if (codec == null) {
            return null;
        }
        MessageDigest sha = SHA256.get();
        sha.reset();
        if (message != null) {
            ProtoCodec.Writer writer = writer(service, codec, element, message);
            ProtoOutput out = ProtoOutput.into(new OutputStream() {
                @Override
                public void write(int b) {
                    sha.update((byte) b);
                }

                @Override
                public void write(byte[] b, int off, int len) {
                    sha.update(b, off, len);
                }
            }, new byte[(int) Math.max(16, Math.min(BLOCK, writer.size()))])   // a small request, a small block
                    .canonicalNaNs();   // XML has one NaN: a repeat over SOAP is the same request
            do {
                writer.writePart(out, Integer.MAX_VALUE);
            } while (writer.hasMore());
            out.flush();
        }
        return sha.digest();
    }

    /** The bytes of {@code message}'s encoding (its size pass only); -1 without a binary codec or when it cannot be encoded. */
    static long encodedSize(ServiceDescriptor service, String element, Object message) {
        ProtoCodec codec = service.codec(ProtoCodec.class);
        if (codec == null || message == null) {
            return message == null ? 0 : -1;
        }
        try {
            return writer(service, codec, element, message).size();
        } catch (RuntimeException e) {
            return -1;   // an answer the protocols will refuse to send: only its size is unknown here
        }
    }

    private static ProtoCodec.Writer writer(ServiceDescriptor service, ProtoCodec codec, String element, Object message) {
        // no node limit: the message was decoded (or made) within the server's limits already
        MessageChecks checks = service.codec(MessageChecks.class);
        NodeTable nodes = checks == null ? null : checks.check(message, Integer.MAX_VALUE);
        return NodeTable.during(nodes, () -> codec.writer(element, message, Integer.MAX_VALUE));
    }

    private static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
