package io.switchboard.protocol.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.switchboard.protocol.TransportException;
import io.switchboard.protocol.spi.UnixSockets;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A client connection with many non-blocking calls in flight: the answers one read brings in are
 * settled by one task on the client's executor, and the requests their callbacks send leave in
 * one write, so a caller that keeps 64 calls in flight costs a hand-off and a write per read, not
 * per call. Before that, every answer was a task of its own and every request a write of its own,
 * and 64 calls in flight made fewer calls per second than 8. The connection runs over a scripted
 * wire, so what is read together and what is written together is exact.
 */
class AnswerBatchTest {
    private static final int CALLS = 64;

    private final ScriptedWire wire = new ScriptedWire();
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final AtomicInteger tasks = new AtomicInteger();
    private final ClientConnection connection = new ClientConnection("scripted", wire, TcpLimits.defaults(), task -> {
        tasks.incrementAndGet();
        pool.execute(task);
    });

    @AfterEach
    void stop() throws InterruptedException {
        connection.close(null);
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    @Test
    void answersReadTogetherAreSettledByOneTaskAndTheCallsTheyStartLeaveInOneWrite() throws Exception {
        CountDownLatch answered = new CountDownLatch(CALLS);
        List<ClientConnection.Call> next = new ArrayList<>();
        List<ClientConnection.Call> first = new ArrayList<>();
        for (int i = 0; i < CALLS; i++) {
            ClientConnection.Call call = connection.open("first " + i, answer(frame -> {
                frame.release();
                ClientConnection.Call again = connection.open("next", answer(Frame::release));
                synchronized (next) {
                    next.add(again);
                }
                send(again);
                answered.countDown();
            }));
            first.add(call);
            send(call);
        }
        assertEquals(CALLS, wire.writes(), "each request sent from outside a batch is a write of its own");
        // a call never answered keeps the reader task reading: without it, a reader that finds no
        // call under way after the answers leaves, and may be started again by the next call
        connection.open("never answered", answer(Frame::release));

        connection.ensureReader();
        wire.arrive(answers(first));   // all answers in one read
        assertTrue(answered.await(30, TimeUnit.SECONDS), "every answer was settled");
        wire.awaitWrites(CALLS + 1);

        assertEquals(2, tasks.get(), "one task reads the connection and one settles the read's " + CALLS + " answers");
        List<Frame> written = frames(wire.write(CALLS));
        assertEquals(CALLS, written.size(), "the " + CALLS + " calls the callbacks started left in one write");
        synchronized (next) {
            for (int i = 0; i < CALLS; i++) {
                assertEquals(next.get(i).id, written.get(i).meta.correlationId(), "in the order they were sent");
            }
        }
    }

    @Test
    void aBlockingCallOrACancelFromABatchTakesTheHeldRequestsAlongFirst() throws Exception {
        CountDownLatch done = new CountDownLatch(1);
        long[] ids = new long[3];
        ClientConnection.Call call = connection.open("first", answer(frame -> {
            frame.release();
            ClientConnection.Call held = connection.open("held", answer(Frame::release));
            send(held);
            ClientConnection.Call blocking = connection.open("blocking");   // its caller would wait for its answer
            send(blocking);
            ClientConnection.Call cancelled = connection.open("cancelled", answer(Frame::release));
            send(cancelled);
            connection.forget(cancelled);
            connection.sendQuietly(cancel(cancelled.id));
            ids[0] = held.id;
            ids[1] = blocking.id;
            ids[2] = cancelled.id;
            done.countDown();
        }));
        send(call);
        connection.ensureReader();
        wire.arrive(answers(List.of(call)));
        assertTrue(done.await(30, TimeUnit.SECONDS));
        wire.awaitWrites(5);

        // the first request; the held one, before the blocking call's; the cancelled call's request before its cancel
        assertEquals(List.of(ids[0]), ids(frames(wire.write(1))), "the held request left before the blocking call's");
        assertEquals(List.of(ids[1]), ids(frames(wire.write(2))));
        assertEquals(List.of(ids[2]), ids(frames(wire.write(3))), "a cancel never overtakes its request");
        List<Frame> cancelFrame = frames(wire.write(4));
        assertEquals(List.of(ids[2]), ids(cancelFrame));
        assertEquals("1", cancelFrame.get(0).meta.userField(TcpErrors.CANCEL));
    }

    @Test
    void heldRequestsThatCannotBeWrittenFailAsNotDelivered() throws Exception {
        CountDownLatch done = new CountDownLatch(1);
        List<ClientConnection.Call> held = new ArrayList<>();
        ClientConnection.Call call = connection.open("first", answer(frame -> {
            frame.release();
            for (int i = 0; i < 3; i++) {
                ClientConnection.Call c = connection.open("held " + i, answer(Frame::release));
                send(c);
                held.add(c);
            }
            wire.failWrites = true;   // the batch's write, at its end, fails
            done.countDown();
        }));
        send(call);
        connection.ensureReader();
        wire.arrive(answers(List.of(call)));
        assertTrue(done.await(30, TimeUnit.SECONDS));
        for (ClientConnection.Call c : held) {
            CompletionException e = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class,
                    () -> c.orTimeout(30, TimeUnit.SECONDS).join());
            TransportException t = assertInstanceOf(TransportException.class, e.getCause());
            assertEquals(TransportException.Delivery.NOT_DELIVERED, t.delivery(), t.getMessage());
        }
    }

    /** A step for an answer that must come (a refused executor fails the test). */
    private static ClientConnection.Answer answer(java.util.function.Consumer<Frame> onAnswer) {
        return new ClientConnection.Answer() {
            @Override
            public void answered(Frame frame) {
                onAnswer.accept(frame);
            }

            @Override
            public void unread(RejectedExecutionException refused) {
                throw new AssertionError("the executor refused the answer", refused);
            }
        };
    }

    private void send(ClientConnection.Call call) {
        byte[] frame = request(call.id);
        connection.send(call, frame, frame.length, System.nanoTime() + TimeUnit.SECONDS.toNanos(30));
    }

    private static byte[] request(long id) {
        return RawTcp.frame(RpcMeta.request("Echo", "echo", null, 30_000, id, null), new byte[] {8, 1});
    }

    private static byte[] cancel(long id) {
        return RawTcp.frame(RpcMeta.request("Echo", "echo", null, 0, id, Map.of(TcpErrors.CANCEL, "1")), new byte[0]);
    }

    private static byte[] answers(List<ClientConnection.Call> calls) {
        ByteBuf all = Unpooled.buffer();
        for (ClientConnection.Call c : calls) {
            all.writeBytes(RawTcp.frame(RpcMeta.response(c.id, 0, null, null), new byte[] {8, 1}));
        }
        byte[] bytes = new byte[all.readableBytes()];
        all.readBytes(bytes);
        return bytes;
    }

    private static List<Frame> frames(byte[] bytes) {
        List<Object> out = new ArrayList<>();
        ByteBuf in = Unpooled.wrappedBuffer(bytes);
        FrameDecoder decoder = new FrameDecoder(1 << 20, 1 << 10);
        while (in.isReadable()) {
            int before = in.readableBytes();
            decoder.cut(in, out);
            assertTrue(in.readableBytes() < before, "a whole number of frames");
        }
        List<Frame> frames = new ArrayList<>();
        out.forEach(f -> frames.add((Frame) f));
        return frames;
    }

    private static List<Long> ids(List<Frame> frames) {
        return frames.stream().map(f -> f.meta.correlationId()).toList();
    }

    /** A wire whose reads return what the test lets arrive, and which keeps every write apart. */
    private static final class ScriptedWire implements Wire {
        private final BlockingQueue<byte[]> arriving = new LinkedBlockingQueue<>();
        private final List<byte[]> writes = new ArrayList<>();
        private final Semaphore written = new Semaphore(0);
        volatile boolean failWrites;

        void arrive(byte[] bytes) {
            arriving.add(bytes);
        }

        synchronized int writes() {
            return writes.size();
        }

        synchronized byte[] write(int i) {
            return writes.get(i);
        }

        void awaitWrites(int n) throws InterruptedException {
            assertTrue(written.tryAcquire(n, 30, TimeUnit.SECONDS), "only " + writes() + " writes of " + n);
            written.release(n);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            if (failWrites) {
                throw new IOException("the peer went away");
            }
            synchronized (this) {
                writes.add(java.util.Arrays.copyOfRange(bytes, offset, offset + length));
            }
            written.release();
        }

        @Override
        public int read(byte[] into, int offset, int length, int timeoutMillis) throws IOException {
            byte[] next;
            try {
                next = arriving.poll(timeoutMillis, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
            if (next == null) {
                throw new SocketTimeoutException();
            }
            if (next.length == 0) {
                return -1;
            }
            if (next.length > length) {
                throw new IOException("the test's arrival of " + next.length + " bytes is over the reader's " + length);
            }
            System.arraycopy(next, 0, into, offset, next.length);
            return next.length;
        }

        @Override
        public void close() {
            arriving.add(new byte[0]);
        }

        @Override
        public String via() {
            return UnixSockets.VIA_TCP;
        }
    }
}
