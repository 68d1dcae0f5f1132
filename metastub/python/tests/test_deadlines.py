"""Deadlines and cancels across Python hops, as the Java ServerCallContext carries them: an operation
sees the time its caller left it (``switchboard.time_left()``) over tcp, gRPC and SOAP (the Python
SOAP client sends the ``sb:deadline`` header); a call the operation makes gets what is left, never
its own longer timeout; the caller's cancel reaches the call the operation makes; a call whose
deadline passed before it could start does not run; a malformed ``sb:deadline`` is refused; and a
failsafe fallback within an operation's call, or within a ``switchboard.deadline`` block, gets only
what is left of that deadline."""

import os
import sys
import threading

import pytest
import requests

import switchboard

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts", "python"))
from echo_component import Echo  # noqa: E402  the example component's operations

PROTOCOLS = ["tcp", "grpc", "soap"]
# what a hop's deadline may exceed its caller's by: tcp and SOAP send whole milliseconds rounded
# down, but gRPC's server reads grpc-timeout against its core's own clock, seen 8 ms later here
WIRE_SLACK = 0.05


class Hop(Echo):
    """A served hop. ``echoDoubles`` notes the time its call had left and, with ``onward`` set (a
    component on the hop's own board), calls the next hop from the operation; ``divide`` does too,
    or else waits for its call's cancel."""

    def __init__(self):
        self.seen = []
        self.onward = None
        self.onward_protocol = None
        self.entered = 0
        self.started = threading.Event()
        self.cancelled = threading.Event()
        self.wake = threading.Event()   # the cancel, or the test's end: no operation outlives the test

    def echoDoubles(self, values):
        self.seen.append(switchboard.time_left())
        if self.onward is not None:
            return self.onward.echoDoubles(values=values, protocol=self.onward_protocol)
        return values

    def divide(self, dividend, divisor):
        self.entered += 1
        if self.onward is not None:
            return self.onward.divide(dividend=dividend, divisor=divisor, protocol=self.onward_protocol)
        drop = switchboard.current_call().on_cancel(self.heard_cancel)
        try:
            self.started.set()
            self.wake.wait(30)
        finally:
            drop()
        return super().divide(dividend, divisor)

    def heard_cancel(self):
        self.cancelled.set()
        self.wake.set()


@pytest.fixture(scope="module")
def hops(schemas, registry_url, secret):
    """Hops A and B, each bound in the registry, A with a board of its own to call B."""
    a, b = Hop(), Hop()
    schema = os.path.join(schemas, "echo.xsd")
    servers = [switchboard.serve(hop, schema=schema, registry=registry_url, name=name, secret=secret)
               for hop, name in ((a, "PyHopA"), (b, "PyHopB"))]
    own = switchboard.connect(registry_url)
    a.onward = own.lookup("PyHopB")
    yield a, b, servers[1]
    for hop in (a, b):
        hop.wake.set()
    own.close()
    for server in servers:
        server.close()


@pytest.fixture()
def fresh(hops):
    a, b, _ = hops
    for hop in (a, b):
        hop.seen.clear()
        hop.entered = 0
        for event in (hop.started, hop.cancelled, hop.wake):
            event.clear()
    return a, b


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_operation_sees_the_time_its_caller_left_it(fresh, board, protocol):
    _, b = fresh
    assert board.lookup("PyHopB").echoDoubles(values=[1.5], protocol=protocol, timeout=5) == [1.5]
    left = b.seen[-1]
    assert left is not None and 0 < left <= 5 + WIRE_SLACK, left


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_call_an_operation_makes_gets_what_is_left_not_its_own_timeout(fresh, board, protocol):
    a, b = fresh
    a.onward_protocol = protocol
    assert board.lookup("PyHopA").echoDoubles(values=[-0.0], protocol="tcp", timeout=3) == [-0.0]
    # A's board would give the call its own 60 s
    assert a.seen[-1] is not None and b.seen[-1] is not None, (a.seen, b.seen)
    assert 0 < b.seen[-1] <= a.seen[-1] + WIRE_SLACK and a.seen[-1] <= 3, (a.seen, b.seen)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_callers_cancel_reaches_the_call_an_operation_makes(fresh, board, protocol):
    a, b = fresh
    a.onward_protocol = protocol
    call = board.lookup("PyHopA").divide_async(dividend=7, divisor=2, protocol="tcp", timeout=60)
    assert b.started.wait(30), "the call reached B"
    assert not b.cancelled.is_set()
    assert call.cancel()
    assert b.cancelled.wait(30), "B's call, made by A's operation over %s, was cancelled with A's" % protocol


def test_a_call_whose_deadline_passed_before_it_could_start_does_not_run(fresh, hops):
    _, b = fresh
    address = hops[2].soap_address
    envelope = ('<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Header><sb:deadline '
                'xmlns:sb="urn:switchboard:soap" timeout-ms="%s"/></e:Header><e:Body><divide '
                'xmlns="urn:switchboard:echo"><dividend>7</dividend><divisor>2</divisor></divide></e:Body>'
                '</e:Envelope>')
    r = requests.post(address, data=envelope % "0", headers={"Content-Type": "text/xml; charset=UTF-8"}, timeout=30)
    assert r.status_code == 500 and b'reason="deadline-exceeded"' in r.content, r.content
    assert b.entered == 0, "refused before the operation"
    # negative, not a number, past 2^31-1, an exponent, empty, a thousand digits, digits not ASCII
    for malformed in ("-1", "abc", "2147483648", "1e3", "", "9" * 1000, "\u0661\u0662\u0663"):
        r = requests.post(address, data=(envelope % malformed).encode("utf-8"),
                          headers={"Content-Type": "text/xml; charset=UTF-8"}, timeout=30)
        assert r.status_code == 500 and b'reason="malformed"' in r.content and b"sb:deadline" in r.content, malformed
    assert b.entered == 0


class Held(Echo):
    """echoDoubles holds its call until the test lets it go."""

    def __init__(self):
        self.wake = threading.Event()

    def echoDoubles(self, values):
        self.wake.wait(30)
        return values


class Relay(Echo):
    """echoDoubles calls ``onward`` by ``policy``, keeping what that call raised."""

    def __init__(self, onward):
        self.onward, self.failure, self.done = onward, None, threading.Event()

    def echoDoubles(self, values):
        try:
            return self.onward.echoDoubles(values=values, policy="fixed:tcp")
        except BaseException as e:
            self.failure = e
            raise
        finally:
            self.done.set()


def test_a_fallback_within_an_operations_call_gets_only_what_is_left_of_its_deadline(schemas, registry_url, secret):
    """The operation's call to a held component runs over tcp into the deadline the operation's
    caller left it (3 s; the attempt's own timeout is the board's 60 s): no time is left for the
    failsafe's SOAP attempt, which would otherwise have had 3 s of its own. The caller reaches
    the operation over SOAP, which sends no cancel when its own timeout passes (tcp's cancel frame
    would cancel the operation's call before its deadline is seen)."""
    held = Held()
    schema = os.path.join(schemas, "echo.xsd")
    servers = [switchboard.serve(held, schema=schema, registry=registry_url, name="PyHeld", secret=secret)]
    records = []
    own = switchboard.connect(registry_url, listener=records.append)
    relay = Relay(own.lookup("PyHeld"))
    servers.append(switchboard.serve(relay, schema=schema, registry=registry_url, name="PyRelay", secret=secret))
    try:
        with switchboard.connect(registry_url) as board:
            # the relay's fault and the caller's own timeout come at the same deadline: either may be first
            with pytest.raises((switchboard.TransportError, switchboard.RemoteError)):
                board.lookup("PyRelay").echoDoubles(values=[1.0], protocol="soap", timeout=3)
        assert relay.done.wait(30)
        assert [r.protocol for r in records] == ["tcp"], [(r.protocol, r.reason, r.error) for r in records]
        assert isinstance(relay.failure, switchboard.TransportError), repr(relay.failure)
        assert relay.failure.delivery == switchboard.TransportError.MAY_HAVE_RUN, relay.failure
        assert "left echoDoubles passed before its attempt over soap could start" in str(relay.failure), relay.failure
    finally:
        held.wake.set()
        own.close()
        for server in servers:
            server.close()


def test_a_deadline_block_bounds_every_attempt_of_the_calls_in_it(schemas, registry_url, secret):
    """``with switchboard.deadline(1)``: the tcp attempt (the board's timeout is 60 s) ends at the
    block's deadline, and the failsafe's SOAP attempt gets no time of its own."""
    held = Held()
    server = switchboard.serve(held, schema=os.path.join(schemas, "echo.xsd"), registry=registry_url,
                               name="PyHeldScope", secret=secret)
    records = []
    try:
        with switchboard.connect(registry_url, listener=records.append) as board:
            echo = board.lookup("PyHeldScope")
            with switchboard.deadline(1):
                with pytest.raises(switchboard.TransportError) as late:
                    echo.echoDoubles(values=[1.0], policy="fixed:tcp")
        assert [r.protocol for r in records] == ["tcp"], [(r.protocol, r.reason, r.error) for r in records]
        assert late.value.delivery == switchboard.TransportError.MAY_HAVE_RUN, late.value
        assert "left echoDoubles passed before its attempt over soap could start" in str(late.value), late.value
    finally:
        held.wake.set()
        server.close()


def test_a_deadline_block_nested_in_another_keeps_the_nearer_deadline():
    with switchboard.deadline(1) as outer:
        assert 0 < switchboard.time_left() <= 1
        with switchboard.deadline(60) as inner:
            assert switchboard.current_call() is inner and inner.deadline == outer.deadline
            outer.cancel()
            assert switchboard.is_cancelled(), "the outer block's cancel reaches the inner one"
        assert switchboard.current_call() is outer
    assert switchboard.current_call() is None


def test_wrap_takes_the_call_to_another_thread():
    seen, bare = [], []
    with switchboard.deadline(5) as scope:
        helped = threading.Thread(target=scope.wrap(lambda: seen.append((switchboard.current_call(),
                                                                          switchboard.time_left()))))
        alone = threading.Thread(target=lambda: bare.append(switchboard.current_call()))
        for t in (helped, alone):
            t.start()
            t.join(30)
    assert seen[0][0] is scope and 0 < seen[0][1] <= 5, seen
    assert bare == [None], "a thread of its own starts outside the call"


def test_outside_an_operation_there_is_no_call(board):
    assert switchboard.current_call() is None
    assert switchboard.time_left() is None
    assert not switchboard.is_cancelled()
