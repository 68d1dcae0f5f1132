package io.switchboard.protocol.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.Detachable;
import io.grpc.HasByteBuffer;
import io.grpc.KnownLength;
import io.switchboard.codec.message.MessageLimits;
import io.switchboard.codec.message.WireFormatException;
import io.switchboard.codec.proto.ProtoCodec;
import io.switchboard.codec.proto.ProtoOutput;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.EchoDoubles;
import io.switchboard.testing.conformance.Values;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A received part read in place from gRPC's buffers ({@link Part#readInto}; here whatever its size,
 * as a part of {@link Part#IN_PLACE_BYTES} or more is) reads what the same
 * bytes read from one array read, however the buffers cut them, and gives the buffers back exactly
 * once, whether the part reads well or is refused.
 */
class PartInPlaceReadTest {
    private static final ProtoCodec CODEC = ConformanceComponent.DESCRIPTOR.codec(ProtoCodec.class);
    private static final int[] CUTS = {1, 2, 3, 5, 7, 8, 9, 13, 100, 4097, 70_000};

    @Test
    void everyMessageShapeReadsBackTheSameFromBuffersCutAnywhere() {
        for (Object[] shape : Values.messageShapes()) {
            String element = (String) shape[0];
            byte[] bytes = CODEC.toBytes(element, shape[1], 1_000_000);
            for (int cut : CUTS) {
                for (int minInPlace : new int[] {0, Part.IN_PLACE_BYTES}) {   // in place, or copied if small
                    AtomicInteger closed = new AtomicInteger();
                    Part part = Part.MARSHALLER.parse(new Buffers(bytes, cut, closed));
                    ProtoCodec.Reader r = CODEC.reader(element, MessageLimits.unlimited(), bytes.length);
                    part.readInto(r, new Part.Scratch(), minInPlace);
                    assertArrayEquals(bytes, CODEC.toBytes(element, r.finish(), 1_000_000), element + " in buffers of " + cut);
                    assertEquals(1, closed.get(), "gRPC's buffers are given back once");
                }
            }
        }
    }

    @Test
    void aBigArrayInPartsReadsBackBitForBit() {
        double[] values = new double[(ProtoCodec.PART_BYTES / 8) * 2 + 3];
        for (int i = 0; i < values.length; i++) {
            values[i] = i % 7 == 0 ? Values.EDGE_DOUBLES[i % Values.EDGE_DOUBLES.length] : Math.sqrt(i);
        }
        EchoDoubles d = new EchoDoubles();
        d.setValues(values);
        for (int cut : new int[] {16 * 1024, 16 * 1024 + 3, 65_531}) {
            ProtoCodec.Writer w = CODEC.writer("echoDoubles", d, 10);
            ProtoCodec.Reader r = CODEC.reader("echoDoubles", MessageLimits.unlimited(), w.size());
            ProtoOutput out = new ProtoOutput(1 << 20);
            do {
                out.reset();
                w.writePart(out, ProtoCodec.PART_BYTES);
                Part.MARSHALLER.parse(new Buffers(out.toByteArray(), cut, new AtomicInteger())).readInto(r, new Part.Scratch(), 0);
            } while (w.hasMore());
            Values.assertSameDoubles(values, ((EchoDoubles) r.finish()).getValues());
        }
    }

    /**
     * The reader looks at gRPC's current buffer several times (tags and lengths through its
     * window, a value cut at the buffer's end, the packed run after it), but asks gRPC for each
     * buffer once: Netty makes new ByteBuffers on every ask.
     */
    @Test
    void eachOfGrpcsBuffersIsAskedForOnce() {
        double[] values = new double[20_000];
        for (int i = 0; i < values.length; i++) {
            values[i] = Math.sqrt(i) - 3;
        }
        EchoDoubles d = new EchoDoubles();
        d.setValues(values);
        byte[] bytes = CODEC.toBytes("echoDoubles", d, 10);
        for (int cut : new int[] {13, 4097, 16 * 1024 + 3, 70_000}) {
            Buffers buffers = new Buffers(bytes, cut, new AtomicInteger());
            int count = buffers.buffers.size();
            ProtoCodec.Reader r = CODEC.reader("echoDoubles", MessageLimits.unlimited(), bytes.length);
            Part.MARSHALLER.parse(buffers).readInto(r, new Part.Scratch(), 0);
            Values.assertSameDoubles(values, ((EchoDoubles) r.finish()).getValues());
            assertEquals(count, buffers.shown.get(), "getByteBuffer calls for " + count + " buffers of " + cut + " bytes");
        }
    }

    /** A part cut short reads as the same bytes in one array do: refused alike, or read alike. */
    @Test
    void aTruncatedPartIsRefusedAsFromAnArray() {
        List<Object[]> shapes = Values.messageShapes();
        for (Object[] shape : shapes) {
            String element = (String) shape[0];
            byte[] whole = CODEC.toBytes(element, shape[1], 1_000_000);
            for (int length : new int[] {whole.length - 1, whole.length / 2, whole.length / 3 + 1, 5, 1}) {
                if (length <= 0 || length >= whole.length) {
                    continue;
                }
                byte[] bytes = Arrays.copyOf(whole, length);
                String fromArray = outcome(() -> {
                    ProtoCodec.Reader r = CODEC.reader(element, MessageLimits.unlimited(), -1);
                    r.readPart(bytes, 0, bytes.length);
                    return r.finish();
                }, element);
                for (int cut : new int[] {1, 3, 8, 4097}) {
                    AtomicInteger closed = new AtomicInteger();
                    String inPlace = outcome(() -> {
                        ProtoCodec.Reader r = CODEC.reader(element, MessageLimits.unlimited(), -1);
                        Part.MARSHALLER.parse(new Buffers(bytes, cut, closed)).readInto(r, new Part.Scratch(), 0);
                        return r.finish();
                    }, element);
                    assertEquals(fromArray, inPlace, element + " cut to " + length + " bytes, in buffers of " + cut);
                    assertEquals(1, closed.get(), "gRPC's buffers are given back once, also when the part is refused");
                }
            }
        }
    }

    @Test
    void limitsHoldInPlace() {
        EchoDoubles d = new EchoDoubles();
        d.setValues(new double[1000]);
        byte[] bytes = CODEC.toBytes("echoDoubles", d, 10);
        AtomicInteger closed = new AtomicInteger();
        Part part = Part.MARSHALLER.parse(new Buffers(bytes, 100, closed));
        ProtoCodec.Reader r = CODEC.reader("echoDoubles", MessageLimits.of(bytes.length - 1, 10), -1);
        WireFormatException e = assertThrows(WireFormatException.class, () -> part.readInto(r, new Part.Scratch(), 0));
        assertEquals(WireFormatException.SIZE_LIMIT, e.reason());
        assertEquals(1, closed.get());
        part.release();
        assertEquals(1, closed.get(), "release after reading gives nothing back twice");
    }

    private interface Read {
        Object run();
    }

    /** What reading gives: the message's bytes again, or the refusal's reason. */
    private static String outcome(Read read, String element) {
        try {
            return Arrays.toString(CODEC.toBytes(element, read.run(), 1_000_000));
        } catch (WireFormatException e) {
            return "refused: " + e.reason();
        }
    }

    /**
     * What gRPC's parser hands a marshaller: a stream over buffers ({@code cut} bytes each, as
     * network reads cut them) that can be detached, shows its buffers, and releases them on close.
     */
    private static final class Buffers extends InputStream implements KnownLength, Detachable, HasByteBuffer {
        private final List<ByteBuffer> buffers = new ArrayList<>();
        private final AtomicInteger closed;
        /** Calls of {@link #getByteBuffer}, shared with the detached stream. */
        private final AtomicInteger shown;
        private int left;

        Buffers(byte[] bytes, int cut, AtomicInteger closed) {
            this.closed = closed;
            this.shown = new AtomicInteger();
            for (int at = 0; at < bytes.length; at += cut) {
                // direct, as Netty's are, each a copy: nothing reads the array behind them
                int n = Math.min(cut, bytes.length - at);
                ByteBuffer b = ByteBuffer.allocateDirect(n).put(bytes, at, n).flip();
                buffers.add(b);
            }
            this.left = bytes.length;
        }

        private Buffers(Buffers from) {
            this.buffers.addAll(from.buffers);
            this.closed = from.closed;
            this.shown = from.shown;
            this.left = from.left;
            from.buffers.clear();
            from.left = 0;
        }

        @Override
        public InputStream detach() {
            return new Buffers(this);
        }

        @Override
        public int available() {
            return left;
        }

        @Override
        public boolean byteBufferSupported() {
            return true;
        }

        @Override
        public ByteBuffer getByteBuffer() {
            shown.incrementAndGet();
            return buffers.get(0).slice();
        }

        @Override
        public long skip(long n) {
            long done = 0;
            while (done < n && !buffers.isEmpty()) {
                ByteBuffer b = buffers.get(0);
                int k = (int) Math.min(n - done, b.remaining());
                b.position(b.position() + k);
                done += k;
                if (!b.hasRemaining()) {
                    buffers.remove(0);
                }
            }
            left -= (int) done;
            return done;
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) == 1 ? one[0] & 0xFF : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (left == 0) {
                return -1;
            }
            int done = 0;
            while (done < len && !buffers.isEmpty()) {
                ByteBuffer first = buffers.get(0);
                int k = Math.min(len - done, first.remaining());
                first.get(b, off + done, k);
                done += k;
                if (!first.hasRemaining()) {
                    buffers.remove(0);
                }
            }
            left -= done;
            return done;
        }

        /** Each close gives the buffers back: counted, so that a second one shows. */
        @Override
        public void close() {
            closed.incrementAndGet();
            buffers.clear();
            left = 0;
        }
    }
}
