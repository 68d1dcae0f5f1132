package io.switchboard.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.KnownLength;
import io.switchboard.registry.wire.LookupLean;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Reading a listener's message: by the length gRPC's stream knows, and never past the bounds. */
class WatchStreamMethodTest {
    /** A stream that says it holds {@code said} bytes, as gRPC's message streams say theirs. */
    private static final class Known extends ByteArrayInputStream implements KnownLength {
        private final int said;

        Known(byte[] bytes, int said) {
            super(bytes);
            this.said = said;
        }

        @Override
        public synchronized int available() {
            return Math.max(0, said - pos);
        }
    }

    private static byte[] request(String name, List<String> known) {
        LookupLean r = new LookupLean();
        r.setName(name);
        r.setKnownSchemas(known);
        try (InputStream in = WatchStreamMethod.LOOKUP_LEAN.streamRequest(r)) {
            return in.readAllBytes();
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aMessageOfKnownLengthReadsAsFromAnyStream() {
        String digest = SchemaDigests.of("<schema/>");
        byte[] bytes = request("Lean", List.of(digest));
        LookupLean byLength = WatchStreamMethod.LOOKUP_LEAN.parseRequest(new Known(bytes, bytes.length));
        LookupLean plain = WatchStreamMethod.LOOKUP_LEAN.parseRequest(new ByteArrayInputStream(bytes));
        assertEquals("Lean", byLength.getName());
        assertEquals(List.of(digest), byLength.getKnownSchemas());
        assertEquals(plain.getName(), byLength.getName());
        assertEquals(plain.getKnownSchemas(), byLength.getKnownSchemas());
    }

    @Test
    void aStreamLongerOrShorterThanItSaidIsRefused() {
        byte[] bytes = request("Lean", null);
        assertThrows(IllegalArgumentException.class,
                () -> WatchStreamMethod.LOOKUP_LEAN.parseRequest(new Known(bytes, bytes.length - 1)));
        assertThrows(IllegalArgumentException.class,
                () -> WatchStreamMethod.LOOKUP_LEAN.parseRequest(new Known(bytes, bytes.length + 5)));
    }

    @Test
    void aStreamSayingMoreThanTheLimitIsRefusedBeforeReading() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> WatchStreamMethod.LOOKUP_LEAN.parseRequest(new Known(new byte[0],
                        WatchStreamMethod.MAX_REQUEST_BYTES + 1)));
        assertEquals("a watch message is longer than " + WatchStreamMethod.MAX_REQUEST_BYTES + " bytes", e.getMessage());
    }

    @Test
    void anEncodedMessageDrainsWhole() throws java.io.IOException {
        LookupLean r = new LookupLean();
        r.setName("Lean");
        byte[] read = request("Lean", null);
        InputStream stream = WatchStreamMethod.LOOKUP_LEAN.streamRequest(r);
        assertEquals(read.length, stream.available(), "gRPC learns the length without reading");
        java.io.ByteArrayOutputStream drained = new java.io.ByteArrayOutputStream();
        assertEquals(read.length, ((io.grpc.Drainable) stream).drainTo(drained));
        org.junit.jupiter.api.Assertions.assertArrayEquals(read, drained.toByteArray());
        assertEquals(-1, stream.read(), "nothing is left once drained");
        assertEquals("Lean", WatchStreamMethod.LOOKUP_LEAN.parseRequest(
                new ByteArrayInputStream(drained.toByteArray())).getName());
    }
}
