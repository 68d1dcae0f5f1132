"""gRPC from Python over the Java server's Unix socket on the same host: taken when the endpoint
names it and it is this user's and answers, bit for bit; TCP when told so, when the socket refuses,
or when the endpoint names a socket that is not a server's; the token stays on the host. The Python
server's gRPC listener has a Unix socket too: its endpoint names it, a client on the host takes it,
its caller is the OS user, every process on it shares one address's share, and it goes with the
server."""

import math
import os
import socket
import stat
import struct
from urllib.parse import parse_qsl, urlparse

import pytest

import switchboard
from switchboard import _tcp, _transport
from switchboard._schema import Interface
from switchboard._token import BearerToken
from switchboard.errors import PermissionDenied, TransportError
from conftest import bits
from test_limits import recording_peers

EDGE = [1.5, -0.0, 0.0, math.inf, -math.inf, 5e-324, -5e-324, 1e-310, 1.7976931348623157e308,
        struct.unpack("<d", struct.pack("<Q", 0x7FF0000000000ABC))[0]]


def _grpc_address(echo):
    address = echo.entries[0].endpoint("grpc")
    assert address is not None, "the Java echo server has no gRPC endpoint"
    return address


def _socket_of(address):
    return dict(parse_qsl(urlparse(address).query)).get("unix")


def test_grpc_calls_go_over_the_java_servers_unix_socket_bit_for_bit(echo):
    path = _socket_of(_grpc_address(echo))
    assert path is not None and os.path.basename(path) == _tcp.GRPC_UNIX_FILE, "the entry names no gRPC socket"
    assert bits(echo.echoDoubles(values=EDGE, protocol="grpc")) == bits(EDGE)
    record = echo.last_call
    assert (record.protocol, record.via, record.error) == ("grpc", "unix", None)
    large = [float(i) * 0.5 - 1e6 for i in range(300_000)]   # 2.4 MB: in parts, as a stream
    assert echo.echoDoubles(values=large, protocol="grpc") == large
    assert echo.echoDoubles(values=[], protocol="grpc") == []
    with pytest.raises(echo.divideFault) as fault:
        echo.divide(dividend=7, divisor=0, protocol="grpc")
    assert fault.value.reason == "division by zero" and echo.last_call.via == "unix"


@pytest.mark.parametrize("how", ["environment", "argument"])
def test_grpc_stays_on_tcp_when_told(registry_url, monkeypatch, how):
    if how == "environment":
        monkeypatch.setenv("SWITCHBOARD_GRPC_UNIX", "false")
    with switchboard.connect(registry_url, watch=False, unix_sockets=how != "argument") as board:
        echo = board.lookup("Echo")
        assert bits(echo.echoDoubles(values=EDGE, protocol="grpc")) == bits(EDGE)
        assert (echo.last_call.protocol, echo.last_call.via) == ("grpc", "tcp")


def test_a_grpc_socket_that_refuses_means_tcp(echo, echo_proto, tmp_path):
    directory = tmp_path / "sb-grpc-stale"
    directory.mkdir(mode=0o700)
    path = str(directory / _tcp.GRPC_UNIX_FILE)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.close()   # the file stays and nobody listens: a server gone
    url = urlparse(_grpc_address(echo))
    address = "grpc://127.0.0.1:%d%s?unix=%s&host=%s" % (url.port, url.path, path, _tcp.HOST_ID)
    assert _tcp.same_host_socket(address, "grpc", _tcp.GRPC_UNIX_FILE) == path
    transport = _transport.GrpcTransport(Interface(echo_proto), address)
    try:
        assert transport.via == "tcp"
        op = transport.iface.operations["echoDoubles"]
        response, _ = transport.call(op, op.request(values=[2.5, -0.0]), "c" * 32, 30)
        assert bits(response.values) == bits([2.5, -0.0])
    finally:
        transport.close()


def test_a_socket_whose_backlog_is_full_still_listens_and_one_closed_does_not(tmp_path):
    """The probe before a channel does not block: a server too busy to accept is still the server,
    and a socket file left behind refuses."""
    directory = tmp_path / "sb-grpc-busy"
    directory.mkdir(mode=0o700)
    path = str(directory / _tcp.GRPC_UNIX_FILE)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(0)
    waiting = []
    try:
        for _ in range(1000):   # never accepted: the backlog fills
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setblocking(False)
            waiting.append(s)
            if s.connect_ex(path) != 0:
                break
        assert _tcp.connect_probe(path) != 0, "the backlog did not fill"
        assert _tcp.listens(path)
    finally:
        for s in waiting:
            s.close()
        listener.close()
    assert not _tcp.listens(path), "the file stays; nobody listens"
    assert not _tcp.listens(str(tmp_path / "none" / _tcp.GRPC_UNIX_FILE))
    assert not _tcp.listens("/" + "x" * 200)


def test_sockets_a_grpc_entry_must_not_send_a_client_to_are_refused(echo, tmp_path):
    real = _socket_of(_grpc_address(echo))
    url = urlparse(_grpc_address(echo))

    def endpoint(path, host=_tcp.HOST_ID):
        return "grpc://127.0.0.1:%d%s?unix=%s&host=%s" % (url.port, url.path, path, host)

    def grpc_socket(path):
        return _tcp.same_host_socket(path, "grpc", _tcp.GRPC_UNIX_FILE)

    opened = tmp_path / "open"
    opened.mkdir(mode=0o700)
    os.chmod(opened, 0o755)   # a directory others may enter
    listening = []
    for directory, name in ((opened, _tcp.GRPC_UNIX_FILE), (tmp_path / "tcp", _tcp.UNIX_FILE)):
        directory.mkdir(mode=0o700, exist_ok=True)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(str(directory / name))
        s.listen()
        listening.append(s)
    try:
        assert grpc_socket(endpoint(real)) == real
        assert grpc_socket(endpoint(str(opened / _tcp.GRPC_UNIX_FILE))) is None
        assert grpc_socket(endpoint(str(tmp_path / "tcp" / _tcp.UNIX_FILE))) is None   # tcp's socket is not gRPC's
        assert grpc_socket(endpoint(real, host="0123456789abcdef")) is None          # another host's
        assert grpc_socket(endpoint("sb-grpc-1/grpc.sock")) is None                    # not absolute
        assert grpc_socket("grpc://127.0.0.1:%d%s" % (url.port, url.path)) is None
    finally:
        for s in listening:
            s.close()


@pytest.mark.parametrize("protocol", ["grpc", "tcp"])
def test_over_the_socket_a_plain_caller_is_its_os_user(registry_url, protocol):
    """EchoUidOnly's policy allows this OS user only (``uid:N``), whom a Java server knows only on its
    Unix sockets: over TCP the same caller is anonymous and denied."""
    with switchboard.connect(registry_url, watch=False) as same_host, \
            switchboard.connect(registry_url, watch=False, unix_sockets=False) as over_tcp:
        allowed = same_host.lookup("EchoUidOnly")
        assert allowed.echoDoubles(values=[2.5, -0.0], protocol=protocol) == [2.5, -0.0]
        assert allowed.last_call.via == "unix"
        anonymous = over_tcp.lookup("EchoUidOnly")
        with pytest.raises(PermissionDenied):
            anonymous.echoDoubles(values=[2.5], protocol=protocol)
        assert (anonymous.last_call.protocol, anonymous.last_call.via) == (protocol, "tcp")


def test_a_token_goes_over_the_socket_but_not_in_plain_text_off_the_host():
    token = BearerToken("secret-value")
    off_host = "grpc://192.0.2.7:9000/Echo"
    assert _transport._token_header(token, off_host, "grpc", on_this_host=True) == token.header()
    with pytest.raises(TransportError) as refused:
        _transport._token_header(token, off_host, "grpc")
    assert refused.value.delivery == TransportError.NOT_DELIVERED and "secret-value" not in str(refused.value)


# -- the Python server's own gRPC Unix socket ----------------------------------------------------------

class PyEcho:
    def echoDoubles(self, values):
        return values


def _py_serve(schemas, **options):
    return switchboard.serve(PyEcho(), schema=os.path.join(schemas, "echo.xsd"), handle_sigterm=False, **options)


def test_a_python_servers_grpc_unix_socket_is_named_taken_and_removed(schemas, registry_url, secret):
    server = _py_serve(schemas, registry=registry_url, name="PyGrpcUnix", secret=secret)
    peers = recording_peers(server)
    try:
        path = server.grpc_listener.unix_path
        assert path is not None and _socket_of(server.grpc_address) == path, server.grpc_address
        assert _tcp.same_host_socket(server.grpc_address, "grpc", _tcp.GRPC_UNIX_FILE) == path
        directory = os.path.dirname(path)
        assert stat.S_IMODE(os.lstat(directory).st_mode) == 0o700 and stat.S_ISSOCK(os.lstat(path).st_mode)
        with switchboard.connect(registry_url, watch=False) as same_host, \
                switchboard.connect(registry_url, watch=False, unix_sockets=False) as over_tcp:
            echo = same_host.lookup("PyGrpcUnix")
            assert bits(echo.echoDoubles(values=EDGE, protocol="grpc")) == bits(EDGE)
            assert (echo.last_call.protocol, echo.last_call.via) == ("grpc", "unix")
            large = [float(i) * 0.5 - 1e6 for i in range(300_000)]   # in parts, as a stream
            assert echo.echoDoubles(values=large, protocol="grpc") == large
            far = over_tcp.lookup("PyGrpcUnix")
            assert bits(far.echoDoubles(values=EDGE, protocol="grpc")) == bits(EDGE)
            assert far.last_call.via == "tcp"
        me = "uid:%d" % os.getuid()
        assert [(p.principal, p.remote_address) for p in peers] == [(me, path), (me, path), (None, peers[2].remote_address)]
        assert peers[2].remote_address.startswith("127.0.0.1:")
        assert server.calls == {"grpc echoDoubles": 3}
    finally:
        server.close()
    assert not os.path.exists(directory), "closing removes the socket and its directory"


def test_a_caller_on_a_python_servers_grpc_unix_socket_is_its_os_user(schemas, registry_url, secret):
    me = "uid:%d" % os.getuid()
    policy = {"name": "p", "allow_rules": [{"name": "me", "source": {"principals": [me]},
                                            "request": {"paths": ["/switchboard.echo.Echo/echoDoubles"]}}]}
    server = _py_serve(schemas, registry=registry_url, name="PyGrpcUnixUid", secret=secret, authz=policy)
    try:
        with switchboard.connect(registry_url, watch=False) as same_host, \
                switchboard.connect(registry_url, watch=False, unix_sockets=False) as over_tcp:
            assert same_host.lookup("PyGrpcUnixUid").echoDoubles(values=[2.5, -0.0], protocol="grpc") == [2.5, -0.0]
            anonymous = over_tcp.lookup("PyGrpcUnixUid")
            with pytest.raises(PermissionDenied):
                anonymous.echoDoubles(values=[2.5], protocol="grpc")
            assert anonymous.last_call.via == "tcp"
        assert server.calls == {"grpc echoDoubles": 1}
        assert server.denials == {("ANONYMOUS", "/switchboard.echo.Echo/echoDoubles"): 1}
    finally:
        server.close()


def test_every_process_on_a_python_servers_grpc_unix_socket_shares_one_address(schemas):
    from switchboard._tcp_server import UNIX_PEERS
    from test_limits import closed_by_server, still_open, until

    server = _py_serve(schemas, max_connections=64, max_connections_per_address=2)
    quiet = []
    try:
        for i in range(5):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(server.grpc_listener.unix_path)
            quiet.append(s)
            until(lambda: server.grpc_limits.evicted == max(0, i - 1), "connection %d admitted" % i)
        assert server.grpc_limits.count(UNIX_PEERS) == 2 and server.grpc_limits.refused == 0
        assert all(closed_by_server(s, 5) for s in quiet[:3]), "the oldest made room, whatever process opened them"
        assert all(still_open(s) for s in quiet[3:])
    finally:
        for s in quiet:
            s.close()
        server.close()


def test_a_python_server_with_tls_has_no_grpc_unix_socket(schemas, tls_files):
    tls = switchboard.Tls(keystore=tls_files["server.p12"], truststore=tls_files["trust.p12"],
                          password_file=tls_files["password"])
    server = _py_serve(schemas, tls=tls)
    try:
        assert server.grpc_listener.unix_path is None and "unix=" not in server.grpc_address
    finally:
        server.close()
