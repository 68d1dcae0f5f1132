"""The Python server on an IPv6 address (``serve(host="::1")``): its endpoints name the host in
brackets, the Python client calls it over tcp, gRPC and SOAP with exact values, each call names its
caller as the Java servers do (``[::1]:port``), and one IPv6 address is held to its share of each
listener as an IPv4 one is. On every interface (``0.0.0.0``, ``::``) it publishes a reachable
address, or the one ``advertise=`` names, and is called through it."""

import math
import os
import socket

import pytest

import switchboard
from conftest import bits
from test_limits import closed_by_server, recording_callers, still_open, until

VALUES = [-0.0, math.inf, -math.inf, 5e-324, math.nan]   # a NaN's payload does not cross SOAP's xsd:double


class Echo:
    def echoDoubles(self, values):
        return values


def port_of(address, host="[::1]"):
    rest = address.split("://", 1)[1].split("/", 1)[0]
    assert rest.startswith(host + ":"), address
    return int(rest.rsplit(":", 1)[1])


def test_a_server_on_the_ipv6_loopback_is_called_over_every_protocol(schemas, registry_url, secret, board,
                                                                      monkeypatch):
    for protocol in ("TCP", "GRPC"):   # over IPv6, not over the server's Unix sockets on this host
        monkeypatch.setenv("SWITCHBOARD_%s_UNIX" % protocol, "false")
    server = switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url,
                               name="PyIpv6", secret=secret, host="::1", handle_sigterm=False)
    callers = recording_callers(server)
    try:
        assert sorted(server.endpoints) == ["grpc", "soap", "tcp"]
        for address in server.endpoints.values():
            port_of(address)
        echo = board.lookup("PyIpv6")
        for protocol in ("tcp", "grpc", "soap"):
            assert bits(echo.echoDoubles(values=VALUES, protocol=protocol)) == bits(VALUES), protocol
        assert server.calls == {"tcp echoDoubles": 1, "grpc echoDoubles": 1, "soap echoDoubles": 1}
        assert len(callers) == 3 and all(c.startswith("[::1]:") for c in callers), callers
    finally:
        server.close()


@pytest.mark.parametrize("listener", ["tcp", "grpc", "soap"])
def test_idle_connections_from_one_ipv6_address_are_held_to_its_share(schemas, listener):
    server = switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), host="::1", handle_sigterm=False,
                               max_connections=64, max_connections_per_address=4)
    limits = {"tcp": lambda: server.tcp.limits, "grpc": lambda: server.grpc_limits, "soap": lambda: server.limits}[listener]()
    flood = []
    try:
        port = port_of(server.endpoints[listener])
        for _ in range(20):
            flood.append(socket.create_connection(("::1", port), timeout=30))
        until(lambda: limits.evicted >= 16, "each connection over the address's share displaces its oldest")
        assert limits.count("::1") == 4 and limits.refused == 0
        assert all(closed_by_server(s, 5) for s in flood[:16]), "the flood's own oldest connections are closed"
        assert all(still_open(s) for s in flood[16:])
    finally:
        for s in flood:
            s.close()
        server.close()


@pytest.mark.parametrize("host, advertise", [("0.0.0.0", None), ("::", "localhost")])
def test_a_server_on_every_interface_publishes_an_address_it_is_called_through(schemas, registry_url, secret, board,
                                                                               monkeypatch, host, advertise):
    for protocol in ("TCP", "GRPC"):   # through the published address, not the server's Unix sockets
        monkeypatch.setenv("SWITCHBOARD_%s_UNIX" % protocol, "false")
    name = "PyEveryInterface" + ("Advertised" if advertise else "")
    server = switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url,
                               name=name, secret=secret, host=host, advertise=advertise, handle_sigterm=False)
    try:
        published = advertise or server.advertised
        assert published not in ("0.0.0.0", "::"), "a wildcard reaches no other host"
        for address in server.endpoints.values():
            port_of(address, published)
        echo = board.lookup(name)
        for protocol in ("tcp", "grpc", "soap"):
            assert bits(echo.echoDoubles(values=VALUES, protocol=protocol)) == bits(VALUES), protocol
        assert server.calls == {"tcp echoDoubles": 1, "grpc echoDoubles": 1, "soap echoDoubles": 1}
    finally:
        server.close()
