"""Draining between Python servers and the Python client, as between Java ones (DrainTest): a
stopping server refuses new calls as draining on every protocol while it answers the call under way,
and the client takes a refused call to another replica over the same protocol, never to SOAP on the
draining server; with no other replica the caller gets switchboard.Draining."""

import os
import sys
import threading

import pytest

import switchboard
from conftest import bits, until

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts", "python"))
from echo_component import Echo  # noqa: E402  the example component's operations

PROTOCOLS = ("tcp", "grpc", "soap")
VALUES = [1.5, -0.0, float("nan"), float("-inf")]


class Held(Echo):
    """``divide`` waits until released: the call under way while its server drains."""

    def __init__(self):
        self.entered, self.release = threading.Event(), threading.Event()

    def divide(self, dividend, divisor):
        self.entered.set()
        assert self.release.wait(60), "the held call was never released"
        return super().divide(dividend, divisor)


def _serve(schemas, registry_url, secret, obj, name):
    return switchboard.serve(obj, schema=os.path.join(schemas, "echo.xsd"), registry=registry_url, name=name,
                             secret=secret, handle_sigterm=False)


class _Draining:
    """A server closing in a thread of its own, held open by one call under way on it: whichever of
    ``servers`` (each serving a Held) the held call reaches."""

    def __init__(self, servers, helds, registry_url, name):
        self.helds = helds
        self.holder_board = switchboard.connect(registry_url, watch=False)
        holder = self.holder_board.lookup(name)
        self.answer = {}
        self.holding = threading.Thread(target=self._hold, args=(holder,), name="held-call")
        self.holding.start()
        until(lambda: any(h.entered.is_set() for h in helds), "the held call reaches a server")
        self.server = servers[[h.entered.is_set() for h in helds].index(True)]
        self.unbound = []
        self.closing = threading.Thread(target=lambda: self.unbound.append(self.server.close()), name="closing")
        self.closing.start()
        until(lambda: not self.server.serving, "the server starts draining")

    def _hold(self, holder):
        try:
            self.answer["value"] = holder.divide(dividend=9, divisor=3, protocol="grpc")
        except BaseException as e:   # raised again by end()
            self.answer["error"] = e

    def release(self):
        for h in self.helds:
            h.release.set()

    def end(self):
        """Releases the held call: the drain waited for it, so it is answered whole, and close()
        returns having unbound the entry."""
        assert self.closing.is_alive(), "close() waits for the call under way"
        self.release()
        self.closing.join(60)
        assert not self.closing.is_alive(), "close() did not return once the call under way ended"
        self.holding.join(60)
        self.holder_board.close()
        if "error" in self.answer:
            raise self.answer["error"]
        answer = self.answer["value"]
        assert (answer.quotient, answer.remainder, self.unbound) == (3, 0, [1])


def _look_up(registry_url, name, clients):
    """Adds a client per protocol pinned and one ``adaptive`` to ``clients``, each looking both
    replicas up before the drain unbinds one: not watching, they still hold its entry afterwards, as
    clients that have not heard yet do."""
    for protocol in PROTOCOLS + (None,):
        records = []
        board = switchboard.connect(registry_url, watch=False, listener=records.append)
        clients.append((protocol, records, board, board.lookup(name)))
        assert len(clients[-1][3].entries) == 2


def _call_twice(clients):
    """Replicas in turn: one of each client's two calls meets the draining one first."""
    for protocol, records, board, echo in clients:
        for _ in range(2):
            assert bits(echo.echoDoubles(values=VALUES, protocol=protocol)) == bits(VALUES)


def test_a_draining_replica_sends_each_call_to_the_other_over_the_same_protocol(schemas, registry_url, secret):
    helds = [Held(), Held()]
    servers = [_serve(schemas, registry_url, secret, h, "PyDrain") for h in helds]
    drain, clients = None, []
    try:
        _look_up(registry_url, "PyDrain", clients)
        drain = _Draining(servers, helds, registry_url, "PyDrain")
        draining = drain.server
        other = servers[1 - servers.index(draining)]
        _call_twice(clients)
        for protocol, records, board, echo in clients:
            on_draining = [r for r in records if r.address in draining.endpoints.values()]
            assert len(on_draining) == 1, records
            refused = on_draining[0]
            assert refused.error.startswith("Draining: ") and refused.protocol == (protocol or refused.protocol)
            moved = records[records.index(refused) + 1]
            assert (moved.call_id, moved.protocol, moved.error) == (refused.call_id, refused.protocol, None)
            assert moved.address in other.endpoints.values()
            assert not any(r.fallback for r in records), "no fallback to SOAP on the draining server"
        assert draining.calls == {"grpc divide": 1}, "only the call under way ran on the draining server"
        assert sum(other.calls.values()) == 8
        drain.end()
    finally:
        if drain is not None:
            drain.release()
        for c in clients:
            c[2].close()
        for s in servers:
            s.close()


def test_with_every_replica_draining_the_caller_gets_draining_on_every_protocol(schemas, registry_url, secret):
    held = Held()
    server = _serve(schemas, registry_url, secret, held, "PyDrainAlone")
    drain = None
    try:
        records = []
        with switchboard.connect(registry_url, watch=False, listener=records.append) as board:
            echo = board.lookup("PyDrainAlone")   # before the drain unbinds it
            drain = _Draining([server], [held], registry_url, "PyDrainAlone")
            for protocol in PROTOCOLS + (None,):
                with pytest.raises(switchboard.Draining) as raised:
                    echo.echoDoubles(values=VALUES, protocol=protocol)
                assert raised.value.delivery == switchboard.TransportError.NOT_DELIVERED
                assert switchboard.Draining.TEXT in str(raised.value)
        assert len(records) == 4 and not any(r.fallback for r in records), records
        assert [r.protocol for r in records[:3]] == list(PROTOCOLS)
        assert server.calls == {"grpc divide": 1}
        drain.end()
    finally:
        if drain is not None:
            drain.release()
        server.close()


def test_a_draining_java_replica_sends_each_call_to_the_other_over_the_same_protocol(registry_url):
    """EchoDrain has two Java replicas; EchoDrainControl.empty() starts one of them draining with a call
    held on it (PythonPackageTest's JavaDrain, which checks afterwards that only that call ran there
    and these eight on the other). The Java servers' draining refusals, on every protocol, send the
    Python client to the other replica as the Python servers' do."""
    clients = []
    try:
        _look_up(registry_url, "EchoDrain", clients)
        with switchboard.connect(registry_url, watch=False) as control:
            control.lookup("EchoDrainControl").empty(protocol="grpc")
        _call_twice(clients)
        draining = set()
        for protocol, records, board, echo in clients:
            refused = [r for r in records if r.error is not None]
            assert len(refused) == 1 and refused[0].error.startswith("Draining: "), records
            moved = records[records.index(refused[0]) + 1]
            assert (moved.call_id, moved.protocol, moved.error) == (refused[0].call_id, refused[0].protocol, None)
            assert not any(r.fallback for r in records), "no fallback to SOAP on the draining server"
            draining.add(refused[0].address.split("/")[2].split("?")[0])
            assert moved.address.split("/")[2] not in draining
        assert len(draining) == 3, "one replica, refusing over tcp, gRPC and SOAP: %s" % draining
    finally:
        for c in clients:
            c[2].close()
