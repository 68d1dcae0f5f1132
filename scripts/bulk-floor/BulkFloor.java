import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.util.Arrays;

/**
 * How fast hand-written Java moves a double[] each way over loopback TCP, by the number of copies
 * each side makes: the floor under any framework's bulk path on this machine. Four ways, called
 * in turn (the order rotated every round), the same array each:
 * <ul>
 * <li>{@code stream}: the bench's raw socket (RawSocketPeer's codec): streams over a socket,
 * big-endian through a 64 KiB byte[] block; a thread per connection;</li>
 * <li>{@code nio}: blocking NIO channels on both sides, little-endian straight between the array
 * and a 1 MiB direct buffer;</li>
 * <li>{@code netty}: the same client against a Netty server (epoll, one event loop) that copies
 * each read straight into the array and writes the answer from it in 1 MiB direct buffers;</li>
 * <li>{@code netty-heap}: that server, the client writing through a heap buffer (the JDK copies
 * it into a direct one), as a client that encodes into a byte[] does.</li>
 * </ul>
 * Run by scripts/bulk-floor.sh: {@code BulkFloor serve PORT} in one JVM, then
 * {@code BulkFloor call PORT DOUBLES ROUNDS} in another.
 */
public final class BulkFloor {
    private static final int BLOCK = 64 << 10;
    private static final int DIRECT = 1 << 20;
    private static final String[] WAYS = {"stream", "nio", "netty", "netty-heap"};

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[1]);
        if (args[0].equals("serve")) {
            serve(port);
        } else {
            call(port, Integer.parseInt(args[2]), Integer.parseInt(args[3]));
        }
    }

    // ---- the stream way: RawSocketPeer's codec

    static void streamWrite(DataOutputStream out, double[] values, byte[] block) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(block);
        out.writeInt(values.length);
        for (int off = 0; off < values.length; off += BLOCK / 8) {
            int n = Math.min(BLOCK / 8, values.length - off);
            b.clear();
            b.asDoubleBuffer().put(values, off, n);
            out.write(block, 0, n * 8);
        }
        out.flush();
    }

    static double[] streamRead(DataInputStream in, byte[] block) throws IOException {
        int length = in.readInt();
        double[] values = new double[length];
        ByteBuffer b = ByteBuffer.wrap(block);
        for (int off = 0; off < length; off += BLOCK / 8) {
            int n = Math.min(BLOCK / 8, length - off);
            in.readFully(block, 0, n * 8);
            b.clear();
            b.asDoubleBuffer().get(values, off, n);
        }
        return values;
    }

    // ---- the nio ways: little-endian, through one buffer (direct, or heap for netty-heap's client)

    static void nioWrite(java.nio.channels.SocketChannel ch, double[] values, ByteBuffer buf) throws IOException {
        buf.clear();
        buf.putInt(values.length);
        int off = 0;
        do {
            int n = Math.min(buf.remaining() / 8, values.length - off);
            buf.asDoubleBuffer().put(values, off, n);
            buf.position(buf.position() + n * 8);
            off += n;
            buf.flip();
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            buf.clear();
        } while (off < values.length);
    }

    static double[] nioRead(java.nio.channels.SocketChannel ch, ByteBuffer buf) throws IOException {
        buf.clear().limit(4);
        while (buf.hasRemaining()) {
            if (ch.read(buf) < 0) {
                throw new EOFException();
            }
        }
        int length = buf.flip().getInt();
        double[] values = new double[length];
        buf.clear();
        int off = 0;
        while (off < length) {
            buf.limit(Math.min(buf.capacity(), buf.position() + (length - off) * 8));
            if (ch.read(buf) < 0) {
                throw new EOFException();
            }
            int n = buf.position() / 8;
            if (n > 0) {
                buf.flip();
                buf.asDoubleBuffer().get(values, off, n);
                off += n;
                buf.position(n * 8);
                buf.compact();
            }
        }
        return values;
    }

    // ---- the servers: the stream way on PORT, nio on PORT + 1, Netty on PORT + 2

    static void serve(int port) throws Exception {
        ServerSocket streams = new ServerSocket(port);
        ServerSocketChannel channels = ServerSocketChannel.open().bind(new InetSocketAddress(port + 1));
        daemon(() -> {
            while (true) {
                Socket s = streams.accept();
                s.setTcpNoDelay(true);
                daemon(() -> {
                    DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), BLOCK));
                    DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), BLOCK));
                    byte[] block = new byte[BLOCK];
                    while (true) {
                        streamWrite(out, streamRead(in, block), block);
                    }
                });
            }
        });
        daemon(() -> {
            while (true) {
                java.nio.channels.SocketChannel ch = channels.accept();
                ch.socket().setTcpNoDelay(true);
                daemon(() -> {
                    ByteBuffer buf = ByteBuffer.allocateDirect(DIRECT).order(ByteOrder.LITTLE_ENDIAN);
                    while (true) {
                        nioWrite(ch, nioRead(ch, buf), buf);
                    }
                });
            }
        });
        EventLoopGroup loop = new EpollEventLoopGroup(1);
        new ServerBootstrap().group(loop).channel(EpollServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(1 << 20, 2 << 20))
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new NettyEcho());
                    }
                }).bind(port + 2).sync();
        System.out.println("serving");
        System.out.flush();
        Thread.currentThread().join();
    }

    /** Reads a length and that many doubles, each read copied straight into the array; answers the same way. */
    static final class NettyEcho extends ChannelInboundHandlerAdapter {
        private final byte[] carry = new byte[8];
        private int carried;
        private double[] in;
        private int length = -1;
        private int inAt;
        private double[] out;
        private int outAt;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            try {
                while (b.isReadable()) {
                    if (length < 0) {
                        if (!fill(b, 4)) {
                            return;
                        }
                        length = ByteBuffer.wrap(carry).order(ByteOrder.LITTLE_ENDIAN).getInt();
                        carried = 0;
                        in = new double[length];
                        inAt = 0;
                    }
                    if (carried > 0) {
                        if (!fill(b, 8)) {
                            return;
                        }
                        in[inAt++] = ByteBuffer.wrap(carry).order(ByteOrder.LITTLE_ENDIAN).getDouble();
                        carried = 0;
                    }
                    int n = Math.min(b.readableBytes() / 8, length - inAt);
                    if (n > 0) {
                        b.nioBuffer(b.readerIndex(), n * 8).order(ByteOrder.LITTLE_ENDIAN).asDoubleBuffer().get(in, inAt, n);
                        b.skipBytes(n * 8);
                        inAt += n;
                    }
                    if (inAt == length) {
                        out = in;
                        outAt = -1;
                        in = null;
                        length = -1;
                        answer(ctx);
                    } else if (b.isReadable() && b.readableBytes() < 8) {
                        fill(b, 8);
                    }
                }
            } finally {
                b.release();
            }
        }

        private boolean fill(ByteBuf b, int want) {
            int n = Math.min(want - carried, b.readableBytes());
            b.readBytes(carry, carried, n);
            carried += n;
            return carried == want;
        }

        private void answer(ChannelHandlerContext ctx) {
            if (out == null) {
                return;
            }
            if (outAt < 0) {
                ctx.write(ctx.alloc().directBuffer(4).writeIntLE(out.length));
                outAt = 0;
            }
            while (outAt < out.length && ctx.channel().isWritable()) {
                int n = Math.min(DIRECT / 8, out.length - outAt);
                ByteBuf part = ctx.alloc().directBuffer(n * 8);
                part.nioBuffer(0, n * 8).order(ByteOrder.LITTLE_ENDIAN).asDoubleBuffer().put(out, outAt, n);
                part.writerIndex(n * 8);
                outAt += n;
                ctx.writeAndFlush(part);
            }
            if (outAt == out.length) {
                ctx.flush();
                out = null;
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                answer(ctx);
            }
        }
    }

    // ---- the client: every way in turn, the order rotated each round

    static void call(int port, int doubles, int rounds) throws Exception {
        Socket socket = new Socket("127.0.0.1", port);
        socket.setTcpNoDelay(true);
        DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), BLOCK));
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream(), BLOCK));
        byte[] block = new byte[BLOCK];
        java.nio.channels.SocketChannel nio = open(port + 1);
        java.nio.channels.SocketChannel netty = open(port + 2);
        java.nio.channels.SocketChannel nettyHeap = open(port + 2);
        ByteBuffer direct = ByteBuffer.allocateDirect(DIRECT).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer heap = ByteBuffer.allocate(DIRECT).order(ByteOrder.LITTLE_ENDIAN);
        double[] values = new double[doubles];
        java.util.Random random = new java.util.Random(1);
        for (int i = 0; i < doubles; i++) {
            values[i] = random.nextDouble();
        }
        int warmup = 15;
        long[][] times = new long[WAYS.length][rounds];
        for (int r = -warmup; r < rounds; r++) {
            for (int k = 0; k < WAYS.length; k++) {
                int way = Math.floorMod(r + k, WAYS.length);
                long start = System.nanoTime();
                double[] back = switch (way) {
                    case 0 -> { streamWrite(out, values, block); yield streamRead(in, block); }
                    case 1 -> { nioWrite(nio, values, direct); yield nioRead(nio, direct); }
                    case 2 -> { nioWrite(netty, values, direct); yield nioRead(netty, direct); }
                    default -> { nioWrite(nettyHeap, values, heap); yield nioRead(nettyHeap, heap); }
                };
                long took = System.nanoTime() - start;
                if (!Arrays.equals(back, values)) {
                    throw new AssertionError(WAYS[way] + " did not echo the array");
                }
                if (r >= 0) {
                    times[way][r] = took;
                }
            }
        }
        double socketMedian = median(times[0]);
        System.out.println("| way | median ms | p10 ms | median ÷ stream's |");
        System.out.println("| --- | ---: | ---: | ---: |");
        for (int way = 0; way < WAYS.length; way++) {
            Arrays.sort(times[way]);
            System.out.printf("| %s | %.1f | %.1f | %.2f |%n", WAYS[way], median(times[way]) / 1e6,
                    times[way][rounds / 10] / 1e6, median(times[way]) / socketMedian);
        }
    }

    private static double median(long[] times) {
        long[] sorted = times.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static java.nio.channels.SocketChannel open(int port) throws IOException {
        java.nio.channels.SocketChannel ch = java.nio.channels.SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
        ch.socket().setTcpNoDelay(true);
        return ch;
    }

    interface Body {
        void run() throws Exception;
    }

    private static void daemon(Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Exception e) {
                // the client went away: the round is over
            }
        });
        t.setDaemon(true);
        t.start();
    }
}
