"""A component served with switchboard.serve, called by the Python client: exact values, the hosting
guarantees (not-implemented faults, size limits, no DTDs, de-duplication by call id, health,
reflection, the lease, a refused bind), the failsafe, and SOAP cancel messages answered as the Java
server answers them. PythonPackageTest adds the Java command
line calling the example component (scripts/python/echo_component.py) and its unbinding on SIGTERM."""

import http.client
import os
import socket
import struct
import sys
import threading
import time
import urllib.parse

import grpc
import pytest
import requests

import switchboard
from conftest import bits
from switchboard import _transport
from switchboard._transport import BUSY_HEADER, CANCEL_HEADER, RUNNING_ONLY_HEADER
from switchboard import _limits, _peer, _values
from switchboard._schema import Interface
from switchboard.errors import TransportError
from switchboard.server import DEDUP_ENTRIES_PER_IDENTITY, _Run, _Shares
from test_jwt import keys, verifier  # noqa: F401  fixtures: tokens of two identities and their verifier
from test_limits import ECHO, closed_by_server, idle_connection, soap_echo


sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts", "python"))
from echo_component import Echo as ExampleEcho  # noqa: E402  the example component's operations


class Echo(ExampleEcho):
    echoTensor = echoMixed = None   # missing: they answer "not implemented"


@pytest.fixture(scope="module")
def served(schemas, registry_url, secret):
    server = switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url,
                               name="PyServed", secret=secret, lease=1, max_message_bytes=200_000)
    yield server
    server.close()


@pytest.fixture(scope="module")
def client(served, board):
    return board.lookup("PyServed")


@pytest.mark.parametrize("protocol", ["grpc", "soap"])
def test_the_python_client_calls_it_exactly(client, protocol):
    values = [1.5, -0.0, float("inf"), 5e-324, 0.1]
    assert bits(client.echoDoubles(values=values, protocol=protocol)) == bits(values)
    a = client.types.LinkEntry(llong=1, sshort=2, iint=3, ffloat=0.5, ddouble=-0.0, sstring="x")
    a.nextLink = a
    back = client.echoList(head=a, protocol=protocol)
    assert back.nextLink is back
    with pytest.raises(client.divideFault) as fault:
        client.divide(dividend=9, divisor=0, protocol=protocol)
    assert fault.value.dividend == 9


@pytest.mark.parametrize("protocol", ["grpc", "soap"])
def test_a_missing_operation_answers_not_implemented(client, protocol):
    with pytest.raises(switchboard.RemoteError, match="not implemented: Echo has no operation echoMixed"):
        client.echoMixed(list=[1.0], protocol=protocol)


@pytest.mark.parametrize("protocol", ["grpc", "soap"])
def test_requests_over_the_size_limit_are_refused_without_running(served, client, protocol):
    before = served.calls
    with pytest.raises(switchboard.Refused) as refused:
        # 240 kB over gRPC, about 550 kB as SOAP text
        client.echoDoubles(values=[i / 7 for i in range(30_000)], protocol=protocol)
    assert refused.value.reason == "size-limit"
    assert served.calls == before


def test_a_dtd_is_refused(served):
    body = (b'<?xml version="1.0"?><!DOCTYPE e [<!ENTITY x "1.5">]><e:Envelope xmlns:e="http://schemas.xmlsoap.org'
            b'/soap/envelope/"><e:Body><echoDoubles xmlns="urn:switchboard:echo"><values>&x;</values></echoDoubles>'
            b'</e:Body></e:Envelope>')
    r = requests.post(served.soap_address, data=body, headers={"Content-Type": "text/xml; charset=UTF-8"}, timeout=30)
    assert r.status_code == 500 and b'reason="malformed"' in r.content and b"DTDs are not accepted" in r.content


@pytest.fixture(scope="module")
def not_idempotent(schemas, workdir):
    """echo.xsd and its .proto with divide no longer marked idempotent, as the compiler writes them."""
    d = os.path.join(workdir, "divide-not-idempotent")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(schemas, "echo.xsd"), encoding="utf-8") as f:
        xsd = f.read().replace('<sb:operation name="divide" idempotent="true"/>', '<sb:operation name="divide"/>')
    with open(os.path.join(schemas, "Echo.proto"), encoding="utf-8") as f:
        proto = f.read().replace("  // divide: idempotent, may be repeated\n", "  // divide\n")
    assert 'name="divide"/>' in xsd and "  // divide\n" in proto
    for name, text in (("echo.xsd", xsd), ("Echo.proto", proto)):
        with open(os.path.join(d, name), "w", encoding="utf-8") as f:
            f.write(text)
    return os.path.join(d, "echo.xsd")


class Gated(ExampleEcho):
    """divide waits until the test lets it answer; ``entered`` counts the calls that reached it."""

    def __init__(self):
        self.gate = threading.Event()
        self.entered = threading.Semaphore(0)

    def divide(self, dividend, divisor):
        self.entered.release()
        assert self.gate.wait(60)
        return super().divide(dividend, divisor)


def test_a_repeated_call_id_runs_once(not_idempotent, registry_url, secret, board):
    component = Gated()
    component.gate.set()
    server = switchboard.serve(component, schema=not_idempotent, registry=registry_url, name="PyOnce", secret=secret)
    try:
        echo = board.lookup("PyOnce")
        assert not echo.iface.operations["divide"].idempotent and "call-ids" in echo.entries[0].features
        first = echo.divide(dividend=7, divisor=2, protocol="grpc", call_id="0123456789abcdef" * 2)
        again = echo.divide(dividend=7, divisor=2, protocol="soap", call_id="0123456789abcdef" * 2)
        assert (first.quotient, again.quotient) == (3, 3)
        echo.echoDoubles(values=[1.0], protocol="grpc", call_id="0123456789abcdef" * 2)
        echo.echoDoubles(values=[1.0], protocol="grpc", call_id="0123456789abcdef" * 2)
        assert server.calls == {"grpc divide": 1, "grpc echoDoubles": 2}, "idempotent calls are not remembered"
    finally:
        server.close()


@pytest.mark.parametrize("protocol, via", [("grpc", "unix"), ("tcp", "unix")])
def test_the_failsafe_repeats_a_call_that_may_have_run_when_the_server_remembers_call_ids(
        not_idempotent, registry_url, secret, protocol, via):
    """divide over gRPC or tcp, each on the server's Unix socket (the caller a uid there), outlives
    its deadline (the component waits until the client has given up on it); the repeat over SOAP
    (over TCP, the caller anonymous) carries the same call id, waits for the first run and gets its
    answer: a call over the socket counts as anonymous for its call id, as on the Java servers."""
    component = Gated()
    server = switchboard.serve(component, schema=not_idempotent, registry=registry_url, name="PySlow-" + protocol,
                               secret=secret)
    attempts = []

    def on_attempt(record):
        attempts.append((record.protocol, record.via, record.error is not None))
        if record.protocol == protocol and record.error:
            component.gate.set()
    try:
        with switchboard.connect(registry_url, listener=on_attempt) as board:
            echo = board.lookup("PySlow-" + protocol)
            answer = echo.divide(dividend=-7, divisor=2, policy="fixed:" + protocol, timeout=2)
            assert (answer.quotient, answer.remainder) == (-3, -1)
            assert echo.last_call.reason == ("fallback from %s (the server answers a repeated call id with the first"
                                             " result)" % protocol)
        assert attempts == [(protocol, via, True), ("soap", None, False)], attempts
        assert server.calls == {protocol + " divide": 1}, "the repeat over SOAP did not run it again"
    finally:
        component.gate.set()
        server.close()


def test_a_call_id_used_again_for_another_request_is_refused_and_does_not_run(not_idempotent, registry_url, secret,
                                                                             board):
    component = Gated()
    component.gate.set()
    server = switchboard.serve(component, schema=not_idempotent, registry=registry_url, name="PyReuse", secret=secret)
    try:
        echo = board.lookup("PyReuse")
        call_id = "feedface" * 4
        assert echo.divide(dividend=7, divisor=2, protocol="grpc", call_id=call_id).quotient == 3
        for protocol in ("grpc", "soap", "tcp"):
            with pytest.raises(switchboard.Refused) as refused:
                echo.divide(dividend=9, divisor=2, protocol=protocol, call_id=call_id)
            assert refused.value.reason == "call-id-reuse", protocol
        assert echo.divide(dividend=7, divisor=2, protocol="soap", call_id=call_id).quotient == 3, "the same request"
        assert server.calls == {"grpc divide": 1}
    finally:
        server.close()


def test_a_flood_of_fresh_call_ids_evicts_only_its_callers_own_calls(not_idempotent):
    """12,000 calls under fresh ids from one identity, past its share of the call-id memory (2,500) and
    past the whole memory (10,000), leave another identity's call remembered: its repeat is answered from its first run, not run again; the
    flood's own oldest call is forgotten and runs again."""
    with open(os.path.join(os.path.dirname(not_idempotent), "Echo.proto"), encoding="utf-8") as f:
        iface = Interface(f.read())
    ran = []

    class Counting(ExampleEcho):
        def divide(self, dividend, divisor):
            ran.append(dividend)
            return super().divide(dividend, divisor)
    runner = _Run(Counting(), iface, _values.Types(iface), False)
    op = iface.operations["divide"]

    alice, anyone = _peer.Peer("alice", _peer.MUTUAL_TLS, "127.0.0.1:1"), _peer.Peer(None, _peer.ANONYMOUS, "127.0.0.1:2")

    def divide(caller, call_id, dividend=7):
        return runner.run("grpc", op, op.request(dividend=dividend, divisor=2), call_id, caller)
    divide(alice, "alice-1")
    for i in range(12_000):
        divide(anyone, "flood-%d" % i, dividend=i)
    assert runner.results.kept("ANONYMOUS") == DEDUP_ENTRIES_PER_IDENTITY and runner.results.kept("MUTUAL_TLS:alice") == 1
    ran.clear()
    assert divide(alice, "alice-1").quotient == 3
    divide(anyone, "flood-11999", dividend=11999)
    assert ran == [], "alice's call and the flood's newest were answered from their first runs"
    divide(anyone, "flood-0", dividend=0)
    assert ran == [0], "the flood's oldest call was forgotten, so it ran again"


def test_a_soap_repeat_of_a_request_with_nan_payloads_gets_the_first_run(not_idempotent):
    """XML carries one NaN: a first attempt over gRPC or tcp keeps a NaN's sign and payload bits, the
    failsafe's repeat over SOAP brings Python's NaN, and the two are one request, answered from the
    first run. Every other value is compared exactly: 0.0 under the same id is another request."""
    with open(os.path.join(os.path.dirname(not_idempotent), "Echo.proto"), encoding="utf-8") as f:
        proto = f.read().replace("  // echoDoubles: idempotent, may be repeated\n", "  // echoDoubles\n")
    iface = Interface(proto)
    op = iface.operations["echoDoubles"]
    assert not op.idempotent
    ran = []

    class Counting(ExampleEcho):
        def echoDoubles(self, values):
            ran.append(list(values))
            return values
    runner = _Run(Counting(), iface, _values.Types(iface), False)
    anyone = _peer.Peer(None, _peer.ANONYMOUS, "127.0.0.1:2")
    payload_nan = struct.unpack("<d", struct.pack("<Q", 0x7FF80000DEADBEEF))[0]
    negative_nan = struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000001))[0]

    first = runner.run("tcp", op, op.request(values=[payload_nan, -0.0, negative_nan, 1.5]), "nan-1", anyone)
    again = runner.run("soap", op, op.request(values=[float("nan"), -0.0, float("nan"), 1.5]), "nan-1", anyone)
    assert again is first and len(ran) == 1, "the repeat over SOAP was answered from the first run"
    with pytest.raises(switchboard.Refused) as refused:
        runner.run("soap", op, op.request(values=[float("nan"), 0.0, float("nan"), 1.5]), "nan-1", anyone)
    assert refused.value.reason == "call-id-reuse" and len(ran) == 1
    bits = [struct.unpack("<Q", struct.pack("<d", x))[0] for x in ran[0]]
    assert bits[0] == 0x7FF80000DEADBEEF and bits[2] == 0xFFF8000000000001, "the operation got the NaNs as sent"


def test_nans_are_made_canonical_at_any_depth_in_a_copy_and_nothing_else_changes(schemas):
    with open(os.path.join(schemas, "Echo.proto"), encoding="utf-8") as f:
        iface = Interface(f.read())
    mixed = iface.operations["echoMixed"].request()
    payload_nan = struct.unpack("<d", struct.pack("<Q", 0x7FF80000DEADBEEF))[0]
    mixed.list.elements.add().number = -0.0
    inner = mixed.list.elements.add().list
    inner.elements.add().number = payload_nan
    inner.elements.add().tensor.values.extend([1.5, payload_nan])
    before = mixed.SerializeToString(deterministic=True)

    canonical = switchboard.server._canonical_nans(mixed)

    assert canonical is not mixed and mixed.SerializeToString(deterministic=True) == before, "the request is untouched"
    assert bits([inner.elements[0].number]) == bits([payload_nan])
    made = canonical.list.elements[1].list.elements
    assert bits([made[0].number, *made[1].tensor.values]) == bits([float("nan"), 1.5, float("nan")])
    assert bits([canonical.list.elements[0].number]) == bits([-0.0])
    plain = iface.operations["echoMixed"].request()
    plain.list.elements.add().number = 2.0
    assert switchboard.server._canonical_nans(plain) is plain, "no NaN: no copy"


def test_health_and_reflection(served):
    target = urllib.parse.urlparse(served.grpc_address).netloc
    with grpc.insecure_channel(target) as channel:
        check = channel.unary_unary("/grpc.health.v1.Health/Check")
        assert check(b"\x0a\x15switchboard.echo.Echo", timeout=10) == b"\x08\x01"   # SERVING
        reflect = channel.stream_stream("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo")
        answers = list(reflect(iter([b"\x3a\x00", b"\x22\x15switchboard.echo.Echo"]), timeout=10))
    assert b"switchboard.echo.Echo" in answers[0] and b"grpc.health.v1.Health" in answers[0]
    assert b"echoDoubles" in answers[1]   # the file descriptor, with the service's methods


def test_the_lease_is_renewed(served):
    deadline = time.monotonic() + 30
    while served.registration.renewals < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert served.registration.renewals >= 2, "renewed at a third of a 1 s lease"


def test_the_failsafe_from_python_runs_the_call_once(schemas, registry_url, secret, board):
    server = switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url,
                               name="PyGrpcDown", secret=secret, tcp=False)   # gRPC's failsafe: test_tcp has tcp's
    try:
        server._stop_grpc(0)   # the gRPC endpoint goes down; the entry still names it
        echo = board.lookup("PyGrpcDown")
        assert echo.echoDoubles(values=[1.0] * 2000) == [1.0] * 2000   # large: the policy picks gRPC
        assert echo.last_call.protocol == "soap" and echo.last_call.fallback
        assert echo.last_call.reason == "fallback from grpc (the request never reached the operation)"
        assert server.calls == {"soap echoDoubles": 1}
        echo.echoDoubles(values=[2.0] * 2000)   # gRPC sits out its back-off: straight to SOAP, no fallback
        assert (echo.last_call.protocol, echo.last_call.fallback) == ("soap", False)
        assert echo.last_call.reason == "adaptive (stub policy; grpc in back-off)"
        assert server.calls == {"soap echoDoubles": 2}
    finally:
        server.close()


def until(condition, what, seconds=30):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_the_replicas_follow_the_registry(schemas, registry_url, secret, board):
    def replica():
        return switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url,
                                 name="PyReplicas", secret=secret)
    first = replica()
    try:
        echo = board.lookup("PyReplicas")
        assert len(echo.entries) == 1
        second = replica()
        try:
            until(lambda: len(echo.entries) == 2, "the watch adds the second replica")
            for _ in range(4):
                assert echo.echoDoubles(values=[1.0], protocol="soap") == [1.0]
            assert first.calls == second.calls == {"soap echoDoubles": 2}, "an idle client takes replicas in turn"
        finally:
            second.close()
        until(lambda: [e.instance_id for e in echo.entries] == [first.instance_id], "the watch drops the replica gone")
        assert echo.echoDoubles(values=[1.0], protocol="grpc") == [1.0]
    finally:
        first.close()


def test_a_wrong_secret_is_refused(schemas, registry_url):
    with pytest.raises(switchboard.SwitchboardError, match=r"refused the bind .*\(code unauthorized\)"):
        switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url, name="PyNoSecret",
                          secret="not-the-secret")


# -- SOAP cancel messages: a POST with the Switchboard-Cancel header naming the call id, no envelope ----------

CALL_ID = "c0ffee00" * 4
DIVIDE = ('<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Header><sb:call '
          'xmlns:sb="urn:switchboard:soap" id="%s"/></e:Header><e:Body><divide xmlns="urn:switchboard:echo">'
          '<dividend>7</dividend><divisor>2</divisor></divide></e:Body></e:Envelope>')


def bearer_header(token):
    return {} if token is None else {"Authorization": "Bearer " + token}


def held_divide(server, component, call_id=CALL_ID, token=None):
    """divide under ``call_id``, POSTed on a thread of its own and held in the operation; what it
    returns gives the call's HTTP response, or the error its connection met."""
    outcome = []

    def post():
        try:
            outcome.append(requests.post(server.soap_address, data=DIVIDE % call_id, timeout=60,
                                         headers={"Content-Type": "text/xml; charset=UTF-8", **bearer_header(token)}))
        except requests.RequestException as e:
            outcome.append(e)
    caller = threading.Thread(target=post, name="held-divide")
    caller.start()
    assert component.entered.acquire(timeout=30), "the held call reaches the operation"

    def ended():
        caller.join(60)
        return outcome[0]
    return ended


def cancel(server, call_id=CALL_ID, token=None, headers=None, session=requests):
    return session.post(server.soap_address, headers={CANCEL_HEADER: call_id, **bearer_header(token), **(headers or {})},
                        timeout=30)


def divide(server, call_id=CALL_ID, token=None):
    """divide under ``call_id``, answered at once (the test opened the gate)."""
    return requests.post(server.soap_address, data=DIVIDE % call_id, timeout=60,
                         headers={"Content-Type": "text/xml; charset=UTF-8", **bearer_header(token)})


def cancelled_early(response):
    return response.status_code == 500 and b'reason="cancelled"' in response.content


def answered(response):
    return isinstance(response, requests.Response) and response.status_code == 200 \
        and b"<quotient>3</quotient>" in response.content


@pytest.fixture()
def gated(schemas):
    """Serves a Gated component without a registry, with the options given; released and closed after
    the test."""
    served = []

    def serve(**options):
        component = Gated()
        served.append((switchboard.serve(component, schema=os.path.join(schemas, "echo.xsd"), handle_sigterm=False,
                                         **options), component))
        return served[-1]
    yield serve
    for server, component in served:
        component.gate.set()
        server.close()


def test_a_cancel_message_drops_its_callers_held_call(gated):
    """An anonymous caller of a server without authorization cancels its own call: 204, and when the
    operation ends (a Python operation cannot be interrupted) its connection closes without the
    answer. A second call under the same id from the same caller, made while the first ran, was
    never registered: it is answered. The server serves on, and a cancel after the end finds no
    call: it is kept (202) for a call of that id still to come."""
    server, component = gated()
    first = held_divide(server, component)
    second = held_divide(server, component)
    assert cancel(server).status_code == 204
    component.gate.set()
    assert isinstance(first(), requests.ConnectionError), "the cancelled call's answer is not delivered"
    assert answered(second())
    assert cancel(server).status_code == 202, "the call ended: the cancel is kept"
    soap_echo(server)


def test_a_schema_without_its_documents_is_refused_with_the_command_that_makes_them(schemas, tmp_path):
    """serve needs the .proto derived from the schema: without it, the error names the command that
    writes it beside the schema, and nothing is served."""
    lone = tmp_path / "echo.xsd"
    lone.write_bytes(open(os.path.join(schemas, "echo.xsd"), "rb").read())
    with pytest.raises(FileNotFoundError) as refused:
        switchboard.serve(Gated(), schema=str(lone), handle_sigterm=False)
    assert "switchboard compile %s" % lone in str(refused.value) and "Echo.proto" in str(refused.value)


class Patient(ExampleEcho):
    """divide runs until its call is cancelled or the test lets it answer; ``entered`` counts the
    calls that reached it, ``saw_cancel`` is set when one saw its call cancelled."""

    def __init__(self):
        self.entered = threading.Semaphore(0)
        self.saw_cancel = threading.Event()
        self.release = threading.Event()
        self.by_caller = None   # whether the cancel it saw was its caller's (not its deadline's)

    def divide(self, dividend, divisor):
        self.entered.release()
        while not self.release.wait(0.005):
            if switchboard.is_cancelled():
                self.by_caller = switchboard.current_call().cancelled_by_caller
                self.saw_cancel.set()
                break
        return super().divide(dividend, divisor)


@pytest.fixture()
def patient(schemas):
    component = Patient()
    server = switchboard.serve(component, schema=os.path.join(schemas, "echo.xsd"), handle_sigterm=False)
    yield server, component
    component.release.set()
    server.close()


def raw_divide(server, timeout_ms=None):
    """A connection that has sent divide (with a call id, and a deadline of ``timeout_ms`` if given)
    over SOAP, and is held in the operation."""
    url = urllib.parse.urlsplit(server.soap_address)
    body = (DIVIDE % CALL_ID).encode()
    if timeout_ms is not None:
        body = body.replace(b"</e:Header>", b'<sb:deadline xmlns:sb="urn:switchboard:soap" timeout-ms="%d"/></e:Header>'
                            % timeout_ms)
    s = socket.create_connection((url.hostname, url.port), timeout=60)
    s.sendall(("POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: text/xml; charset=UTF-8\r\nContent-Length: %d\r\n\r\n"
               % (url.path, url.hostname, url.port, len(body))).encode() + body)
    return s


def await_looks(server, more):
    target = server.client_watch.looks + more
    deadline = time.monotonic() + 60
    while server.client_watch.looks < target:
        assert time.monotonic() < deadline, "the running call's client was never looked for"
        time.sleep(0.02)


def test_a_client_that_closes_its_connection_while_its_soap_call_runs_cancels_it(patient):
    """HTTP/1.1 gives no other sign of a client gone: the server looks at the connection of a call
    that has run a second, and its end cancels the call (the operation sees it cancelled). The server
    serves on."""
    server, component = patient
    s = raw_divide(server)
    assert component.entered.acquire(timeout=30), "the call reaches the operation"
    s.close()
    assert component.saw_cancel.wait(60), "the operation ran on after its client left"
    assert server.client_watch.gone == 1
    soap_echo(server)


def test_a_client_gone_with_its_calls_deadline_nearer_than_the_next_look_leaves_the_call_to_its_deadline(patient):
    """A caller that gives up at its deadline closes its connection a moment before the server's
    own deadline, which the request's time on the way makes later: the look that finds it gone with
    the deadline nearer than the next look leaves the call to its deadline, so the operation and the
    calls it makes see it past its deadline, not cancelled. The server is fresh, so its watch looks
    first when the call has run a second (then every half second): the client sends a deadline of
    1.3 s and hangs up as the call starts, and that look finds it gone with less than 0.3 s left."""
    server, component = patient
    s = raw_divide(server, timeout_ms=1300)
    assert component.entered.acquire(timeout=30), "the call reaches the operation"
    s.close()
    assert component.saw_cancel.wait(60), "the call never ended"
    assert component.by_caller is False, "the call was cancelled before its deadline"
    assert server.client_watch.gone == server.client_watch.left_to_deadline
    soap_echo(server)


def test_a_client_that_waits_gets_its_soap_answer_however_long_the_call_runs(patient):
    """Looked at while its call runs, a client still there is answered, and its connection serves
    the next request."""
    server, component = patient
    with raw_divide(server) as s:
        assert component.entered.acquire(timeout=30), "the call reaches the operation"
        await_looks(server, 2)
        component.release.set()
        answer = http.client.HTTPResponse(s)
        answer.begin()
        assert (answer.status, b"<quotient>3</quotient>" in answer.read()) == (200, True)
        assert not component.saw_cancel.is_set() and server.client_watch.gone == 0
    soap_echo(server)


def test_a_cancel_that_finds_its_callers_connections_all_busy_still_drops_its_call(gated):
    """The one connection the server allows the caller's address runs the held call: a cancel, on a
    connection of its own, is still served (204) there, where any other request is answered 503
    (not run, try again) and the connection closes after it."""
    server, component = gated(max_connections_per_address=1)
    first = held_divide(server, component)
    assert cancel(server).status_code == 204, "the cancel over the limit reached its call"
    other = requests.post(server.soap_address, data=DIVIDE % ("beef0000" * 4), timeout=30,
                          headers={"Content-Type": "text/xml; charset=UTF-8"})
    assert other.status_code == 503 and other.headers.get("Retry-After") == "1", other.status_code
    assert other.headers.get(BUSY_HEADER), "the 503 says the request did not run"
    client = _transport.SoapTransport(server.iface, server.codec, server.soap_address)
    op = server.iface.operations["divide"]
    with pytest.raises(TransportError) as refused:
        client.call(op, op.request(dividend=7, divisor=2), "beef0001" * 4, 30)
    assert refused.value.delivery == TransportError.NOT_DELIVERED and "did not run" in str(refused.value), refused.value
    component.gate.set()
    assert isinstance(first(), requests.ConnectionError), "the cancelled call's answer is not delivered"
    assert not component.entered.acquire(blocking=False), "the call over the limit did not run"
    soap_echo(server)


def test_a_503_without_the_busy_header_may_have_run(gated):
    """A proxy's 503 may follow a request it forwarded: only Switchboard's own says "not run"."""
    server, _ = gated()
    proxy = socket.create_server(("127.0.0.1", 0))

    def answer():
        conn, _ = proxy.accept()
        with conn:
            got = b""
            while b"Envelope>" not in got:   # the request's end
                chunk = conn.recv(8192)
                if not chunk:
                    break
                got += chunk
            conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n"
                         b"Retry-After: 1\r\n\r\n")
    answering = threading.Thread(target=answer, daemon=True)
    answering.start()
    try:
        client = _transport.SoapTransport(server.iface, server.codec,
                                          "http://127.0.0.1:%d/services/Echo" % proxy.getsockname()[1])
        op = server.iface.operations["divide"]
        with pytest.raises(TransportError) as failed:
            client.call(op, op.request(dividend=7, divisor=2), "beef0002" * 4, 30)
        assert failed.value.delivery == TransportError.MAY_HAVE_RUN, failed.value
        answering.join(30)
    finally:
        proxy.close()


def test_connections_over_the_limit_that_send_nothing_are_few_at_a_time_and_all_closed(gated):
    """Those kept for a request (at most MAX_REFUSED_ANSWERING) that send nothing in time are
    answered 503 with the busy header before they close, as the Java server answers them, so that
    a client that sends on one later reads that its call did not run; the rest close at once."""
    server, component = gated(max_connections_per_address=1)
    first = held_divide(server, component)
    silent = [idle_connection(server.soap_address, "127.0.0.1") for _ in range(_limits.MAX_REFUSED_ANSWERING + 8)]
    limits = server.limits
    until(lambda: limits.refused >= len(silent), "every newcomer refused")
    assert limits.refused_answering() <= _limits.MAX_REFUSED_ANSWERING
    busy = 0
    for s in silent:
        got = read_to_end(s)
        assert got is not None, "a silent connection over the limit is closed"
        if got:
            assert got.startswith(b"HTTP/1.1 503 ") and b"Retry-After: 1" in got, got
            assert (BUSY_HEADER + ": ").encode() in got, got
            busy += 1
        s.close()
    assert 1 <= busy <= _limits.MAX_REFUSED_ANSWERING, busy
    until(lambda: limits.refused_answering() == 0, "no connection over the limit left")
    component.gate.set()
    assert answered(first())


def read_to_end(s, seconds=30):
    """What the server sent until it closed the connection (reset or not), or None if it did not
    close it within ``seconds``."""
    deadline = time.monotonic() + seconds
    got = b""
    try:
        while True:
            s.settimeout(max(0.001, deadline - time.monotonic()))
            chunk = s.recv(65536)
            if not chunk:
                return got
            got += chunk
    except ConnectionResetError:
        return got
    except socket.timeout:
        return None


def test_a_call_cancelled_while_it_waits_for_a_worker_does_not_run(gated):
    """With one worker, busy with a held call, a second call waits for it; cancelled meanwhile (204),
    it never reaches the operation, and its connection closes without an answer."""
    server, component = gated(workers=1)
    first = held_divide(server, component, call_id="first-call")
    waiting = []
    second = threading.Thread(target=lambda: waiting.append(_post_divide(server, "second-call")), daemon=True)
    second.start()
    until(lambda: server.soap_calls.under_way("ANONYMOUS", "second-call"), "the second call waits for the worker")
    assert cancel(server, "second-call").status_code == 204
    component.gate.set()
    assert answered(first())
    second.join(60)
    assert isinstance(waiting[0], requests.ConnectionError), "the cancelled call's answer is not delivered"
    assert not component.entered.acquire(timeout=0), "the cancelled call never reached the operation"
    assert server.calls == {"soap divide": 1}


def _post_divide(server, call_id):
    try:
        return divide(server, call_id)
    except requests.RequestException as e:
        return e


def test_a_cancel_naming_no_call_of_its_caller_finds_nothing(gated):
    """202 (kept) for an id that is not running, 404 for a malformed one and for a cancel of a
    running call only; the held call is answered."""
    server, component = gated()
    held = held_divide(server, component)
    r = cancel(server, "0123456789abcdef" * 2)
    assert (r.status_code, r.content) == (202, b"")
    r = cancel(server, "0123456789abcdef" * 2 + "a", headers={RUNNING_ONLY_HEADER: "true"})
    assert (r.status_code, r.content) == (404, b""), "a cancel of a running call only is not kept"
    for call_id in ("two words", "x" * 129):
        r = cancel(server, call_id)
        assert (r.status_code, r.content) == (404, b""), call_id
    component.gate.set()
    assert answered(held())


def test_a_cancel_from_another_identity_finds_nothing(gated, keys, verifier):  # noqa: F811
    """Alice's call, its id named by Bob's token, by a token that does not verify and by no token:
    Bob's and the anonymous cancel are kept for their own callers (202), the other one is not (404),
    and Alice gets her answer; then her own cancel stops her next call."""
    server, component = gated(jwt=verifier)
    alice = keys.token("alice")
    held = held_divide(server, component, token=alice)
    for who, token, status in (("bob", keys.token("bob"), 202), ("another key", keys.hostile()["another key"], 404),
                               ("anonymous", None, 202)):
        r = cancel(server, token=token)
        assert (r.status_code, r.content) == (status, b""), who
    component.gate.set()
    assert answered(held())
    component.gate.clear()
    held = held_divide(server, component, token=alice)
    assert cancel(server, token=alice).status_code == 204
    component.gate.set()
    assert isinstance(held(), requests.ConnectionError)


def test_a_cancel_before_its_call_keeps_that_call_from_running_once(gated):
    """A cancel that overtakes its call's request is kept (202): the call that follows under that id
    from that caller does not run and is refused as ``cancelled``; the kept cancel is used up, so the
    next call under the id runs."""
    server, component = gated()
    component.gate.set()
    assert cancel(server).status_code == 202
    r = divide(server)
    assert cancelled_early(r), r.content
    assert not component.entered.acquire(blocking=False), "the cancelled call did not reach the operation"
    assert server.calls.get("soap divide", 0) == 0
    assert answered(divide(server)), "the cancel was used up"
    assert server.calls["soap divide"] == 1


def test_another_identitys_early_cancel_leaves_this_call_alone(gated, keys, verifier):  # noqa: F811
    """Bob's cancel of an id before Alice's call under it is kept for Bob: Alice's call runs, and
    Bob's own call under that id is the one refused."""
    server, component = gated(jwt=verifier)
    component.gate.set()
    alice, bob = keys.token("alice"), keys.token("bob")
    assert cancel(server, token=bob).status_code == 202
    assert answered(divide(server, token=alice)), "alice's call ran"
    assert cancelled_early(divide(server, token=bob))


def test_a_flood_of_early_cancels_keeps_only_its_callers_share(gated, keys, verifier):  # noqa: F811
    """200 early cancels from one identity keep its 64 newest; another identity's kept cancel outlives
    the flood and still stops its call."""
    server, component = gated(jwt=verifier)
    component.gate.set()
    alice = keys.token("alice")
    assert cancel(server, token=alice).status_code == 202
    with requests.Session() as session:
        for i in range(200):
            assert cancel(server, "flood-%d" % i, session=session).status_code == 202
    assert server.soap_calls.early.kept() == 64 + 1
    assert answered(divide(server, call_id="flood-0")), "the flood's oldest went first"
    assert cancelled_early(divide(server, call_id="flood-199")), "its newest stay"
    assert cancelled_early(divide(server, token=alice)), "alice's cancel outlived the flood"


def test_early_cancels_expire_and_are_bounded_in_all():
    """On a clock moved by hand: a kept cancel is gone once its time has passed; past the whole bound
    the identity keeping the most gives up its oldest, never the smallest share."""
    now = [0.0]
    early = _Shares(seconds=30, per_identity=4, in_all=10, clock=lambda: now[0])
    early.add("alice", "a")
    now[0] = 30
    early.add("alice", "b")
    now[0] = 30.001
    assert not early.take("alice", "a"), "past its 30 s"
    assert early.take("alice", "b") and not early.take("alice", "b"), "used up once"
    early.add("alice", "a")
    for who in ("bob", "carol", "dave"):
        for i in range(4):
            early.add(who, str(i))
    assert early.kept() == 10 and early.kept("alice") == 1
    assert early.take("alice", "a"), "the smallest share kept its cancel"


class _CountedIteration(dict):
    """A dict that counts how often all of it is walked."""
    walks = 0

    def __iter__(self):
        _CountedIteration.walks += 1
        return super().__iter__()


def test_a_full_memory_of_many_callers_finds_the_largest_share_without_walking_every_caller():
    """20,000 callers with one entry each fill the memory; each new caller's entry then evicts one.
    The largest share is found from the entries' counts, not by looking at every caller per entry,
    which under the server's lock would cost each call a walk of every caller it remembers."""
    callers = 20_000
    shares = _Shares(seconds=300, per_identity=10, in_all=callers, clock=lambda: 0.0)
    shares._shares = _CountedIteration()
    for i in range(callers):
        shares.add("caller-%d" % i, "k")
    shares.add("heavy", "1")
    shares.add("heavy", "2")   # the largest share from now on: it gives up its entries first
    for i in range(callers):
        shares.add("new-%d" % i, "k")
    assert _CountedIteration.walks == 0, "every caller walked %d times" % _CountedIteration.walks
    assert shares.kept() == callers and shares.kept("heavy") == 0, "the largest share went first"
    assert shares.get("caller-0", "k") is None, "then, among equal shares, the oldest caller's"
    assert shares.get("new-%d" % (callers - 1), "k") is True


def test_shares_that_shrink_and_grow_are_ranked_by_what_they_hold_now():
    shares = _Shares(seconds=300, per_identity=10, in_all=5, clock=lambda: 0.0)
    for key in "abc":
        shares.add("alice", key)
    shares.add("bob", "a")
    shares.add("bob", "b")
    assert shares.take("alice", "a") and shares.take("alice", "b")   # alice 1, bob 2
    shares.add("carol", "a")
    shares.add("carol", "b")   # 5 in all
    shares.add("dave", "a")   # 6: bob, the first to hold 2, gives up his oldest
    assert shares.get("bob", "a") is None and shares.get("bob", "b") is True
    assert shares.kept() == 5 and shares.kept("alice") == 1
    shares.add("dave", "b")   # 6: carol and dave hold 2; carol, there first, gives up her oldest
    assert shares.get("carol", "a") is None and shares.kept("carol") == 1


def test_a_cancel_messages_body_is_read_within_the_limit(gated):
    """A cancel with a body leaves its connection serving the next request; one over the size limit is
    refused as any request over it is."""
    server, _ = gated(max_message_bytes=10_000)
    address = urllib.parse.urlsplit(server.soap_address)
    path = address.path
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    try:
        connection.request("POST", path, body=b"x" * 100, headers={CANCEL_HEADER: CALL_ID})
        r = connection.getresponse()
        assert (r.status, r.read()) == (202, b"")
        connection.request("POST", path, body=ECHO, headers={"Content-Type": "text/xml; charset=UTF-8"})
        r = connection.getresponse()
        assert r.status == 200 and b"<values>1.5 -0.0</values>" in r.read(), "the same connection serves on"
    finally:
        connection.close()
    r = requests.post(server.soap_address, data=b"x" * 20_000, headers={CANCEL_HEADER: CALL_ID}, timeout=30)
    assert r.status_code == 413 and b'reason="size-limit"' in r.content
