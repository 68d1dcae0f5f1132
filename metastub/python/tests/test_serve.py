"""A component served with switchboard.serve, called by the Python client: exact values, the hosting
guarantees (not-implemented faults, size limits, no DTDs, de-duplication by call id, health,
reflection, the lease, a refused bind) and the failsafe. PythonPackageTest adds the Java command
line calling the example component (scripts/python/echo_component.py) and its unbinding on SIGTERM."""

import os
import sys
import threading
import time

import grpc
import pytest
import requests

import switchboard
from conftest import bits


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
    """divide waits until the test lets it answer."""

    def __init__(self):
        self.gate = threading.Event()

    def divide(self, dividend, divisor):
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


def test_the_failsafe_repeats_a_call_that_may_have_run_when_the_server_remembers_call_ids(
        not_idempotent, registry_url, secret):
    """divide over gRPC outlives its deadline (the component waits until the client has given up on
    gRPC); the repeat over SOAP carries the same call id, waits for the first run and gets its answer."""
    component = Gated()
    server = switchboard.serve(component, schema=not_idempotent, registry=registry_url, name="PySlow", secret=secret)

    def on_attempt(record):
        if record.protocol == "grpc" and record.error:
            component.gate.set()
    try:
        with switchboard.connect(registry_url, listener=on_attempt) as board:
            echo = board.lookup("PySlow")
            answer = echo.divide(dividend=-7, divisor=2, policy="fixed:grpc", timeout=2)
            assert (answer.quotient, answer.remainder) == (-3, -1)
            assert echo.last_call.reason == "fallback from grpc (the server answers a repeated call id with the first result)"
        assert server.calls == {"grpc divide": 1}, "the repeat over SOAP did not run it again"
    finally:
        component.gate.set()
        server.close()


def test_health_and_reflection(served):
    target = served.grpc_address.split("://")[1].rsplit("/", 1)[0]
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
        server.grpc_server.stop(grace=0).wait()   # the gRPC endpoint goes down; the entry still names it
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
