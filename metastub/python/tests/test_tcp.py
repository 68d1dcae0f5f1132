"""The tcp protocol (brpc's baidu_std frames) from Python: against the Java echo component over TCP
and over its Unix socket, bit for bit; the policies' choices; the failsafe to SOAP; call ids; and,
against a scripted server here, each error code as the Java client maps it, deadlines with their
cancel frame, the token in authentication_data, and answers that cannot be read."""

import math
import os
import socket
import stat
import struct
import threading
import time

import pytest

import switchboard
from switchboard import _tcp, _tcp_server
from switchboard._schema import Interface
from conftest import bits, until

EDGE = [1.5, -0.0, 0.0, math.inf, -math.inf, 5e-324, -5e-324, 1e-310, 1.7976931348623157e308,
        struct.unpack("<d", struct.pack("<Q", 0x7FF0000000000ABC))[0]]


@pytest.fixture
def tcp_only(monkeypatch, registry_url):
    """A board whose tcp calls go over TCP even on the server's host."""
    monkeypatch.setenv("SWITCHBOARD_TCP_UNIX", "false")
    with switchboard.connect(registry_url, watch=False) as board:
        yield board.lookup("Echo")


# -- against the Java server ---------------------------------------------------------------------

def test_doubles_bit_for_bit_over_the_unix_socket_on_the_same_host(echo):
    assert bits(echo.echoDoubles(values=EDGE, protocol="tcp")) == bits(EDGE)
    record = echo.last_call
    assert (record.protocol, record.via, record.reason, record.error) == ("tcp", "unix", "pinned on call", None)
    assert len(record.call_id) == 32


def test_doubles_bit_for_bit_over_tcp(tcp_only):
    assert bits(tcp_only.echoDoubles(values=EDGE, protocol="tcp")) == bits(EDGE)
    assert (tcp_only.last_call.protocol, tcp_only.last_call.via) == ("tcp", "tcp")
    assert tcp_only.echoDoubles(values=[], protocol="tcp") == []
    assert tcp_only.echoDoubles(values=None, protocol="tcp") is None


@pytest.mark.parametrize("unix", [True, False])
def test_a_declared_fault_and_linked_values_over_tcp(echo, tcp_only, unix):
    stub = echo if unix else tcp_only
    with pytest.raises(stub.divideFault) as fault:
        stub.divide(dividend=7, divisor=0, protocol="tcp")
    assert (fault.value.reason, fault.value.dividend) == ("division by zero", 7)
    answer = stub.divide(dividend=-7, divisor=2, protocol="tcp")
    assert (answer.quotient, answer.remainder) == (-3, -1)
    entry = stub.types.LinkEntry
    a = entry(llong=2 ** 62, sshort=-5, iint=7, ffloat=0.25, ddouble=-0.0, sstring="h\u00e9llo")
    a.nextLink = a
    head = stub.echoList(head=a, protocol="tcp")
    assert head.nextLink is head and head.llong == 2 ** 62 and head.sstring == "h\u00e9llo"


def test_calls_from_many_threads_share_one_connection(tcp_only):
    errors, results = [], {}

    def caller(n):
        try:
            results[n] = [tcp_only.echoDoubles(values=[float(n), float(i)], protocol="tcp") for i in range(40)]
        except Exception as e:   # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=caller, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    assert all(results[n] == [[float(n), float(i)] for i in range(40)] for n in range(8))


def test_the_policies_send_small_calls_over_tcp_and_bulk_over_grpc(registry_url):
    with switchboard.connect(registry_url, policy="size", watch=False) as board:
        echo = board.lookup("Echo")
        echo.echoDoubles(values=[1.0] * 10)
        assert (echo.last_call.protocol, echo.last_call.reason) == ("tcp", "size (stub policy)")
        echo.echoDoubles(values=[1.0] * 300_000)   # 2.4 MB each way: over the 2 MiB a policy sends over tcp
        assert (echo.last_call.protocol, echo.last_call.reason) == ("grpc", "size (stub policy)")
        echo.echoDoubles(values=[1.0] * 300_000, policy="fixed:tcp")   # a fixed tcp goes up to the frame limit
        assert echo.last_call.protocol == "tcp"
    with switchboard.connect(registry_url, watch=False) as board:
        echo = board.lookup("Echo")
        echo.echoDoubles(values=[1.0] * 10)
        assert (echo.last_call.protocol, echo.last_call.reason) == ("tcp", "adaptive (stub policy)")


def test_a_request_over_the_frame_limit_is_refused_before_anything_is_sent(echo):
    with pytest.raises(switchboard.Refused) as refused:
        echo.echoDoubles(values=[1.0] * 600_000, protocol="tcp")   # 4.8 MB
    assert refused.value.reason == "size-limit" and "nothing was sent" in str(refused.value)


def test_the_failsafe_repeats_a_call_not_delivered_over_tcp_over_soap_once(registry_url):
    """SimulatorTcpDown is bound with a tcp endpoint that no longer listens; simulateWithProgress
    is not idempotent. PythonPackageTest checks the Java component ran it once."""
    records = []
    with switchboard.connect(registry_url, listener=records.append, watch=False) as board:
        simulator = board.lookup("SimulatorTcpDown")
        with pytest.raises(simulator.simulateWithProgressFault):   # its answer, here a declared fault
            simulator.simulateWithProgress(parameters=[0.5, 2.0, 1.0, 1.5, 0.3], initial=[2.0, 1.0, 0.0, 0.0],
                                           times=[0.0, 1.0], progress="nobody", reports=1)
    assert [(r.protocol, r.reason) for r in records] == [
        ("tcp", "adaptive (stub policy)"),
        ("soap", "fallback from tcp (the request never reached the operation)")]
    assert "TransportError" in records[0].error and records[0].call_id == records[1].call_id


# -- which Unix sockets a client takes --------------------------------------------------------------

def _server_socket(directory, mode=0o700, name="tcp.sock"):
    os.makedirs(directory, mode=0o700)
    os.chmod(directory, mode)
    path = os.path.join(directory, name)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    return s, path


def _endpoint(path, host=_tcp.HOST_ID):
    return "tcp://127.0.0.1:1/Echo?unix=%s&host=%s" % (path, host)


def test_a_socket_as_the_server_makes_it_on_this_host_is_taken(tmp_path):
    s, path = _server_socket(str(tmp_path / "sb-tcp-1"))
    try:
        assert _tcp.same_host_socket(_endpoint(path)) == path
    finally:
        s.close()


def test_sockets_an_entry_must_not_send_a_client_to_are_refused(tmp_path, monkeypatch):
    s, path = _server_socket(str(tmp_path / "open"), mode=0o755)           # a directory others may enter
    other, other_path = _server_socket(str(tmp_path / "named"), name="docker.sock")   # not a server's name
    good, good_path = _server_socket(str(tmp_path / "good"))
    plain = tmp_path / "plain"
    plain.mkdir(mode=0o700)
    (plain / "tcp.sock").write_text("not a socket")
    try:
        assert _tcp.same_host_socket(_endpoint(path)) is None
        assert _tcp.same_host_socket(_endpoint(other_path)) is None
        assert _tcp.same_host_socket(_endpoint(str(plain / "tcp.sock"))) is None
        assert _tcp.same_host_socket(_endpoint(good_path, host="0123456789abcdef")) is None   # another host
        assert _tcp.same_host_socket(_endpoint(good_path, host="")) is None
        assert _tcp.same_host_socket(_endpoint("good/tcp.sock")) is None                    # not absolute
        assert _tcp.same_host_socket("tcp://127.0.0.1:1/Echo") is None
        assert _tcp.same_host_socket(_endpoint("/" + "x" * 120 + "/tcp.sock")) is None       # no sun_path holds it
        linked = tmp_path / "linkdir"
        linked.mkdir(mode=0o700)
        os.symlink(good_path, str(linked / "tcp.sock"))
        assert _tcp.same_host_socket(_endpoint(str(linked / "tcp.sock"))) is None            # a link to a socket
        assert _tcp.same_host_socket(_endpoint(good_path)) == good_path
        monkeypatch.setenv("SWITCHBOARD_TCP_UNIX", "false")
        assert _tcp.same_host_socket(_endpoint(good_path)) is None
    finally:
        for x in (s, other, good):
            x.close()


def test_a_stale_socket_file_falls_back_to_tcp(tmp_path, echo_proto):
    s, path = _server_socket(str(tmp_path / "stale"))
    s.close()   # the file stays; nobody listens: connecting refuses
    with _ScriptedServer(lambda meta, message: _answer(meta, message=b"")) as server:
        transport = _tcp.TcpTransport(Interface(echo_proto), "tcp://127.0.0.1:%d/Echo?unix=%s&host=%s"
                                      % (server.port, path, _tcp.HOST_ID))
        assert transport.unix == path
        op = transport.iface.operations["empty"]
        transport.call(op, op.request(), "c" * 32, 30)
        assert transport.via == "tcp"
        transport.close()


# -- against a scripted server: the wire, the codes, deadlines --------------------------------------

class _ScriptedServer:
    """A tcp server on loopback that answers each request frame with what ``script(meta, message)``
    returns (bytes to write, or None for nothing); keeps every request it read."""

    def __init__(self, script):
        self.script, self.requests = script, []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.received = threading.Condition()
        self.connections = []   # their threads
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            t = threading.Thread(target=self._connection, args=(conn,), daemon=True)
            t.start()
            self.connections.append(t)   # only once started: a test may join it as soon as it is here

    def _connection(self, conn):
        with conn:
            while True:
                header = _read(conn, 12)
                if header is None:
                    return
                magic, body, meta_size = struct.unpack(">4sII", header)
                data = _read(conn, body)
                if data is None:
                    return   # the client left in the middle of its frame (its deadline passed, say)
                meta = _tcp.read_meta(data[:meta_size])
                with self.received:
                    self.requests.append(meta)
                    self.received.notify_all()
                try:
                    out = self.script(meta, data[meta_size:])
                except _CloseAfter as close:
                    conn.sendall(close.reply)
                    return
                if out is not None:
                    conn.sendall(out)

    def await_requests(self, n, timeout=60):
        with self.received:
            assert self.received.wait_for(lambda: len(self.requests) >= n, timeout), self.requests
            return list(self.requests)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.listener.close()


def test_the_scripted_server_lists_a_connection_only_once_its_thread_has_started(monkeypatch):
    """Tests join the threads in ``connections`` as soon as they see them; one listed before its
    start() made join raise "cannot join thread before it is started". Here start() is held open
    until the test has looked at the list."""
    entered, release = threading.Event(), threading.Event()
    real_start = threading.Thread.start

    def held_start(thread):
        if getattr(getattr(thread, "_target", None), "__name__", "") == "_connection":
            entered.set()
            release.wait(30)
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", held_start)
    with _ScriptedServer(lambda meta, message: _answer(meta)) as server:
        with socket.create_connection(("127.0.0.1", server.port)):
            assert entered.wait(30), "the connection was not taken"
            listed_before_start = [t for t in server.connections if t.ident is None]
            release.set()
            assert listed_before_start == []
            until(lambda: server.connections, "the started connection was not listed")


def test_the_scripted_server_ends_a_connection_cut_in_the_middle_of_a_frame_quietly():
    """A client may leave while it sends a frame. The scripted server's thread for that connection
    ends without an exception: one raised there surfaced as a warning in whichever test ran then,
    and the suite counts a warning as a failure."""
    failures = []
    previous = threading.excepthook
    threading.excepthook = lambda args: failures.append(args.exc_value)
    try:
        with _ScriptedServer(lambda meta, message: _answer(meta)) as server:
            with socket.create_connection(("127.0.0.1", server.port)) as s:
                s.sendall(struct.pack(">4sII", b"PRPC", 100, 10) + bytes(5))   # 5 of its 100 bytes
            until(lambda: server.connections, "the connection was not taken")
            server.connections[0].join(30)
            assert not server.connections[0].is_alive()
    finally:
        threading.excepthook = previous
    assert failures == []


def _read(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _answer(meta, code=0, text=None, user=None, message=b""):
    return _tcp.frame(_tcp.response_meta(meta.correlation_id, code, text, user), message)


@pytest.fixture(scope="module")
def ops(echo_proto):
    return Interface(echo_proto)


def _call(server, ops, name="empty", timeout=30, token=None):
    transport = _tcp.TcpTransport(ops, "tcp://127.0.0.1:%d/Echo" % server.port,
                                  token=switchboard._client.BearerToken.of(token))
    op = ops.operations[name]
    try:
        return transport.call(op, op.request(), "feedc0de" * 4, timeout)
    finally:
        transport.close()


@pytest.mark.parametrize("code, user, error, reason, delivery", [
    (1004, {"sb-refused": "permission-denied", "sb-denied-path": "/switchboard.echo.Echo/empty"},
     switchboard.PermissionDenied, "permission-denied", None),
    (1004, {"sb-refused": "unauthenticated"}, switchboard.PermissionDenied, "unauthenticated", None),
    (1003, {"sb-refused": "call-id-reuse"}, switchboard.Refused, "call-id-reuse", None),
    (1003, None, switchboard.Refused, "malformed", None),
    (2004, None, switchboard.Refused, "size-limit", None),
    (2001, {"sb-error-type": "java.lang.IllegalStateException"}, switchboard.RemoteError, None, None),
    (1001, None, switchboard.TransportError, None, "not-delivered"),
    (1002, None, switchboard.TransportError, None, "not-delivered"),
    (1011, None, switchboard.TransportError, None, "not-delivered"),
    (3002, None, switchboard.Draining, None, "not-delivered"),
    (1008, None, switchboard.TransportError, None, "may-have-run"),
    (3003, None, switchboard.TransportError, None, "may-have-run"),
    (9999, None, switchboard.RemoteError, None, None),
])
def test_each_error_code_as_the_java_client_maps_it(ops, code, user, error, reason, delivery):
    with _ScriptedServer(lambda meta, message: _answer(meta, code, "refused here", user)) as server:
        with pytest.raises(error) as raised:
            _call(server, ops)
    e = raised.value
    assert type(e) is error
    if reason is not None:
        assert e.reason == reason
    if delivery is not None:
        assert e.delivery == delivery
    if code == 1004 and user.get("sb-denied-path"):
        assert e.path == "/switchboard.echo.Echo/empty"
    if code == 2001:
        assert e.error_type == "java.lang.IllegalStateException"


def test_the_request_carries_names_call_id_deadline_and_token(ops):
    with _ScriptedServer(lambda meta, message: _answer(meta)) as server:
        _call(server, ops, timeout=7.5, token="tok.en.value")
        meta = server.await_requests(1)[0]
    assert (meta.service, meta.method, meta.call_id, meta.token) == (
        "switchboard.echo.Echo", "empty", "feedc0de" * 4, "tok.en.value")
    assert 0 < meta.timeout_ms <= 7500 and meta.compress_type == 0 and meta.attachment_size == 0


def test_a_token_never_goes_to_a_plain_text_address_off_this_host(ops):
    transport = _tcp.TcpTransport(ops, "tcp://192.0.2.1:1/Echo", token=switchboard._client.BearerToken.of("secret"))
    connection = _tcp.Connection(socket.socket(), "tcp")
    with pytest.raises(switchboard.TransportError) as refused:
        transport._token(connection)
    assert refused.value.delivery == "not-delivered" and "secret" not in str(refused.value)
    connection.close()


def test_a_deadline_fails_may_have_run_and_cancels_on_the_server(ops):
    with _ScriptedServer(lambda meta, message: None) as server:   # never answers
        with pytest.raises(switchboard.TransportError) as late:
            _call(server, ops, timeout=0.3)
        request, cancel = server.await_requests(2)
    assert late.value.delivery == "may-have-run" and "deadline" in str(late.value)
    assert cancel.user_fields == {"sb-cancel": "1"} and cancel.correlation_id == request.correlation_id
    assert (cancel.service, cancel.method) == ("switchboard.echo.Echo", "empty")


def test_a_server_that_reads_nothing_fails_the_call_at_its_deadline_not_delivered(ops):
    """A server that accepts and then reads nothing: the request's write waits for room that never
    comes. It gives up at the call's deadline, not never; the frame did not reach the server whole,
    so the call is not delivered (the failsafe may send it elsewhere)."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)   # taken by the accepted connection
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    accepted = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    transport = _tcp.TcpTransport(ops, "tcp://127.0.0.1:%d/Echo" % listener.getsockname()[1], unix=False)
    op = ops.operations["echoDoubles"]
    request = op.request(values=[0.5] * 450_000)   # 3.6 MB: more than the socket buffers on the way hold
    outcome = []

    def call():
        try:
            transport.call(op, request, "feedc0de" * 4, 1.0)
            outcome.append("answered")
        except switchboard.TransportError as e:
            outcome.append(e)

    caller = threading.Thread(target=call, daemon=True)
    try:
        caller.start()
        caller.join(60)
        assert not caller.is_alive(), "the call still waits to write into a server that reads nothing"
        failed = outcome[0]
        assert isinstance(failed, switchboard.TransportError) and failed.delivery == "not-delivered", failed
        assert "took no bytes" in str(failed)
    finally:
        transport.close()
        listener.close()
        for conn in accepted:
            conn.close()


def test_a_cancelled_async_call_sends_a_cancel_frame_drops_its_late_answer_and_the_connection_goes_on(ops):
    first = []

    def script(meta, message):
        if meta.user_fields.get("sb-cancel"):
            return _answer(meta)   # the cancelled call's answer, after its cancel: the client drops it
        if not first:
            first.append(meta.correlation_id)
            return None            # held until the cancel comes
        return _answer(meta)

    with _ScriptedServer(script) as server:
        transport = _tcp.TcpTransport(ops, "tcp://127.0.0.1:%d/Echo" % server.port)
        op = ops.operations["empty"]
        try:
            future = transport.call_async(op, op.request(), "feedc0de" * 4, 60)
            server.await_requests(1, timeout=10)
            assert future.cancel()
            request, cancel = server.await_requests(2, timeout=10)
            assert cancel.user_fields == {"sb-cancel": "1"} and cancel.correlation_id == request.correlation_id
            assert future.cancelled()
            transport.call(op, op.request(), None, 10)   # answered on the same connection
            assert len(server.requests) == 3 and server.requests[2].correlation_id != request.correlation_id
        finally:
            transport.close()


@pytest.mark.parametrize("reply", [
    b"HTTP/1.1 400 Bad Request\r\n\r\n",                         # not a frame
    struct.pack(">4sII", b"PRPC", 4, 9) + b"abcd",              # a meta larger than its body
    struct.pack(">4sII", b"PRPC", 3, 3) + b"\x0a\xff\xff",       # a meta that is not protobuf
    b"PRPC\x00",                                                 # cut short, then closed
    b"",                                                         # closed without a word
])
def test_an_answer_that_cannot_be_read_fails_may_have_run(ops, reply):
    def script(meta, message):
        raise _CloseAfter(reply)

    with _ScriptedServer(script) as server:
        with pytest.raises(switchboard.TransportError) as failed:
            _call(server, ops, timeout=30)
    assert failed.value.delivery == "may-have-run"


class _CloseAfter(Exception):
    """Raised by a script: write ``reply``, then close the connection."""

    def __init__(self, reply):
        super().__init__("close")
        self.reply = reply


def test_an_answer_of_another_correlation_id_does_not_settle_the_call(ops):
    def script(meta, message):
        return _tcp.frame(_tcp.response_meta(meta.correlation_id + 1000)) + _answer(meta, message=b"")

    with _ScriptedServer(script) as server:
        response, _ = _call(server, ops)
    assert response == ops.operations["empty"].response()


# -- the Python server's tcp listener ---------------------------------------------------------------

class PyEcho:
    def __init__(self):
        self.gate = threading.Event()
        self.entered = threading.Event()

    def echoDoubles(self, values):
        return values

    def divide(self, dividend, divisor):
        if divisor == 0:
            raise switchboard.DeclaredFault("division by zero", dividend=dividend)
        return {"quotient": int(dividend / divisor), "remainder": dividend - divisor * int(dividend / divisor)}

    def empty(self):
        self.entered.set()
        assert self.gate.wait(60), "the test never opened the gate"


@pytest.fixture
def py_server(schemas):
    servers = []

    def start(**options):
        options.setdefault("handle_sigterm", False)
        server = switchboard.serve(PyEcho(), schema=os.path.join(schemas, "echo.xsd"), **options)
        servers.append(server)
        return server
    yield start
    for s in servers:
        s.runner.obj.gate.set()
        s.close()


def _py_call(server, name, token=None, timeout=30, unix=False, **values):
    """One call over the server's TCP port (``unix``: its Unix socket, which a client on this host takes)."""
    from switchboard import _values

    transport = _tcp.TcpTransport(server.iface, server.tcp.address, token=switchboard._client.BearerToken.of(token),
                                  unix=unix)
    assert transport.via == ("unix" if unix else "tcp")
    op = server.iface.operations[name]
    try:
        return transport.call(op, _values.Encoder(server.iface, op.request.DESCRIPTOR).encode(values), "ab" * 16,
                              timeout)
    finally:
        transport.close()


def _raw(server):
    port = int(server.tcp.address.split(":")[2].split("/")[0])
    return socket.create_connection(("127.0.0.1", port), timeout=30)


def _raw_unix(server):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(server.tcp.unix_path)
    return s


def _read_frame(conn):
    header = _read(conn, 12)
    if header is None:
        return None
    _, body, meta_size = struct.unpack(">4sII", header)
    data = _read(conn, body)
    return _tcp.read_meta(data[:meta_size]), data[meta_size:]


def test_serve_exports_tcp_beside_grpc_and_soap_and_answers_exactly(py_server):
    server = py_server()
    assert list(server.endpoints) == ["tcp", "grpc", "soap"] and server.tcp.address.startswith("tcp://127.0.0.1:")
    response, _ = _py_call(server, "echoDoubles", values=EDGE)
    assert bits(response.values) == bits(EDGE)
    from switchboard._transport import FaultMessage
    with pytest.raises(FaultMessage) as fault:
        _py_call(server, "divide", dividend=7, divisor=0)
    assert fault.value.text == "division by zero" and fault.value.message.dividend == 7
    with pytest.raises(switchboard.RemoteError, match="not implemented"):
        _py_call(server, "echoList", head=None)
    assert server.calls == {"tcp echoDoubles": 1, "tcp divide": 1}


def test_the_server_listens_on_a_unix_socket_too_which_a_client_on_this_host_takes(py_server):
    server = py_server()
    path = server.tcp.unix_path
    assert path is not None and _tcp.same_host_socket(server.tcp.address) == path, server.tcp.address
    directory = os.path.dirname(path)
    assert stat.S_IMODE(os.lstat(directory).st_mode) == 0o700 and stat.S_ISSOCK(os.lstat(path).st_mode)
    for unix in (True, False):
        response, _ = _py_call(server, "echoDoubles", unix=unix, values=EDGE)
        assert bits(response.values) == bits(EDGE)
    assert server.calls == {"tcp echoDoubles": 2}
    server.close()
    assert not os.path.exists(directory), "closing removes the socket and its directory"


def test_a_caller_on_the_unix_socket_is_its_uid_and_one_over_tcp_is_anonymous(py_server):
    me = "uid:%d" % os.getuid()
    policy = {"name": "p", "allow_rules": [{"name": "me", "source": {"principals": [me]},
                                            "request": {"paths": ["/switchboard.echo.Echo/echoDoubles"]}}]}
    server = py_server(authz=policy)
    assert list(_py_call(server, "echoDoubles", unix=True, values=[2.0])[0].values) == [2.0]
    with pytest.raises(switchboard.PermissionDenied):
        _py_call(server, "echoDoubles", values=[2.0])
    assert server.calls == {"tcp echoDoubles": 1}
    assert server.denials == {("ANONYMOUS", "/switchboard.echo.Echo/echoDoubles"): 1}


def test_every_process_on_the_unix_socket_counts_as_one_address(py_server):
    """Local processes cannot each claim an address of their own: one connection cap for them all."""
    server = py_server(max_connections_per_address=2)
    quiet = [_raw_unix(server), _raw_unix(server)]
    try:
        quiet[0].sendall(b"PRPC")   # a frame begun and not finished: the longest stalled
        assert list(_py_call(server, "echoDoubles", unix=True, values=[1.5])[0].values) == [1.5]
        assert _read(quiet[0], 1) is None, "the connection stalled longest made room"
        quiet[1].sendall(_tcp.frame(_tcp.request_meta(_tcp.names("switchboard.echo.Echo", "echoDoubles"), 9)))
        assert _read_frame(quiet[1])[0].correlation_id == 9, "the other connection was left alone"
        assert list(_py_call(server, "echoDoubles", values=[2.5])[0].values) == [2.5], "TCP callers are others"
    finally:
        for c in quiet:
            c.close()


@pytest.mark.parametrize("garbage", [b"GET / HTTP/1.1\r\n\r\n", struct.pack(">4sII", b"PRPC", 100_000, 70_000)])
def test_bytes_that_are_not_a_frame_close_a_unix_socket_connection_too(py_server, garbage):
    server = py_server()
    with _raw_unix(server) as conn:
        conn.sendall(garbage)
        assert _read(conn, 1) is None
    assert server.calls == {}


# -- a starting server removes killed servers' socket directories, and nothing else -----------------
# Each case that keeps a directory starts its server beside a killed server's directory too, which
# must go: the sweep ran and passed over the kept one.

LONG_AGO = time.time() - 10 * _tcp_server.STALE_SECONDS


@pytest.fixture
def socket_parent(tmp_path, monkeypatch):
    """Where the servers of a test make their socket directories: not the real tmp dir."""
    parent = tmp_path / "p"
    parent.mkdir()
    monkeypatch.setenv("SWITCHBOARD_TCP_UNIX_DIRECTORY", str(parent))
    return parent


def _long_ago(*paths):
    for path in paths:
        os.utime(path, (LONG_AGO, LONG_AGO))


def _killed_servers_directory(directory):
    """A directory as a killed server leaves it: 0700, its socket bound and closed (the file stays),
    both long unmodified."""
    s, path = _server_socket(str(directory))
    s.close()
    _long_ago(path, str(directory))
    return str(directory)


def _kept_while_a_killed_servers_goes(py_server, parent, kept):
    def contents():
        return None if os.path.islink(kept) else sorted(os.listdir(kept))

    killed = _killed_servers_directory(parent / "sb-tcp-killed")
    before = contents()
    py_server()
    assert not os.path.lexists(killed), "the killed server's directory goes"
    assert os.path.lexists(kept) and contents() == before, "%s stays as it was" % kept


def test_a_killed_servers_socket_directory_is_removed_when_a_server_starts(py_server, socket_parent):
    killed = _killed_servers_directory(socket_parent / "sb-tcp-killed")
    empty = str(socket_parent / "sb-tcp-empty")   # killed before it bound its socket
    os.mkdir(empty, 0o700)
    _long_ago(empty)
    server = py_server()
    assert not os.path.lexists(killed) and not os.path.lexists(empty)
    assert os.path.dirname(os.path.dirname(server.tcp.unix_path)) == str(socket_parent)


def test_a_live_servers_socket_directory_is_kept_and_it_still_serves(py_server, socket_parent):
    live = py_server()
    directory = os.path.dirname(live.tcp.unix_path)
    _long_ago(live.tcp.unix_path, directory)
    _kept_while_a_killed_servers_goes(py_server, socket_parent, directory)
    assert list(_py_call(live, "echoDoubles", unix=True, values=[2.5])[0].values) == [2.5]


def _young_directory(parent):
    directory = _killed_servers_directory(parent / "sb-tcp-young")
    os.utime(directory)   # now: its server may be about to listen
    return directory


def _young_socket(parent):
    directory = _killed_servers_directory(parent / "sb-tcp-young")
    os.utime(os.path.join(directory, _tcp.UNIX_FILE))
    return directory


def _with_file_long_ago(directory, name, text):
    """``directory`` with a file ``name`` holding ``text``, both long unmodified."""
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(text)
    _long_ago(path, directory)
    return directory


def _another_file_beside_the_socket(parent):
    return _with_file_long_ago(_killed_servers_directory(parent / "sb-tcp-more"), "notes", "not a server's")


def _a_plain_file_named_like_the_socket(parent):
    directory = str(parent / "sb-tcp-plain")
    os.mkdir(directory, 0o700)
    return _with_file_long_ago(directory, _tcp.UNIX_FILE, "not a socket")


def _others_may_enter(parent):
    directory = _killed_servers_directory(parent / "sb-tcp-open")
    os.chmod(directory, 0o750)
    return directory


def _another_users(parent):
    directory = _killed_servers_directory(parent / "sb-tcp-theirs")
    os.chown(directory, 65534, 65534)
    return directory


def _not_named_as_a_server_names_it(parent):
    return _killed_servers_directory(parent / "sb-grpc-killed")


def _a_link_named_as_a_servers_directory(parent):
    link = str(parent / "sb-tcp-link")
    os.symlink(_killed_servers_directory(parent / "target"), link)
    return link


@pytest.mark.parametrize("make", [
    _young_directory, _young_socket, _another_file_beside_the_socket, _a_plain_file_named_like_the_socket,
    _others_may_enter, _not_named_as_a_server_names_it, _a_link_named_as_a_servers_directory]
    + ([_another_users] if os.getuid() == 0 else []),   # only root can give a directory away
    ids=lambda make: make.__name__.strip("_"))
def test_what_is_not_surely_a_killed_servers_is_kept(py_server, socket_parent, make):
    _kept_while_a_killed_servers_goes(py_server, socket_parent, make(socket_parent))


def test_a_link_to_a_directory_elsewhere_removes_nothing_there(py_server, socket_parent, tmp_path):
    elsewhere = _killed_servers_directory(tmp_path / "elsewhere")
    link = str(socket_parent / "sb-tcp-evil")
    os.symlink(elsewhere, link)
    _kept_while_a_killed_servers_goes(py_server, socket_parent, link)
    assert stat.S_ISSOCK(os.lstat(os.path.join(elsewhere, _tcp.UNIX_FILE)).st_mode), "the dead socket there stays"


@pytest.fixture
def tls_server(py_server, tls_files):
    """A server with mutual TLS, and the client's TLS (the test client's key, the test CA)."""
    server = py_server(tls=switchboard.Tls(keystore=tls_files["server.p12"], truststore=tls_files["trust.p12"],
                                          password_file=tls_files["password"]))
    return server, switchboard.Tls(keystore=tls_files["client.p12"], truststore=tls_files["trust.p12"],
                                   password_file=tls_files["password"])


def _tls_call(server, tls, name, transport=None, **values):
    from switchboard import _values

    own = transport is None
    transport = transport or _tcp.TcpTransport(server.iface, server.tcp.address, tls=tls)
    op = server.iface.operations[name]
    try:
        return transport.call(op, _values.Encoder(server.iface, op.request.DESCRIPTOR).encode(values),
                              os.urandom(16).hex(), 30)[0]
    finally:
        if own:
            transport.close()


def test_serve_with_tls_offers_tcps_on_tcp_alone_and_answers_exactly(tls_server):
    server, tls = tls_server
    assert list(server.endpoints) == ["tcp", "grpc", "soap"]
    assert server.tcp.address.startswith("tcps://127.0.0.1:") and "unix=" not in server.tcp.address
    assert server.tcp.unix_path is None, "over TLS callers come over TCP only, where their certificates are checked"
    assert bits(_tls_call(server, tls, "echoDoubles", values=EDGE).values) == bits(EDGE)
    large = [i * 0.5 - 1e6 for i in range(400_000)] + [-0.0]   # 3.2 MB: some 200 TLS records each way
    assert bits(_tls_call(server, tls, "echoDoubles", values=large).values) == bits(large)
    from switchboard._transport import FaultMessage
    with pytest.raises(FaultMessage) as fault:
        _tls_call(server, tls, "divide", dividend=7, divisor=0)
    assert fault.value.message.dividend == 7
    assert server.calls == {"tcp echoDoubles": 2, "tcp divide": 1}


def test_calls_from_several_threads_share_one_tcps_connection_and_each_gets_its_own_answer(tls_server):
    """As many threads as one connection may have calls running (half the workers). The answers
    are written from the pool's threads while the connection's thread reads: each
    through the TLS connection's own locks, never OpenSSL's connection from two threads at once."""
    server, tls = tls_server
    transport = _tcp.TcpTransport(server.iface, server.tcp.address, tls=tls)
    wrong = []

    def caller(k):
        for i in range(25):
            values = [k * 1000.0 + i, -0.0, float(i)] * (1 + 500 * (i % 3))   # up to 36 KB: several records
            if bits(_tls_call(server, tls, "echoDoubles", transport, values=values).values) != bits(values):
                wrong.append((k, i))

    threads = [threading.Thread(target=caller, args=(k,)) for k in range(server.tcp.per_connection)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not any(t.is_alive() for t in threads)
    finally:
        transport.close()
    assert wrong == [] and server.calls == {"tcp echoDoubles": 25 * len(threads)}
    assert server.tcp.limits.count() <= 1, "one connection for them all"


def test_plain_text_at_a_tcps_port_is_closed_unread(tls_server):
    server, tls = tls_server
    with _raw(server) as conn:
        conn.sendall(_tcp.frame(_tcp.request_meta(_tcp.names("switchboard.echo.Echo", "echoDoubles"), 1)))
        assert _an_alert_at_most(_read_until_closed(conn)), "closed, a TLS alert at most"
    assert server.calls == {}
    assert bits(_tls_call(server, tls, "echoDoubles", values=[1.5]).values) == bits([1.5]), "and it serves on"


def test_a_client_without_a_certificate_is_turned_away(tls_server, tls_files):
    server, _ = tls_server
    keyless = switchboard.Tls(truststore=tls_files["trust.p12"], password_file=tls_files["password"])
    with pytest.raises(switchboard.TransportError):
        _tls_call(server, keyless, "echoDoubles", values=[1.0])
    assert server.calls == {}


def test_a_tls_handshake_must_end_in_time(tls_server):
    server, tls = tls_server
    server.tcp.handshake_seconds = 0.5
    with _raw(server) as silent, _raw(server) as half_hello:
        half_hello.sendall(b"\x16\x03\x01\x02\x00\x01")   # a handshake record's header, and no record
        assert _an_alert_at_most(_read_until_closed(silent)) and _an_alert_at_most(_read_until_closed(half_hello))
    assert server.calls == {}


def test_a_record_half_arrived_waits_for_its_rest(tls_server, monkeypatch):
    """The server reads a TLS record as its bytes come: a read that completes no record gives
    nothing yet (not the end of the stream), and the frame is read once the rest comes."""
    server, tls = tls_server
    partial = threading.Event()
    recv = _tcp.TlsWire.recv

    def watched(wire):
        got = recv(wire)
        if got == b"":
            partial.set()
        return got

    monkeypatch.setattr(_tcp.TlsWire, "recv", watched)
    with _raw(server) as conn:
        conn.settimeout(30)
        obj, incoming, outgoing = _client_tls(tls, conn)
        obj.write(_tcp.frame(_tcp.request_meta(_tcp.names("switchboard.echo.Echo", "echoDoubles"), 7)))
        records = outgoing.read()
        conn.sendall(records[:len(records) // 2])
        assert partial.wait(30), "the server read half a record"
        conn.sendall(records[len(records) // 2:])
        meta, _ = _tls_frame(obj, incoming, conn)
        assert (meta.correlation_id, meta.error_code) == (7, 0)
    assert server.calls == {"tcp echoDoubles": 1}


def test_a_frame_sent_with_the_handshakes_last_flight_is_answered(tls_server):
    """A TLS 1.3 client may send its first frame in the write that ends the handshake; the server
    reads it from what the handshake's last read left, not from the socket, which has nothing more."""
    server, tls = tls_server
    server.tcp.idle_seconds = 2.0   # a server that missed the frame closes the connection as idle
    frame = _tcp.frame(_tcp.request_meta(_tcp.names("switchboard.echo.Echo", "echoDoubles"), 9))
    with _raw(server) as conn:
        conn.settimeout(30)
        obj, incoming, _ = _client_tls(tls, conn, first=frame)
        meta, _ = _tls_frame(obj, incoming, conn)
        assert (meta.correlation_id, meta.error_code) == (9, 0)
    assert server.calls == {"tcp echoDoubles": 1}


def test_a_tls_answer_half_arrived_does_not_hold_the_caller_past_its_deadline(ops, tls_files):
    """The client reads TLS records as their bytes come, in its own poll: a server that sends half a
    record and stalls fails the call at its deadline (an ``SSLSocket`` read waited for the rest)."""
    server_tls = switchboard.Tls(keystore=tls_files["server.p12"], password_file=tls_files["password"])
    client_tls = switchboard.Tls(keystore=tls_files["client.p12"], truststore=tls_files["trust.p12"],
                                 password_file=tls_files["password"])
    released = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))

    def serve():
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(30)
            obj, incoming, outgoing = _memory_tls(server_tls.server_ssl_context(), conn)
            meta, _ = _tls_frame(obj, incoming, conn)   # the first call is answered whole
            obj.write(_answer(meta))
            conn.sendall(outgoing.read())
            meta, _ = _tls_frame(obj, incoming, conn)
            obj.write(_answer(meta))
            records = outgoing.read()
            conn.sendall(records[:len(records) // 2])
            released.wait(20)
            conn.sendall(records[len(records) // 2:])

    script = threading.Thread(target=serve, daemon=True)
    script.start()
    transport = _tcp.TcpTransport(ops, "tcps://127.0.0.1:%d/Echo" % listener.getsockname()[1], tls=client_tls)
    op = ops.operations["empty"]
    try:
        transport.call(op, op.request(), "feedc0de" * 4, 30)   # connected, the handshake done
        with pytest.raises(switchboard.TransportError) as late:
            transport.call(op, op.request(), "feedc0de" * 4, 1.0)
        assert late.value.delivery == "may-have-run" and "deadline" in str(late.value)
    finally:
        released.set()
        transport.close()
        listener.close()
        script.join(30)


def test_a_tls_session_ticket_after_the_handshake_is_no_end_of_the_stream(tls_server):
    """A TLS 1.3 server's session tickets come after the client's handshake ends; reading them gives
    the client no application bytes, which must not read as the server closing."""
    server, tls = tls_server
    transport = _tcp.TcpTransport(server.iface, server.tcp.address, tls=tls)
    try:
        for i in range(3):
            assert bits(_tls_call(server, tls, "echoDoubles", transport, values=[i, -0.0]).values) == bits([i, -0.0])
    finally:
        transport.close()
    assert server.calls == {"tcp echoDoubles": 3}


def test_a_frame_must_arrive_whole_in_time_over_tls_too(tls_server):
    server, tls = tls_server
    server.tcp.request_seconds = 0.5
    meta = _tcp.request_meta(_tcp.names("switchboard.echo.Echo", "echoDoubles"), 5)
    with _raw(server) as conn:
        conn.settimeout(30)
        obj, incoming, outgoing = _client_tls(tls, conn)
        obj.write(struct.pack(">4sII", b"PRPC", len(meta) + 80, len(meta)) + meta)   # the message never comes
        conn.sendall(outgoing.read())
        assert _read_until_closed(conn) is not None, "closed"
    assert server.calls == {}


def _read_until_closed(conn, seconds=30):
    """What the server sent before it closed ``conn`` (a TLS alert, the records a TLS 1.3 server
    sends after its handshake, or nothing); None if it did not close within ``seconds``."""
    conn.settimeout(seconds)
    data = b""
    try:
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                return data
            data += chunk
    except socket.timeout:
        return None


def _an_alert_at_most(sent):
    return sent is not None and (sent == b"" or sent[0] == 0x15)


def _client_tls(tls, conn, first=None):
    """A TLS client over memory buffers on ``conn``, handshake done: its records can be sent in
    pieces. ``first``: bytes sent in the same write as the handshake's last flight."""
    return _memory_tls(tls.client_ssl_context(), conn, first, server_hostname="127.0.0.1")


def _memory_tls(context, conn, first=None, **side):
    import ssl

    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = context.wrap_bio(incoming, outgoing, server_side="server_hostname" not in side, **side)
    while True:
        try:
            obj.do_handshake()
            break
        except ssl.SSLWantReadError:
            conn.sendall(outgoing.read())
            data = conn.recv(65536)
            assert data, "the server closed during the handshake"
            incoming.write(data)
    if first is not None:
        obj.write(first)
    conn.sendall(outgoing.read())
    return obj, incoming, outgoing


def _tls_frame(obj, incoming, conn):
    import ssl

    data = b""
    while True:
        try:
            while True:   # every record the buffers hold whole
                chunk = obj.read(65536)
                if not chunk:
                    break
                data += chunk
        except ssl.SSLWantReadError:
            pass
        if len(data) >= 12:
            _, body, meta_size = struct.unpack(">4sII", data[:12])
            if len(data) >= 12 + body:
                return _tcp.read_meta(data[12:12 + meta_size]), data[12 + meta_size:12 + body]
        chunk = conn.recv(65536)
        assert chunk, "closed before the answer"
        incoming.write(chunk)


def test_a_frame_over_the_limit_is_answered_elimit_and_closed_unread(py_server):
    server = py_server()
    meta = _tcp.request_meta(_tcp.names("switchboard.echo.Echo", "echoDoubles"), 5)
    with _raw(server) as conn:
        # announces 100 MB and sends only the meta: the answer must come without the message
        conn.sendall(struct.pack(">4sII", b"PRPC", len(meta) + 100_000_000, len(meta)) + meta)
        answer, message = _read_frame(conn)
        assert (answer.correlation_id, answer.error_code, answer.user("sb-refused")) == (5, 2004, "size-limit")
        assert answer.user("sb-closing") == "1", "it says the connection closes"
        assert _read(conn, 1) is None, "the connection is closed"
    assert server.calls == {}


def test_a_frame_must_arrive_whole_in_time_whatever_it_announces(py_server):
    server = py_server()
    server.tcp.request_seconds = 0.5
    meta = _tcp.request_meta(_tcp.names("switchboard.echo.Echo", "echoDoubles"), 5)
    with _raw(server) as slow, _raw(server) as quiet_header:
        slow.sendall(struct.pack(">4sII", b"PRPC", len(meta) + 80, len(meta)) + meta)   # the message never comes
        quiet_header.sendall(b"PR")                                                    # nor the rest of a header
        assert _read(slow, 1) is None and _read(quiet_header, 1) is None, "closed, not waited on"
    assert server.calls == {}


def test_a_caller_that_never_reads_its_answers_holds_no_worker_past_the_write_limit(py_server):
    """Answers are written from the call workers: a caller that sends calls with large answers and
    never reads them would hold each worker in its write for good, and two such connections every
    worker of a two-worker server. A caller that takes no byte of an answer for the write limit
    has its connection closed, and the worker is free."""
    server = py_server(workers=2)   # a connection may hold one of the two
    server.tcp.write_seconds = 0.5
    big = [float(i) for i in range(500_000)]   # a 4 MB answer, past any socket buffer a reader of 4 KiB allows
    from switchboard import _values
    op = server.iface.operations["echoDoubles"]
    request = _values.Encoder(server.iface, op.request.DESCRIPTOR).encode({"values": big}).SerializeToString()
    port = int(server.tcp.address.split(":")[2].split("/")[0])
    hogs = []
    try:
        for cid in (1, 2):
            hog = socket.socket()
            hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            hog.connect(("127.0.0.1", port))
            hog.sendall(_tcp.frame(_tcp.request_meta(_tcp.names("switchboard.echo.Echo", "echoDoubles"), cid), request))
            hogs.append(hog)
        deadline = time.monotonic() + 30
        while server.tcp.slow_readers < 2:   # a counter the server keeps, looked at until it moves
            assert time.monotonic() < deadline, "the workers are still writing into connections that read nothing"
            time.sleep(0.05)
        response, _ = _py_call(server, "echoDoubles", values=[1.5, -0.0])
        assert bits(response.values) == bits([1.5, -0.0]), "a worker is free again"
        for hog in hogs:
            assert _read_until_closed(hog) is not None, "the connection that did not read is closed"
    finally:
        for hog in hogs:
            hog.close()


def test_an_idle_connection_is_closed_and_a_busy_one_is_not(py_server):
    server = py_server()
    server.tcp.idle_seconds = 0.5
    with _raw(server) as conn:
        conn.sendall(_tcp.frame(_tcp.request_meta(_tcp.names("switchboard.echo.Echo", "echoDoubles"), 1)))
        assert _read_frame(conn)[0].error_code == 0
        assert _read(conn, 1) is None, "idle after its call: closed"
    with _raw(server) as conn:
        conn.sendall(_tcp.frame(_tcp.request_meta(_tcp.names("switchboard.echo.Echo", "empty"), 2)))
        assert server.runner.obj.entered.wait(30)
        # the call outlives the idle limit: held until the server has passed it twice over
        assert not _closed_within(conn, 1.0)
        server.runner.obj.gate.set()
        assert _read_frame(conn)[0].correlation_id == 2


def test_a_connection_is_idle_from_its_last_answer_not_from_its_last_look_while_busy(py_server):
    """While a call runs, the reader looks again each second; the quiet period starts when the answer
    is written, not with the look under way when the call ended, which would close the connection of
    a call held past a look within a second of its answer, or before the answer is written."""
    server = py_server()
    server.tcp.idle_seconds = 3.0
    with _raw(server) as conn:
        conn.sendall(_tcp.frame(_tcp.request_meta(_tcp.names("switchboard.echo.Echo", "empty"), 3)))
        assert server.runner.obj.entered.wait(30)
        assert not _closed_within(conn, 1.5)   # the reader looked once while the call ran
        server.runner.obj.gate.set()
        assert _read_frame(conn)[0].correlation_id == 3
        assert not _closed_within(conn, 1.5), "closed as idle 1.5 s after its answer, with a limit of 3 s"
        assert _closed_within(conn, 30), "idle past its limit: closed"


def _closed_within(conn, seconds):
    """Whether the server closes ``conn`` within ``seconds`` (reads nothing else)."""
    conn.settimeout(seconds)
    try:
        return conn.recv(1) == b""
    except socket.timeout:
        return False
    finally:
        conn.settimeout(30)


@pytest.mark.parametrize("garbage", [b"GET / HTTP/1.1\r\n\r\n", struct.pack(">4sII", b"PRPC", 2, 9) + b"xx",
                                     struct.pack(">4sII", b"PRPC", 100_000, 70_000)])
def test_bytes_that_are_not_a_frame_close_the_connection(py_server, garbage):
    server = py_server()
    with _raw(server) as conn:
        conn.sendall(garbage)
        assert _read(conn, 1) is None


def test_unknown_services_methods_and_malformed_requests_get_brpc_codes(py_server):
    server = py_server()
    with _raw(server) as conn:
        conn.sendall(_tcp.frame(_tcp.request_meta(_tcp.names("switchboard.other.Other", "x"), 1)))
        assert _read_frame(conn)[0].error_code == 1001
        conn.sendall(_tcp.frame(_tcp.request_meta(_tcp.names("switchboard.echo.Echo", "nothing"), 2)))
        assert _read_frame(conn)[0].error_code == 1002
        conn.sendall(_tcp.frame(_tcp.request_meta(_tcp.names("switchboard.echo.Echo", "echoDoubles"), 3),
                                b"\x0a\xff"))
        answer = _read_frame(conn)[0]
        assert (answer.error_code, answer.user("sb-refused")) == (1003, "malformed")
        conn.sendall(_tcp.frame(_tcp.request_meta(_tcp.names("switchboard.echo.Echo", "echoDoubles"), 4,
                                                  call_id="two words")))
        assert _read_frame(conn)[0].error_code == 1003
        conn.sendall(_tcp.frame(_tcp.request_meta(_tcp.names("switchboard.echo.Echo", "echoDoubles"), 6)))
        assert _read_frame(conn)[0].error_code == 0, "the connection still serves"
    assert server.calls == {"tcp echoDoubles": 1}


def _request_bytes(server, name, **values):
    from switchboard import _values

    op = server.iface.operations[name]
    return _values.Encoder(server.iface, op.request.DESCRIPTOR).encode(values).SerializeToString(), op


@pytest.mark.parametrize("compress_type", [_tcp.SNAPPY, _tcp.GZIP, _tcp.ZLIB])
def test_a_compressed_request_is_answered_in_its_compression(py_server, compress_type):
    server = py_server()
    echo = _tcp.names("switchboard.echo.Echo", "echoDoubles")
    message, op = _request_bytes(server, "echoDoubles", values=EDGE * 100)
    packed = _tcp.deflate(compress_type, message)
    assert len(packed) < len(message)
    with _raw(server) as conn:
        conn.sendall(_tcp.frame(_tcp.request_meta(echo, 1) + _tcp._int(3, compress_type), packed))
        answer, data = _read_frame(conn)
        assert (answer.error_code, answer.compress_type) == (0, compress_type)
        response = op.response.FromString(_tcp.inflate(compress_type, data, 1 << 20))
        assert bits(response.values) == bits(EDGE * 100)
        fault, _ = _request_bytes(server, "divide", dividend=7, divisor=0)
        conn.sendall(_tcp.frame(_tcp.request_meta(_tcp.names("switchboard.echo.Echo", "divide"), 2)
                                + _tcp._int(3, compress_type), _tcp.deflate(compress_type, fault)))
        answer, data = _read_frame(conn)
        assert (answer.error_code, answer.compress_type) == (3001, compress_type), "a declared fault, compressed"
        assert server.iface.operations["divide"].fault.FromString(_tcp.inflate(compress_type, data, 1 << 20)).dividend == 7
    assert server.calls == {"tcp echoDoubles": 1, "tcp divide": 1}


def test_compressed_requests_that_inflate_too_far_or_are_not_what_they_say_are_refused_unrun(py_server):
    server = py_server()
    server.tcp.max_frame_bytes = 1 << 20
    echo = _tcp.names("switchboard.echo.Echo", "echoDoubles")
    message, _ = _request_bytes(server, "echoDoubles", values=[1.5])
    bomb = _tcp.deflate(_tcp.GZIP, bytes(10_000_000))   # 10 MB of zeros in about 10 KB
    assert len(bomb) < 20_000
    snappy_bomb = _tcp.deflate(_tcp.SNAPPY, bytes(10_000_000))   # about 470 KB, within the frame limit
    assert len(snappy_bomb) < 1 << 19
    cases = [
        (_tcp.GZIP, bomb, 2004, "size-limit", None),
        (_tcp.GZIP, message, 1003, "malformed", None),                               # plain bytes said to be gzip
        (_tcp.ZLIB, _tcp.deflate(_tcp.ZLIB, message)[:-3], 1003, "malformed", None),  # cut short
        (_tcp.SNAPPY, snappy_bomb, 2004, "size-limit", None),                         # refused by its declared length
        (_tcp.SNAPPY, b"\xff\xff\xff\xff\x0f" + message, 2004, "size-limit", None),   # 4 GiB declared, a few bytes sent
        (_tcp.SNAPPY, b"\x80\x80\x80\x80\x80", 1003, "malformed", None),            # a length that never ends
        (_tcp.SNAPPY, _tcp.deflate(_tcp.SNAPPY, message)[:-3], 1003, "malformed", None),  # cut short
        (_tcp.SNAPPY, b"\x02" + _tcp.deflate(_tcp.SNAPPY, message)[1:], 1003, "malformed", None),  # says less than it holds
        (4, message, 1003, "malformed", "RpcMeta.compress_type"),                    # brpc's lz4
    ]
    with _raw(server) as conn:
        for cid, (compress_type, body, code, refused, field) in enumerate(cases, 1):
            conn.sendall(_tcp.frame(_tcp.request_meta(echo, cid) + _tcp._int(3, compress_type), body))
            answer, data = _read_frame(conn)
            assert (answer.correlation_id, answer.error_code, answer.user("sb-refused"), answer.user("sb-refused-field"),
                    data) == (cid, code, refused, field, b""), (compress_type, answer.error_text)
        conn.sendall(_tcp.frame(_tcp.request_meta(echo, 90) + _tcp._int(5, 4), message + b"atta"))
        answer, _ = _read_frame(conn)
        assert (answer.error_code, answer.user("sb-refused-field")) == (1003, "RpcMeta.attachment_size")
        conn.sendall(_tcp.frame(_tcp.request_meta(echo, 91), message))
        assert _read_frame(conn)[0].error_code == 0, "the connection still serves"
    assert server.calls == {"tcp echoDoubles": 1}


def test_without_cramjam_a_snappy_request_is_refused_naming_the_package(py_server, monkeypatch):
    monkeypatch.setattr(_tcp, "_cramjam", None)   # as where the package is not installed
    server = py_server()
    echo = _tcp.names("switchboard.echo.Echo", "echoDoubles")
    message, _ = _request_bytes(server, "echoDoubles", values=[1.5])
    with _raw(server) as conn:
        conn.sendall(_tcp.frame(_tcp.request_meta(echo, 1) + _tcp._int(3, _tcp.SNAPPY), message))
        answer, _ = _read_frame(conn)
    assert (answer.error_code, answer.user("sb-refused-field")) == (1003, "RpcMeta.compress_type")
    assert "pip install switchboard[snappy]" in answer.error_text
    assert server.calls == {}


def test_a_result_after_its_deadline_is_answered_timed_out_not_sent(py_server):
    """The operation runs past the 200 ms its caller left it: the answer is ERPCTIMEDOUT, as the
    Java server answers it, without the result, which the caller's own timer has given up on."""
    server = py_server()
    empty = _tcp.names("switchboard.echo.Echo", "empty")
    with _raw(server) as conn:
        conn.sendall(_tcp.frame(_tcp.request_meta(empty, 1, timeout_ms=200)))
        assert server.runner.obj.entered.wait(30), "the call reached the operation"
        # the server's deadline is 200 ms from the frame's arrival, before the operation began: past
        # it 200 ms from now, whatever the machine's load
        threading.Event().wait(0.2)
        server.runner.obj.gate.set()
        answer, data = _read_frame(conn)
    assert (answer.correlation_id, answer.error_code, data) == (1, _tcp.TIMED_OUT, b""), answer.error_text
    assert "timeout of 200 ms passed on the server" in answer.error_text
    assert server.calls == {"tcp empty": 1}, "it ran; its result was not sent"


def test_the_bounded_pool_answers_eovercrowded_without_running(py_server):
    server = py_server(workers=2)   # one call per connection: half the pool
    empty = _tcp.names("switchboard.echo.Echo", "empty")
    with _raw(server) as conn:
        conn.sendall(_tcp.frame(_tcp.request_meta(empty, 1)))
        assert server.runner.obj.entered.wait(30)
        conn.sendall(_tcp.frame(_tcp.request_meta(empty, 2)))
        crowded = _read_frame(conn)[0]
        assert (crowded.correlation_id, crowded.error_code) == (2, 1011)
        server.runner.obj.gate.set()
        done = _read_frame(conn)[0]
        assert (done.correlation_id, done.error_code) == (1, 0)
    assert server.calls == {"tcp empty": 1}


def test_the_connection_cap_closes_the_stalled_connection_for_a_caller(py_server):
    server = py_server(max_connections_per_address=2)
    quiet = [_raw(server), _raw(server)]
    try:
        quiet[0].sendall(b"PRPC")   # a frame begun and not finished: the longest stalled
        response, _ = _py_call(server, "echoDoubles", values=[1.5])
        assert list(response.values) == [1.5]
        assert _read(quiet[0], 1) is None, "the connection stalled longest made room"
        quiet[1].sendall(_tcp.frame(_tcp.request_meta(_tcp.names("switchboard.echo.Echo", "echoDoubles"), 9)))
        assert _read_frame(quiet[1])[0].correlation_id == 9, "the other connection was left alone"
    finally:
        for c in quiet:
            c.close()


def test_a_denied_call_is_erpcauth_and_permission_denied(py_server):
    policy = {"name": "p", "allow_rules": [{"name": "echo", "request": {"paths": ["/switchboard.echo.Echo/echoDoubles"]}}]}
    server = py_server(authz=policy)
    with pytest.raises(switchboard.PermissionDenied) as denied:
        _py_call(server, "divide", dividend=7, divisor=2)
    assert (denied.value.reason, denied.value.path) == ("permission-denied", "/switchboard.echo.Echo/divide")
    assert list(_py_call(server, "echoDoubles", values=[2.0])[0].values) == [2.0]
    assert server.calls == {"tcp echoDoubles": 1}


def test_the_benchmark_runs_every_case_in_one_run(registry_url, capsys):
    """The script docs/python.md names; its numbers are for a quiet machine, so only the shape and
    the ways the calls went are checked here."""
    import json

    from switchboard import bench

    code = bench.main(["--registry", registry_url, "--reps", "30", "--warmup", "5", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code in (0, 1), "every case ran (2: one could not)"
    assert list(out["rows"]) == ["tcp", "tcp-unix", "grpc", "adaptive", "grpcio"]
    assert all(r["calls"] == 30 and r["p10_us"] <= r["median_us"] for r in out["rows"].values())
    assert (out["rows"]["tcp"]["via"], out["rows"]["tcp-unix"]["via"]) == ("tcp over tcp", "tcp over unix")
    assert out["rows"]["grpc"]["x_grpc"] == 1.0 and len(out["targets"]) == 3
    assert code == (0 if all(out["targets"].values()) else 1)


@pytest.mark.parametrize("unix", [False, True])
def test_a_connection_the_server_ended_while_unused_is_replaced_not_written_into(py_server, unix):
    """A server whose idle limit (1 s here) is under the client's 30 s replacement ends the
    connection between two calls: the second call sees that before writing and connects again,
    rather than failing as may-have-run on a write into a closed connection."""
    from switchboard import _values

    server = py_server(idle_seconds=1)
    transport = _tcp.TcpTransport(server.iface, server.tcp.address, unix=unix)
    op = server.iface.operations["echoDoubles"]
    request = _values.Encoder(server.iface, op.request.DESCRIPTOR).encode({"values": [1.5, -0.0]})
    try:
        first = transport.connection()
        assert list(transport.call(op, request, "ab" * 16, 30)[0].values) == [1.5, -0.0]
        until(lambda: server.tcp.limits.count() == 0, "the server ended the unused connection")
        assert list(transport.call(op, request, "cd" * 16, 30)[0].values) == [1.5, -0.0]
        assert transport.connection() is not first and first.closed == "ended by the server while unused"
        assert server.calls == {"tcp echoDoubles": 2}
    finally:
        transport.close()
