"""No downgrade from TLS to plain text: given an ``https://`` registry, the Python client never
takes a plain-text endpoint of an entry (``grpc://``, ``http://``), as the Java client's
ProtocolSuite; an entry that offers only plain text is refused with the reason, one that offers
both is called over its TLS endpoints. The entries are bound by hand, so that the plain-text
endpoints lead to a live server that counts what reaches it."""

import os
import re
import uuid

import pytest

import switchboard
from conftest import bits, setting
from switchboard._client import usable_endpoints
from switchboard._registry import Entry, RegistryClient


def entry(*endpoints):
    return Entry({"name": "E", "instanceId": "i-1",
                  "endpoints": {"item": [{"protocol": p, "address": a} for p, a in endpoints]}})


def test_the_rule():
    plain = entry(("grpc", "grpc://h:1/E"), ("soap", "http://h:2/E"))
    both = entry(("grpc", "grpc://h:1/E"), ("soap", "http://h:2/E"), ("grpc", "grpcs://h:3/E"),
                 ("soap", "https://h:4/E"))
    with pytest.raises(switchboard.NoCommonProtocol, match=r"refusing a downgrade to plain text: E i-1 offers no TLS "
                       r"endpoint for soap \(refused: grpc://h:1/E, http://h:2/E\) and the registry is https://"):
        usable_endpoints(plain, ("grpc", "soap"), True)
    assert usable_endpoints(both, ("grpc", "soap"), True)[0] == {"grpc": "grpcs://h:3/E", "soap": "https://h:4/E"}
    # a protected SOAP endpoint alone forbids plain text beside it, whatever the registry (the Java rule)
    mixed = entry(("grpc", "grpc://h:1/E"), ("soap", "https://h:4/E"))
    assert usable_endpoints(mixed, ("grpc", "soap"), False)[0] == {"soap": "https://h:4/E"}
    # tcp alike: tcp:// is plain text, tcps:// is TLS
    lean = entry(("tcp", "tcp://h:5/E?unix=/tmp/sb-tcp-1/tcp.sock&host=0"), ("tcp", "tcps://h:6/E"),
                 ("soap", "https://h:4/E"))
    assert usable_endpoints(lean, ("tcp", "soap"), True)[0] == {"tcp": "tcps://h:6/E", "soap": "https://h:4/E"}
    assert usable_endpoints(lean, ("tcp", "soap"), True)[1] == ["tcp://h:5/E?unix=/tmp/sb-tcp-1/tcp.sock&host=0"]
    # a plain-text registry and entry: plain text is what there is
    assert usable_endpoints(plain, ("grpc", "soap"), False)[0] == {"grpc": "grpc://h:1/E", "soap": "http://h:2/E"}


class Echo:
    def echoDoubles(self, values):
        return values


@pytest.fixture(scope="module")
def tls():
    d = setting("SWITCHBOARD_TEST_TLS")
    files = {n: os.path.join(d, n) for n in ("client.p12", "server.p12", "trust.p12", "password")}
    return {"client": switchboard.Tls(keystore=files["client.p12"], truststore=files["trust.p12"],
                                      password_file=files["password"]),
            "server": switchboard.Tls(keystore=files["server.p12"], truststore=files["trust.p12"],
                                      password_file=files["password"])}


@pytest.fixture(scope="module")
def tls_registry():
    return setting("SWITCHBOARD_TEST_TLS_REGISTRY")


@pytest.fixture(scope="module")
def servers(schemas, tls):
    schema = os.path.join(schemas, "echo.xsd")
    plain = switchboard.serve(Echo(), schema=schema, handle_sigterm=False)
    protected = switchboard.serve(Echo(), schema=schema, tls=tls["server"], handle_sigterm=False)
    yield plain, protected
    plain.close()
    protected.close()


def bind(registry_url, tls, secret, schemas, name, endpoints):
    client = RegistryClient(registry_url, tls=tls)
    with open(os.path.join(schemas, "echo.xsd"), encoding="utf-8") as f:
        xsd = f.read()
    with open(os.path.join(schemas, "Echo.proto"), encoding="utf-8") as f:
        proto = f.read()
    e = client.entry_dict(name, str(uuid.uuid4()), endpoints, xsd, proto, None, 60, [])
    client.bind(e, secret)
    return lambda: client.unbind(name, e["instanceId"], secret)


def test_an_entry_with_only_plain_text_endpoints_is_refused(tls_registry, tls, secret, schemas, servers):
    plain, _ = servers
    assert tls_registry.startswith("https://")
    unbind = bind(tls_registry, tls["client"], secret, schemas, "PyPlainOnly", list(plain.endpoints.items()))
    try:
        with switchboard.connect(tls_registry, tls=tls["client"], watch=False) as board:
            with pytest.raises(switchboard.NoCommonProtocol, match="refusing a downgrade to plain text"):
                board.lookup("PyPlainOnly")
        assert plain.calls == {}, "nothing was sent in plain text"
    finally:
        unbind()


def test_an_entry_with_both_is_called_over_tls(tls_registry, tls, secret, schemas, servers):
    plain, protected = servers
    # plain text first, as an attacker who can write entries would put it
    endpoints = list(plain.endpoints.items()) + list(protected.endpoints.items())
    unbind = bind(tls_registry, tls["client"], secret, schemas, "PyBoth", endpoints)
    before = sum(protected.calls.values())
    try:
        with switchboard.connect(tls_registry, tls=tls["client"], watch=False) as board:
            echo = board.lookup("PyBoth")
            for protocol in ("grpc", "soap"):
                assert bits(echo.echoDoubles(values=[1.5, -0.0], protocol=protocol)) == bits([1.5, -0.0])
                assert echo.last_call.address == protected.endpoints[protocol]
            for _ in range(20):   # whatever the policy picks
                echo.echoDoubles(values=[2.0] * 500)
        assert plain.calls == {}
        assert sum(protected.calls.values()) - before == 22
    finally:
        unbind()


def test_a_plain_text_grpc_endpoint_beside_tls_soap_is_never_taken(tls_registry, tls, secret, schemas, servers):
    plain, protected = servers
    endpoints = [("grpc", plain.endpoints["grpc"]), ("soap", protected.endpoints["soap"])]
    unbind = bind(tls_registry, tls["client"], secret, schemas, "PyTlsSoapOnly", endpoints)
    before = dict(protected.calls)
    try:
        with switchboard.connect(tls_registry, tls=tls["client"], watch=False) as board:
            echo = board.lookup("PyTlsSoapOnly")
            with pytest.raises(switchboard.NoCommonProtocol,
                               match=re.escape("refused as a downgrade to plain text: " + plain.endpoints["grpc"])):
                echo.echoDoubles(values=[1.0], protocol="grpc")
            for _ in range(10):   # large requests, which the policy would send over gRPC if it could
                assert echo.echoDoubles(values=[3.0] * 5000) == [3.0] * 5000
                assert echo.last_call.protocol == "soap"
        assert plain.calls == {}
        after = dict(protected.calls)
        assert after.get("soap echoDoubles", 0) - before.get("soap echoDoubles", 0) == 10
        assert after.get("grpc echoDoubles", 0) == before.get("grpc echoDoubles", 0)
    finally:
        unbind()
