"""Several registries of one store, for tests: each ``Door`` is an address of its own (SOAP and
watch stream) in front of the suite's one registry, so that what is bound through one door is seen
through every other, as with registry servers that share a ZooKeeper ensemble. A door counts the
SOAP operations it passes on, can pass a request on and then drop the connection unanswered, hold
an operation until released, hang (its ports take connections, nothing answers, nothing it has open
moves, as when the registry's process is stopped), and be shut (its ports closed, its connections
cut mid-stream)."""

import collections
import http.client
import http.server
import re
import socket
import threading
from urllib.parse import urlparse

from switchboard._registry import RegistryClient
from ports import unused_port

OPERATION = re.compile(rb"<(?:[\w-]+:)?Body[^>]*>\s*<(?:[\w-]+:)?(\w+)")


def closed_port_url():
    """A registry URL whose port nobody listens on."""
    return "http://127.0.0.1:%d/axis2/services/Registry" % unused_port()


class _Connections:
    """Sockets a door has open, so that shutting it cuts them; while the door hangs, nothing moves on them."""

    def __init__(self):
        self.lock, self.open, self.shut = threading.Lock(), set(), False
        self.hung, self.released = threading.Event(), threading.Event()

    def stall(self):
        """Holds whatever would move while the door hangs, until it is shut."""
        if self.hung.is_set():
            self.released.wait()

    def add(self, sock):
        with self.lock:
            if self.shut:
                sock.close()
                return False
            self.open.add(sock)
            return True

    def cut(self):
        self.released.set()
        with self.lock:
            self.shut = True
            found, self.open = list(self.open), set()
        for s in found:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


class _Pings:
    """Counts HTTP/2 PING frames read from what one side of a connection writes: the client's pings
    (after its connection preface), or the server's acknowledgements of them. Frames have a 9-byte
    header: length (3 bytes), type, flags, stream."""

    PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    PING, ACK = 6, 1

    def __init__(self, client):
        self.client, self.counted, self._buffer, self._preface = client, 0, b"", client

    def read(self, data):
        self._buffer += data
        if self._preface:
            if len(self._buffer) < len(self.PREFACE):
                return
            self._buffer, self._preface = self._buffer[len(self.PREFACE):], False
        while len(self._buffer) >= 9:
            length = int.from_bytes(self._buffer[:3], "big")
            if len(self._buffer) < 9 + length:
                return
            kind, flags = self._buffer[3], self._buffer[4]
            self._buffer = self._buffer[9 + length:]
            if kind == self.PING and bool(flags & self.ACK) != self.client:
                self.counted += 1


class _StreamDoor:
    """Passes TCP connections on to the registry's watch stream listener, counting the pings its
    clients send and those the registry answers, over every connection."""

    def __init__(self, host, port, connections):
        self.target, self.connections = (host, port), connections
        self.accepted = 0
        self.pings = threading.Condition()
        self.pings_sent = self.pings_answered = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = "grpc://127.0.0.1:%d" % self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            upstream = socket.create_connection(self.target)
            if self.connections.add(client) and self.connections.add(upstream):
                threading.Thread(target=self._pump, args=(client, upstream, _Pings(True)), daemon=True).start()
                threading.Thread(target=self._pump, args=(upstream, client, _Pings(False)), daemon=True).start()

    def wait_for_answered_pings(self, count, seconds=30):
        """Waits until the registry has answered ``count`` of the clients' pings in all."""
        with self.pings:
            assert self.pings.wait_for(lambda: self.pings_answered >= count, seconds), \
                "%d pings sent to %s, %d answered" % (self.pings_sent, self.address, self.pings_answered)

    def _pump(self, source, sink, pings):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                before = pings.counted
                pings.read(data)
                if pings.counted > before:
                    with self.pings:
                        if pings.client:
                            self.pings_sent += pings.counted - before
                        else:
                            self.pings_answered += pings.counted - before
                        self.pings.notify_all()
                self.connections.stall()
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.listener.close()


class Door:
    def __init__(self, registry_url):
        self.target = urlparse(registry_url)
        self.real_stream = RegistryClient(registry_url).stream_address([])
        self.connections = _Connections()
        stream = urlparse(self.real_stream)
        self.stream = _StreamDoor(stream.hostname, stream.port, self.connections)
        self.counts = collections.Counter()   # SOAP operation ("wsdl": the WSDL) -> requests
        self.drop = set()                     # operations passed on, then left unanswered (the connection dropped)
        self.held = {}                        # operation -> an Event its requests wait for
        self.asked = threading.Condition()
        door = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                door._forward(self, None)

            def do_POST(self):
                door._forward(self, self.rfile.read(int(self.headers["Content-Length"])))

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass   # a connection cut when the door shuts

            def process_request(self, request, client_address):
                if door.connections.add(request):
                    super().process_request(request, client_address)

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d%s" % (self.server.server_port, self.target.path)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _forward(self, handler, body):
        found = OPERATION.search(body) if body else None
        operation = "wsdl" if body is None else found.group(1).decode() if found else "?"
        with self.asked:
            self.counts[operation] += 1
            self.asked.notify_all()
        self.connections.stall()
        if operation in self.held:
            self.held[operation].wait(60)
        upstream = http.client.HTTPConnection(self.target.hostname, self.target.port, timeout=60)
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in ("host", "connection")}
        upstream.request(handler.command, handler.path, body=body, headers=headers)
        answer = upstream.getresponse()
        data = answer.read()
        upstream.close()
        if operation in self.drop:   # the registry did it; its caller never hears
            handler.close_connection = True
            return
        data = data.replace(self.real_stream.encode(), self.stream.address.encode())
        handler.send_response(answer.status)
        for k, v in answer.getheaders():
            if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                handler.send_header(k, v)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def wait_for(self, operation, count=1, seconds=30):
        with self.asked:
            assert self.asked.wait_for(lambda: self.counts[operation] >= count, seconds), \
                "%s reached %s %d times" % (operation, self.url, self.counts[operation])

    def hang(self):
        """The registry hangs: its ports still take connections, but nothing answers and nothing it
        has open moves (a stream's pings go unanswered), until the door is shut."""
        self.connections.hung.set()

    def shut(self):
        """The registry goes away: its ports close and its connections are cut."""
        for event in self.held.values():
            event.set()
        self.server.shutdown()
        self.server.server_close()
        self.stream.close()
        self.connections.cut()
