package io.switchboard.protocol.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.switchboard.codec.proto.ProtoInput;
import io.switchboard.protocol.Endpoint;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;

/** A raw socket to a tcp server: writes any bytes, reads whole frames back. For tests of the wire itself. */
final class RawTcp implements AutoCloseable {
    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    /** An answer: its meta and its data. */
    record Answer(RpcMeta meta, byte[] data) {
    }

    RawTcp(Endpoint endpoint) throws IOException {
        this(new Socket(endpoint.uri().getHost(), endpoint.uri().getPort()));
    }

    /** Over a socket made elsewhere (a TLS one, say). */
    RawTcp(Socket socket) throws IOException {
        this.socket = socket;
        socket.setSoTimeout(30_000);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    void write(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** A frame of this meta and data, as bytes. */
    static byte[] frame(RpcMeta meta, byte[] data) {
        byte[] m = meta.encode();
        ByteBuf buf = Unpooled.buffer();
        buf.writeInt(Frame.MAGIC).writeInt(m.length + data.length).writeInt(m.length).writeBytes(m).writeBytes(data);
        byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        return bytes;
    }

    /** Sends a request and reads the next answer. */
    Answer call(RpcMeta meta, byte[] data) throws IOException {
        write(frame(meta, data));
        return read();
    }

    Answer read() throws IOException {
        int magic = in.readInt();
        if (magic != Frame.MAGIC) {
            throw new IOException("not PRPC: " + Integer.toHexString(magic));
        }
        int body = in.readInt();
        int metaBytes = in.readInt();
        byte[] m = new byte[metaBytes];
        in.readFully(m);
        byte[] data = new byte[body - metaBytes];
        in.readFully(data);
        return new Answer(RpcMeta.decode(new ProtoInput(m, 0, m.length, RpcMeta.limits(1 << 16))), data);
    }

    /** Whether the server closed the connection: the next read ends. */
    boolean closedByServer() throws IOException {
        try {
            return in.read() < 0;
        } catch (java.net.SocketException | javax.net.ssl.SSLException e) {
            return true;   // a reset, or a TLS connection ended without its close_notify
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
