package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.codec.proto.ProtoOutput;
import io.switchboard.protocol.ClientSettings;
import io.switchboard.protocol.Endpoint;
import io.switchboard.protocol.ServerSettings;
import io.switchboard.protocol.spi.ProtocolClient;
import io.switchboard.protocol.spi.ProtocolServer;
import io.switchboard.protocol.spi.Protocols;
import io.switchboard.testing.conformance.Conformance;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** Packed numbers of a bulk part go straight into gRPC's buffers, exactly, and only where that is safe. */
class LendingGrpcStreamTest {
    @Test
    void aBulkCallsPackedValuesAreLentIntoGrpcsBuffersBitForBit() {
        ProtocolServer server = Protocols.get("grpc").newServer(ServerSettings.defaults());
        ProtocolClient client = Protocols.get("grpc").newClient(ClientSettings.defaults());
        try {
            Endpoint at = server.export(ConformanceComponent.skeleton(new ConformanceImpl()));
            Conformance stub = ConformanceComponent.stub(client.connect(ConformanceComponent.DESCRIPTOR, at));
            double[] values = new double[3_000_001];   // three parts and a bit, each way
            for (int i = 0; i < values.length; i++) {
                values[i] = i % 7 == 0 ? Double.longBitsToDouble(0x7ff8_0000_0000_0000L | i) // NaNs with payloads
                        : i % 7 == 1 ? -0.0 : i % 7 == 2 ? Double.NEGATIVE_INFINITY : i * 1.0e-3 - 17;
            }
            long before = LendingGrpcStream.lentInAll();

            double[] back = stub.echoDoubles(values);

            long[] sent = new long[values.length];
            long[] got = new long[back.length];
            for (int i = 0; i < values.length; i++) {
                sent[i] = Double.doubleToRawLongBits(values[i]);
                got[i] = Double.doubleToRawLongBits(back[i]);
            }
            assertArrayEquals(sent, got);
            long lent = LendingGrpcStream.lentInAll() - before;
            long payload = 2L * values.length * 8;   // the request and the response, in this JVM
            assertTrue(lent > payload * 8 / 10 && lent < payload, lent + " of " + payload + " bytes lent");
        } finally {
            client.close();
            server.close();
        }
    }

    @Test
    void aStreamThatIsNotGrpcsLendsNothingAndTheBytesAreTheBlocks() {
        double[] values = new double[200_000];
        for (int i = 0; i < values.length; i++) {
            values[i] = i - 0.5;
        }
        ByteArrayOutputStream plain = new ByteArrayOutputStream();
        ProtoOutput direct = ProtoOutput.into(plain, new byte[64 << 10]);
        direct.writePackedDoubles(1, values, 0, values.length);
        direct.flush();

        ByteArrayOutputStream other = new ByteArrayOutputStream();
        long before = LendingGrpcStream.lentInAll();
        int n = LendingGrpcStream.drain(other, s -> {
            ProtoOutput o = ProtoOutput.into(s, new byte[64 << 10]);
            o.writePackedDoubles(1, values, 0, values.length);
            o.flush();
            return o.size();
        });

        assertEquals(plain.size(), n);
        assertArrayEquals(plain.toByteArray(), other.toByteArray());
        assertEquals(before, LendingGrpcStream.lentInAll(), "nothing lent to a stream that allocates no Netty buffer");
    }

    @Test
    void aWatchedBufferThatDoesNotEndWithTheBytesWrittenIsNotLent() {
        // a stream that takes a Netty buffer from the allocator but does not put the bytes there
        // (as compression would): the check after the write stops lending for the rest of the part
        ByteArrayOutputStream elsewhere = new ByteArrayOutputStream();
        java.util.List<io.grpc.netty.shaded.io.netty.buffer.ByteBuf> taken = new java.util.ArrayList<>();
        java.io.OutputStream decoy = new java.io.OutputStream() {
            @Override
            public void write(int b) {
                elsewhere.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                taken.add(NettyTuning.ALLOCATOR.buffer(len, len).writeZero(len));
                elsewhere.write(b, off, len);
            }
        };
        double[] values = new double[100_000];
        java.util.Arrays.fill(values, 2.5);
        long before = LendingGrpcStream.lentInAll();
        LendingGrpcStream.drain(decoy, s -> {
            ProtoOutput o = ProtoOutput.into(s, new byte[64 << 10]);
            o.writePackedDoubles(1, values, 0, values.length);
            o.flush();
            return o.size();
        });
        taken.forEach(io.grpc.netty.shaded.io.netty.buffer.ByteBuf::release);
        assertEquals(before, LendingGrpcStream.lentInAll());
        assertTrue(!taken.isEmpty());
        ByteBuffer le = ByteBuffer.wrap(elsewhere.toByteArray()).order(ByteOrder.LITTLE_ENDIAN);
        le.position(elsewhere.size() - values.length * 8);
        for (double v : values) {
            assertEquals(Double.doubleToRawLongBits(2.5), Double.doubleToRawLongBits(le.getDouble()));
        }
    }
}
