package io.switchboard.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.components.matrix.Block;
import io.switchboard.components.matrix.Blocks;
import io.switchboard.components.matrix.ProtocolTally;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** The raw-socket baseline of the matrix workload on its own, server and clients in this JVM. */
class MatrixSocketTest {
    @Test
    void aFailedOperationAnswersItsReasonAndTheConnectionCarriesOn() throws Exception {
        String address = MatrixSocket.serve();
        ProtocolTally tally = new ProtocolTally();
        try (MatrixSocket.Client worker = new MatrixSocket.Client(address, tally)) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> worker.step("no-such-job", 0));
            assertTrue(e.getMessage().contains("not set up for job no-such-job"), e.getMessage());

            Block a = MatrixBench.integers(5, 1);
            Block c = worker.multiplyBlock(a, Blocks.identity(5));
            assertTrue(Blocks.identical(a, c), "the same connection, in step after the failure");
            assertEquals(1, tally.calls("step", "socket"));
            assertEquals(1, tally.calls("multiplyBlock", "socket"));
        }
    }

    @Test
    void anArrayOverTheLimitIsRefusedBeforeItIsAllocated() {
        byte[] announced = {0, 0, 0, 11};   // 11 doubles announced, none sent
        IOException e = assertThrows(IOException.class, () -> new RawSocketPeer.Codec()
                .readDoubles(new DataInputStream(new ByteArrayInputStream(announced)), 10));
        assertEquals("an array of 11 doubles (at most 10 accepted)", e.getMessage());
    }
}
