"""Fair shares on the Python server's listeners (issue: one host must not shut a component): on
SOAP, connections per remote address are capped (a new one over its address's share displaces
that address's own connection stalled longest) and, at the server's cap, the connection stalled
longest of all is closed to admit a new one; gRPC's listener is held to the same shares (its socket
is the server's own, relaying to grpcio), and calls beyond the bounded pool's queue are refused at
once, not queued. The
attacker's connections come from 127.0.0.2, the honest client's from 127.0.0.1 (one loopback
interface, two addresses)."""

import os
import socket
import struct
import threading
import time

import grpc
import pytest
import requests

import switchboard
from conftest import bits

ATTACKER = "127.0.0.2"
ECHO = (b'<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Body>'
        b'<echoDoubles xmlns="urn:switchboard:echo"><values>1.5 -0.0</values></echoDoubles></e:Body></e:Envelope>')


class Echo:
    def __init__(self):
        self.gate = threading.Event()
        self.entered = threading.Semaphore(0)

    def echoDoubles(self, values):
        return values

    def divide(self, dividend, divisor):   # holds a worker until the test lets it go
        self.entered.release()
        assert self.gate.wait(60)
        return {"quotient": dividend // divisor, "remainder": dividend % divisor}


def serve(schemas, obj=None, **limits):
    return switchboard.serve(obj or Echo(), schema=os.path.join(schemas, "echo.xsd"), handle_sigterm=False, **limits)


def host_port(address):
    rest = address.split("://", 1)[1]
    host, port = rest.split("/", 1)[0].rsplit(":", 1)
    return host, int(port)


def idle_connection(address, source=ATTACKER):
    s = socket.socket()
    s.bind((source, 0))
    s.connect(host_port(address))
    return s


def closed_by_server(s, seconds=30):
    """Whether the server ended the connection (EOF or reset) within ``seconds``."""
    deadline = time.monotonic() + seconds
    try:
        while True:   # what the server sends first (gRPC's SETTINGS) is read past
            s.settimeout(max(0.001, deadline - time.monotonic()))
            if s.recv(65536) == b"":
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def still_open(s):
    s.setblocking(False)
    try:
        return s.recv(1) != b""   # data would be a surprise too; EOF means closed
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        s.setblocking(True)


def until(condition, what, seconds=30):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def fill(connections, address, limits, count):
    """Opens ``count`` idle connections to ``address`` one at a time, each admitted before the next,
    so that they stalled in the order of ``connections``."""
    for i in range(count):
        connections.append(idle_connection(address))
        until(lambda: limits.count() == i + 1, "connection %d admitted" % i)


def soap_echo(server):
    r = requests.post(server.soap_address, data=ECHO, timeout=30,
                      headers={"Content-Type": "text/xml; charset=UTF-8", "Connection": "close"})
    assert r.status_code == 200 and b"<values>1.5 -0.0</values>" in r.content, r.content
    return r


def test_idle_connections_from_one_address_leave_the_others_answered(schemas):
    server = serve(schemas, max_connections=64, max_connections_per_address=4)
    flood = []
    try:
        for _ in range(200):
            flood.append(idle_connection(server.soap_address))
        until(lambda: server.limits.evicted >= 196, "each connection over the address's share displaces its oldest")
        assert server.limits.count(ATTACKER) == 4 and server.limits.refused == 0
        assert all(closed_by_server(s, 5) for s in flood[:196]), "the flood's own oldest connections are closed"
        assert all(still_open(s) for s in flood[196:])
        started = time.monotonic()
        soap_echo(server)
        assert time.monotonic() - started < 10
        assert server.calls == {"soap echoDoubles": 1}
    finally:
        for s in flood:
            s.close()
        server.close()


def test_at_the_servers_cap_the_longest_stalled_connection_makes_room(schemas):
    server = serve(schemas, max_connections=6, max_connections_per_address=32)
    stalled = []
    try:
        fill(stalled, server.soap_address, server.limits, 6)
        # the second one has begun a request and stopped half-way: stalled too, but later than the first
        path = server.soap_address.split("://", 1)[1].split("/", 1)[1]
        stalled[1].sendall(b"POST /" + path.encode() + b" HTTP/1.1\r\nContent-Length: 100000\r\n\r\n<e:Env")
        soap_echo(server)   # a seventh connection: the first, idle longest, is closed for it
        assert closed_by_server(stalled[0])
        until(lambda: server.limits.count() == 5, "the answered connection has gone")
        stalled.append(idle_connection(server.soap_address))   # the server is full again
        until(lambda: server.limits.count() == 6, "the newest idle connection admitted")
        soap_echo(server)   # the one whose request stopped half-way has stalled longest now
        assert closed_by_server(stalled[1])
        assert all(still_open(s) for s in stalled[2:])
        assert server.limits.evicted == 2
    finally:
        for s in stalled:
            s.close()
        server.close()


def test_a_connection_running_an_operation_is_never_the_one_closed(schemas):
    component = Echo()
    server = serve(schemas, component, max_connections=1, max_connections_per_address=32)
    body = ECHO.replace(b"<echoDoubles xmlns", b"<divide xmlns").replace(
        b"<values>1.5 -0.0</values></echoDoubles>", b"<dividend>7</dividend><divisor>2</divisor></divide>")
    answers = []
    worker = threading.Thread(target=lambda: answers.append(requests.post(
        server.soap_address, data=body, timeout=60, headers={"Content-Type": "text/xml; charset=UTF-8"})))
    try:
        worker.start()
        assert component.entered.acquire(timeout=30), "divide started"
        newcomer = idle_connection(server.soap_address, "127.0.0.1")
        assert closed_by_server(newcomer), "no room: the newcomer is refused, the running call kept"
        component.gate.set()
        worker.join(60)
        assert answers and answers[0].status_code == 200 and b"<quotient>3</quotient>" in answers[0].content
    finally:
        component.gate.set()
        server.close()


ECHO_GRPC = "/switchboard.echo.Echo/echoDoubles"
ECHO_REQUEST = b"\x0a\x10" + struct.pack("<2d", 1.5, -0.0)   # echoDoubles(values=[1.5, -0.0]), packed


def grpc_echo(server, source="127.0.0.1"):
    """An echoDoubles call over a connection of its own from ``source``; the answer's bytes."""
    host, port = host_port(server.grpc_address)
    # a relay of the test's own carries the call, its connection to the server bound to ``source``
    with _From(source, (host, port)) as relay, grpc.insecure_channel("127.0.0.1:%d" % relay.port) as channel:
        return channel.unary_unary(ECHO_GRPC)(ECHO_REQUEST, timeout=30)


class _From:
    """A one-connection TCP relay whose connection to ``target`` comes from ``source``."""

    def __init__(self, source, target):
        self.listening = socket.create_server(("127.0.0.1", 0))
        self.port = self.listening.getsockname()[1]
        self.source, self.target = source, target
        self.sockets = [self.listening]
        threading.Thread(target=self._relay, daemon=True).start()

    def _relay(self):
        try:
            client, _ = self.listening.accept()
            upstream = socket.socket()
            upstream.bind((self.source, 0))
            upstream.connect(self.target)
        except OSError:
            return
        self.sockets += [client, upstream]
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for s in self.sockets:   # shut down first: a socket closed under a thread's recv stays connected
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


def recording_peers(server, what=lambda peer: peer):
    """What the server's calls were admitted from (``what`` of each transport peer), in order."""
    seen = []
    admit = server.admit

    def recording(transport_peer, authorization, op):
        seen.append(what(transport_peer))
        return admit(transport_peer, authorization, op)
    server.admit = recording
    return seen


def recording_callers(server):
    """The remote addresses the server's calls were admitted from, in order."""
    return recording_peers(server, lambda peer: peer.remote_address)


def test_idle_grpc_connections_from_one_address_leave_the_others_answered(schemas):
    server = serve(schemas, max_connections=64, max_connections_per_address=4)
    callers = recording_callers(server)
    flood = []
    try:
        for _ in range(200):   # no HTTP/2 preface: each stalls before its first call
            flood.append(idle_connection(server.grpc_address))
        until(lambda: server.grpc_limits.evicted >= 196, "each connection over the address's share displaces its oldest")
        assert server.grpc_limits.count(ATTACKER) == 4 and server.grpc_limits.refused == 0
        assert all(closed_by_server(s, 5) for s in flood[:196]), "the flood's own oldest connections are closed"
        assert all(still_open(s) for s in flood[196:])
        assert grpc_echo(server) == ECHO_REQUEST, "exact, -0.0 included"
        assert len(callers) == 1 and callers[0].startswith("127.0.0.1:"), "the call names its caller, not the relay"
        assert server.calls == {"grpc echoDoubles": 1}
    finally:
        for s in flood:
            s.close()
        until(lambda: server.grpc_listener.pipes() == 0, "every relayed connection ends with its caller's")
        server.close()


def test_at_the_grpc_servers_cap_the_longest_stalled_connection_makes_room(schemas):
    server = serve(schemas, max_connections=6, max_connections_per_address=32)
    stalled = []
    try:
        fill(stalled, server.grpc_address, server.grpc_limits, 6)
        stalled[1].sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")   # begun, then silent: stalled too, but later
        assert grpc_echo(server) == ECHO_REQUEST   # a seventh connection: the first, idle longest, is closed for it
        assert closed_by_server(stalled[0])
        assert all(still_open(s) for s in stalled[1:])
        assert server.grpc_limits.evicted == 1 and server.grpc_limits.refused == 0
    finally:
        for s in stalled:
            s.close()
        server.close()


def test_a_grpc_connection_running_an_operation_is_never_the_one_closed(schemas):
    component = Echo()
    server = serve(schemas, component, max_connections=1, max_connections_per_address=32)
    target = "%s:%d" % host_port(server.grpc_address)
    try:
        with grpc.insecure_channel(target) as channel:
            divide = channel.unary_unary("/switchboard.echo.Echo/divide").future(b"\x08\x07\x10\x02", timeout=60)
            assert component.entered.acquire(timeout=30), "divide started"
            newcomer = idle_connection(server.grpc_address, "127.0.0.1")
            assert closed_by_server(newcomer), "no room: the newcomer is refused, the running call kept"
            assert server.grpc_limits.refused == 1 and server.grpc_limits.evicted == 0
            component.gate.set()
            assert divide.result(timeout=60) == b"\x08\x03\x10\x01", "quotient 3, remainder 1"
    finally:
        component.gate.set()
        server.close()


def test_garbage_on_the_grpc_port_ends_its_connection_and_nothing_else(schemas):
    server = serve(schemas, max_connections=8, max_connections_per_address=8)
    try:
        for garbage in (b"\x00" * 100_000, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", os.urandom(4096)):
            s = idle_connection(server.grpc_address, "127.0.0.1")
            try:
                s.sendall(garbage)
            except OSError:
                pass   # the server may close it before it has read all of it
            assert closed_by_server(s, 30), "grpcio ends a connection that does not speak HTTP/2"
            s.close()
        until(lambda: server.grpc_listener.pipes() == 0 and server.grpc_limits.count() == 0,
              "nothing of those connections is left")
        assert grpc_echo(server) == ECHO_REQUEST
        assert os.listdir(server.grpc_listener.directory) == ["grpc.sock"], "the relay's own names leave no files"
    finally:
        server.close()
    assert not os.path.exists(server.grpc_listener.directory)


def test_a_killed_grpc_listeners_directory_is_removed_at_the_next_start(schemas, tmp_path, monkeypatch):
    """A server killed with SIGKILL leaves its gRPC socket's directory; the next server's start
    removes it once nothing listens there, as tcp's."""
    killed = tmp_path / "sb-grpc-killed"
    killed.mkdir(mode=0o700)
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(killed / "grpc.sock"))
    dead.close()   # bound, never listening: connecting is refused
    long_ago = time.time() - 3600
    os.utime(killed / "grpc.sock", (long_ago, long_ago))
    os.utime(killed, (long_ago, long_ago))
    monkeypatch.setenv("SWITCHBOARD_TCP_UNIX_DIRECTORY", str(tmp_path))
    server = serve(schemas, tcp=False)
    try:
        assert not killed.exists()
        assert os.path.dirname(server.grpc_listener.directory) == str(tmp_path)
        assert grpc_echo(server) == ECHO_REQUEST
    finally:
        server.close()


def test_grpc_calls_beyond_the_bounded_queue_are_refused_at_once(schemas):
    """One worker: four calls may be admitted (one running, three queued); of eight sent at once,
    four are refused with RESOURCE_EXHAUSTED while the first still runs, and the four admitted
    all answer once it ends."""
    component = Echo()
    server = serve(schemas, component, workers=1)
    target = "%s:%d" % host_port(server.grpc_address)
    request = b"\x08\x07\x10\x02"   # divide(dividend=7, divisor=2)
    channels = [grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(8)]
    try:
        calls = [c.unary_unary("/switchboard.echo.Echo/divide").future(request, timeout=60) for c in channels]
        assert component.entered.acquire(timeout=30), "the first call runs"

        def refused():
            return [f for f in calls if f.done() and f.code() == grpc.StatusCode.RESOURCE_EXHAUSTED]
        until(lambda: len(refused()) == 4, "four calls refused while the first one still runs")
        # grpcio's own words: the clients read them as "busy, not run" (GRPCIO_CONCURRENT_CALL_LIMIT)
        assert {f.details() for f in refused()} == {"Concurrent RPC limit exceeded!"}
        assert not component.gate.is_set()
        component.gate.set()
        answered = [f.result(timeout=60) for f in calls if f not in refused()]
        assert len(answered) == 4 and len(set(answered)) == 1 and answered[0]
    finally:
        component.gate.set()
        for c in channels:
            c.close()
        server.close()


def test_a_call_a_busy_grpc_server_turns_away_is_not_delivered_and_falls_back_to_soap(schemas, registry_url, secret):
    """A gRPC server over its concurrent calls turns a call away before it runs: a pinned call fails
    as not delivered (not as a request refused for its size, which no one repeats), and a call under
    a policy is repeated over SOAP and answered. Eight calls of their own connections fill the one
    worker's places first (one stream per connection: one client's calls would queue in it)."""
    component = Echo()
    server = switchboard.serve(component, schema=os.path.join(schemas, "echo.xsd"), registry=registry_url,
                               name="PyBusyGrpc", secret=secret, handle_sigterm=False, workers=1)
    target = "%s:%d" % host_port(server.grpc_address)
    channels = [grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(8)]
    board = switchboard.connect(registry_url, protocols=("grpc", "soap"), watch=False, unix_sockets=False)
    try:
        calls = [c.unary_unary("/switchboard.echo.Echo/divide").future(b"\x08\x07\x10\x02", timeout=60) for c in channels]
        assert component.entered.acquire(timeout=30), "the first call runs"
        until(lambda: len([f for f in calls if f.done()]) == 4, "four calls turned away while the first one runs")
        echo = board.lookup("PyBusyGrpc")
        with pytest.raises(switchboard.TransportError) as pinned:
            echo.echoDoubles(values=[1.5], protocol="grpc")
        assert pinned.value.delivery == switchboard.TransportError.NOT_DELIVERED, pinned.value
        assert "server busy" in str(pinned.value), pinned.value
        # the policy sends the next call over gRPC too (nothing learned yet, and a pinned call's
        # failure puts no protocol in back-off): turned away there, it is repeated over SOAP
        assert bits(echo.echoDoubles(values=[1.5, -0.0])) == bits([1.5, -0.0])
        assert echo.last_call.protocol == "soap" and echo.last_call.fallback, echo.last_call
        assert not component.gate.is_set()
        component.gate.set()
        assert len([f.result(timeout=60) for f in calls if f.exception() is None]) == 4
    finally:
        component.gate.set()
        for c in channels:
            c.close()
        board.close()
        server.close()


@pytest.mark.parametrize("method, target", [("POST", "/services/Elsewhere"), ("GET", "/services/Echo")])
def test_a_body_left_unread_never_becomes_the_next_request(schemas, method, target):
    """A request answered without its body read (a POST to another path, a GET with a body): the
    body's bytes, here a whole request for the WSDL, are never read as a request of their own."""
    server = serve(schemas)
    try:
        host, port = host_port(server.soap_address)
        smuggled = b"GET /services/Echo?wsdl HTTP/1.1\r\nHost: x\r\n\r\n"
        with socket.create_connection((host, port), timeout=30) as s:
            s.sendall(b"%s %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
                      % (method.encode(), target.encode(), len(smuggled), smuggled))
            answer = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break   # the server closed the connection after its one answer
                answer += chunk
        assert answer.startswith(b"HTTP/1.0 404") or answer.startswith(b"HTTP/1.1 404"), answer[:100]
        assert answer.count(b"HTTP/1.") == 1, answer
        assert b"Connection: close" in answer
        soap_echo(server)
    finally:
        server.close()


CHILD = r'''
import json, os, resource, sys, threading
import switchboard

class Echo:
    def echoDoubles(self, values):
        return values

server = switchboard.serve(Echo(), schema=sys.argv[1], handle_sigterm=False, max_connections=512,
                           max_connections_per_address=512)
limit = len(os.listdir("/proc/self/fd")) + 40   # room for 40 more descriptors, no more
resource.setrlimit(resource.RLIMIT_NOFILE, (limit, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
print(json.dumps({"soap": server.soap_address, "grpc": server.grpc_address, "tcp": server.tcp.address,
                  "limit": limit}), flush=True)
sys.stdin.readline()
server.close()
'''


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_server_out_of_descriptors_pauses_accepting_and_every_listener_recovers(schemas, echo_proto):
    """A flood that uses up the process's descriptors leaves every listener accepting again once
    they are freed, and none spins meanwhile on a listening socket that stays readable (before,
    tcp's accept loop ended for good and SOAP's turned at full speed)."""
    import json
    import subprocess
    import sys

    from switchboard import _tcp
    from switchboard._schema import Interface

    child = subprocess.Popen([sys.executable, "-c", CHILD, os.path.join(schemas, "echo.xsd")], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    flood = []
    try:
        server = json.loads(child.stdout.readline())
        tcp = server["tcp"].split("?", 1)[0]

        def descriptors():
            return len(os.listdir("/proc/%d/fd" % child.pid))
        for _ in range(80):   # twice the room: the rest wait in the listening socket's backlog
            flood.append(idle_connection(tcp))
        until(lambda: descriptors() >= server["limit"] - 2, "the server runs out of descriptors")
        for address in (server["soap"], server["grpc"]):   # accepts they cannot make, pending
            flood += [idle_connection(address) for _ in range(3)]
        before = cpu_seconds(child.pid)
        time.sleep(1.0)   # an interval of the child's CPU time is what is measured, not a wait for an event
        assert cpu_seconds(child.pid) - before < 0.5, "a listener spins while no descriptor is left"
        for s in flood:
            s.close()
        flood.clear()
        r = requests.post(server["soap"], data=ECHO, timeout=30,
                          headers={"Content-Type": "text/xml; charset=UTF-8", "Connection": "close"})
        assert r.status_code == 200 and b"<values>1.5 -0.0</values>" in r.content
        with grpc.insecure_channel("%s:%d" % host_port(server["grpc"])) as channel:
            assert channel.unary_unary(ECHO_GRPC)(ECHO_REQUEST, timeout=30) == ECHO_REQUEST
        ops = Interface(echo_proto)
        transport = _tcp.TcpTransport(ops, tcp, unix=False)
        try:
            op = ops.operations["echoDoubles"]
            answer, _ = transport.call(op, op.request(values=[1.5, -0.0]), "feedc0de" * 4, 30)
            assert bits(list(answer.values)) == bits([1.5, -0.0])
        finally:
            transport.close()
    finally:
        for s in flood:
            s.close()
        child.stdin.write("stop\n")
        child.stdin.flush()
        assert child.wait(60) == 0


def _varint(value):
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def _literal(name, value):   # HPACK: a literal header field without indexing, new name, no Huffman coding
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


class _GreedyCaller:
    """A gRPC caller written frame by frame (HTTP/2 over plain TCP) that announces room for any
    answer, sends ``message`` to ``path`` as the server's flow control lets it, and then reads
    nothing more."""

    DATA, HEADERS, SETTINGS, PING, WINDOW_UPDATE = 0x0, 0x1, 0x4, 0x6, 0x8

    def __init__(self, address, path, message):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)   # little room, never read
        self.sock.connect(address)
        self.windows = {0: 65535, 1: 65535}
        self.buffer = b""
        big = (1 << 31) - 1
        self.sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + _frame(self.SETTINGS, 0, 0, struct.pack(">HI", 4, big))
                          + _frame(self.WINDOW_UPDATE, 0, 0, struct.pack(">I", big - 65535)))
        headers = b"".join(_literal(n, v) for n, v in ((b":method", b"POST"), (b":scheme", b"http"),
                                                       (b":path", path.encode()), (b":authority", b"localhost"),
                                                       (b"content-type", b"application/grpc"), (b"te", b"trailers")))
        self.sock.sendall(_frame(self.HEADERS, 0x4, 1, headers))
        body = b"".join(b"\x00" + struct.pack(">I", len(part)) + part
                        for part in (message[i:i + (1 << 20)] for i in range(0, len(message), 1 << 20)))
        sent = 0
        while sent < len(body):
            room = min(self.windows[0], self.windows[1], 16384, len(body) - sent)
            if room <= 0:
                self._read_frame()
                continue
            last = sent + room == len(body)
            self.sock.sendall(_frame(self.DATA, 0x1 if last else 0, 1, body[sent:sent + room]))
            self.windows[0] -= room
            self.windows[1] -= room
            sent += room

    def _read_frame(self):
        while len(self.buffer) < 9 or len(self.buffer) < 9 + int.from_bytes(self.buffer[:3], "big"):
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("the server closed the connection while the request was sent")
            self.buffer += data
        length = int.from_bytes(self.buffer[:3], "big")
        kind, flags, stream = self.buffer[3], self.buffer[4], int.from_bytes(self.buffer[5:9], "big") & 0x7FFFFFFF
        payload, self.buffer = self.buffer[9:9 + length], self.buffer[9 + length:]
        if kind == self.SETTINGS and not flags & 0x1:
            for i in range(0, len(payload), 6):
                key, value = struct.unpack(">HI", payload[i:i + 6])
                if key == 4:   # the server's initial stream window
                    self.windows[1] += value - 65535
            self.sock.sendall(_frame(self.SETTINGS, 0x1, 0))
        elif kind == self.PING and not flags & 0x1:
            self.sock.sendall(_frame(self.PING, 0x1, 0, payload))
        elif kind == self.WINDOW_UPDATE:
            self.windows[stream] = self.windows.get(stream, 0) + (int.from_bytes(payload, "big") & 0x7FFFFFFF)


def test_a_grpc_caller_that_takes_none_of_its_answer_is_closed_and_others_are_answered(schemas):
    """A caller that announces room for any answer and then reads nothing would hold what grpcio
    sends it (and a share of the server's memory) for good; past the listener's time for it, its
    connection is closed, as the Java servers close one after their request timeout."""
    server = serve(schemas)
    server.grpc_listener.untaken_seconds = 1.0
    n = 1_500_000   # a 12 MB answer: more than the sockets between the two hold
    message = b"\x0a" + _varint(8 * n) + struct.pack("<%dd" % n, *([2.5] * n))
    greedy = None
    try:
        greedy = _GreedyCaller(host_port(server.grpc_address), ECHO_GRPC, message)
        until(lambda: server.grpc_listener.untaken_closed == 1, "the caller that took nothing is closed", 60)
        assert closed_by_server(greedy.sock, 30)
        assert server.calls == {"grpc echoDoubles": 1}, "its call ran; its answer was what it would not take"
        assert grpc_echo(server) == ECHO_REQUEST
        until(lambda: server.grpc_listener.pipes() == 0, "nothing of that connection is left")
    finally:
        server.close()   # within its grace and a second, even with a caller that takes nothing still there
        if greedy is not None:
            greedy.sock.close()


def test_a_server_closes_within_its_grace_while_a_grpc_caller_takes_nothing(schemas):
    """grpcio's shutdown waits for what it sends to be taken; a caller that takes nothing would hold
    close() for good. Past the grace the listener cuts every connection, and close() returns."""
    server = serve(schemas)
    n = 1_500_000
    message = b"\x0a" + _varint(8 * n) + struct.pack("<%dd" % n, *([2.5] * n))
    greedy = _GreedyCaller(host_port(server.grpc_address), ECHO_GRPC, message)
    try:
        until(lambda: server.grpc_listener.untaken_waiting() == 1, "the answer waits for a caller that takes nothing")
        started = time.monotonic()
        server.close()
        assert time.monotonic() - started < 10, "close() took %.1f s" % (time.monotonic() - started)
        assert server.grpc_listener.untaken_closed == 0, "cut by the close, not for taking nothing"
    finally:
        server.close()
        greedy.sock.close()
