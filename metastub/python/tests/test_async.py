"""Async calls wait on no thread of their own: over tcp the connection's reader settles them by
correlation id, over gRPC grpcio's future() does; what follows a failed attempt runs as a blocking
call on the board's pool."""

import asyncio
import concurrent.futures
import math
import struct
import threading
import uuid

import pytest

import switchboard
from switchboard import _client, _tcp
from switchboard import _transport as _transport_module
from switchboard._schema import Interface
from switchboard._soap import SoapCodec
from conftest import bits, until
from ports import unused_port
from test_tcp import _answer, _CloseAfter, _ScriptedServer

CALLS = 200
# the threads 200 calls in flight may add: tcp's one reader per connection, and a thread grpcio
# may start for its callbacks; a thread per call (or a pool's 16) would be far more
MAX_EXTRA_THREADS = 2


@pytest.fixture()
def fresh_echo(registry_url):
    with switchboard.connect(registry_url) as board:
        echo = board.lookup("Echo")
        yield echo


def in_flight_threads(start_calls):
    """(threads before, the most seen while the calls settled, their answers), the calls started
    together in an event loop."""
    async def run():
        before, seen = threading.active_count(), []
        futures = start_calls()
        seen.append(threading.active_count())
        for f in futures:
            f.add_done_callback(lambda _: seen.append(threading.active_count()))
        return before, max(seen), await asyncio.gather(*futures)
    return asyncio.run(run())


def values(i):
    return [i + 0.5, -0.0, math.inf, struct.unpack(">d", struct.pack(">Q", 0x7FF8000000000000 + i + 1))[0]]


def test_two_hundred_async_tcp_calls_share_the_connection_reader(fresh_echo):
    echo = fresh_echo
    assert echo.echoDoubles(values=[1.0], protocol="tcp") == [1.0]   # the connection is open
    before, most, answers = in_flight_threads(
        lambda: [echo.echoDoubles_async(values=values(i), protocol="tcp") for i in range(CALLS)])
    assert most - before <= MAX_EXTRA_THREADS, (before, most)
    assert [bits(a) for a in answers] == [bits(values(i)) for i in range(CALLS)]
    assert echo.last_call.protocol == "tcp" and echo.last_call.succeeded


def test_two_hundred_async_grpc_calls_take_no_thread_each(fresh_echo):
    echo = fresh_echo
    assert echo.divide(dividend=7, divisor=2, protocol="grpc").quotient == 3   # the channel is up
    before, most, answers = in_flight_threads(
        lambda: [echo.divide_async(dividend=7 * i + 3, divisor=7, protocol="grpc") for i in range(CALLS)])
    assert most - before <= MAX_EXTRA_THREADS, (before, most)
    assert [(a.quotient, a.remainder) for a in answers] == [(i, 3) for i in range(CALLS)]
    assert echo.last_call.protocol == "grpc"


def test_async_calls_outside_an_event_loop_are_concurrent_futures(fresh_echo):
    echo = fresh_echo
    futures = [echo.echoDoubles_async(values=[float(i)], protocol="tcp") for i in range(20)]
    assert [f.result(60) for f in futures] == [[float(i)] for i in range(20)]
    with pytest.raises(echo.divideFault):
        echo.divide_async(dividend=1, divisor=0, protocol="tcp").result(60)
    with pytest.raises(TypeError):   # a bad argument fails the future, not the caller's thread
        echo.echoDoubles_async(nonsense=[1.0]).result(60)


def test_an_async_call_falls_back_from_a_dead_tcp_endpoint_to_soap(fresh_echo, secret, echo_proto):
    echo = fresh_echo
    soap = echo.entries[0].endpoint("soap")
    name = "PyAsyncDeadTcp" + uuid.uuid4().hex[:8]
    registry = echo._board.registry
    dead = unused_port()   # a port nobody listens on
    registry.bind(registry.entry_dict(name, "one", [("tcp", "tcp://127.0.0.1:%d/Echo" % dead), ("soap", soap)],
                                      None, echo_proto, None, 0, []), secret)
    try:
        stub = echo._board.lookup(name, policy="fixed:tcp")
        async def call():
            return await stub.echoDoubles_async(values=[2.5, -0.0])
        assert asyncio.run(call()) == [2.5, -0.0]
        assert stub.last_call.protocol == "soap" and stub.last_call.fallback, stub.last_call
        assert "the request never reached the operation" in stub.last_call.reason
    finally:
        registry.unbind(name, "one", secret)


def test_an_async_call_its_caller_cancels_sends_the_cancel_frame_and_does_not_fall_back(fresh_echo, secret,
                                                                                          echo_proto):
    echo = fresh_echo
    soap = echo.entries[0].endpoint("soap")
    name = "PyAsyncCancel" + uuid.uuid4().hex[:8]
    registry = echo._board.registry
    with _ScriptedServer(lambda meta, message: None) as server:   # never answers
        registry.bind(registry.entry_dict(name, "one", [("tcp", "tcp://127.0.0.1:%d/Echo" % server.port),
                                                        ("soap", soap)], None, echo_proto, None, 0, []), secret)
        try:
            stub = echo._board.lookup(name, policy="fixed:tcp")
            future = stub.empty_async()
            server.await_requests(1, timeout=30)
            assert future.cancel()
            request, cancel = server.await_requests(2, timeout=30)
            assert cancel.user_fields == {"sb-cancel": "1"} and cancel.correlation_id == request.correlation_id
            assert future.cancelled()
            assert stub.last_call is None or stub.last_call.protocol == "tcp", "no fallback to SOAP"
        finally:
            registry.unbind(name, "one", secret)


@pytest.mark.parametrize("protocol, operation", [("soap", "echoDoubles"), ("grpc", "echoDoubles"), ("grpc", "empty"),
                                                 ("tcp", "echoDoubles")])
def test_cancelling_an_async_call_under_way_cancels_its_operation_on_the_server(board, protocol, operation):
    """EchoHeld (PythonPackageTest) holds empty() and echoDoubles([-1]) until cancelled and answers
    echoDoubles([]) with how many held calls came in and how many were cancelled. Over SOAP the
    client sends the cancel message by call id, over gRPC it cancels the gRPC call (echoDoubles
    streams its parts on a pool thread, empty is unary), over tcp it sends the cancel frame; the
    Java side checks the counts again after the suite."""
    held = board.lookup("EchoHeld")

    def counts():
        return [int(v) for v in held.echoDoubles(values=[], protocol="grpc")]
    entered, cancelled = counts()
    future = held.echoDoubles_async(values=[-1.0], protocol=protocol) if operation == "echoDoubles" \
        else held.empty_async(protocol=protocol)
    until(lambda: counts()[0] == entered + 1, "the held call reaches the operation")
    assert future.cancel() and future.cancelled()
    until(lambda: counts()[1] == cancelled + 1, "the operation learns of the cancel")


@pytest.fixture(scope="module")
def ops(echo_proto):
    return Interface(echo_proto)


def _transport(server, ops):
    return _tcp.TcpTransport(ops, "tcp://127.0.0.1:%d/Echo" % server.port)


def test_an_async_call_past_its_deadline_fails_may_have_run_and_cancels(ops):
    with _ScriptedServer(lambda meta, message: None) as server:   # never answers
        transport = _transport(server, ops)
        op = ops.operations["empty"]
        try:
            future = transport.call_async(op, op.request(), "feedc0de" * 4, 0.3)
            with pytest.raises(switchboard.TransportError) as late:
                future.result(60)
            request, cancel = server.await_requests(2)
        finally:
            transport.close()
    assert late.value.delivery == "may-have-run" and "deadline" in str(late.value)
    assert cancel.user_fields == {"sb-cancel": "1"} and cancel.correlation_id == request.correlation_id


def test_a_connection_closed_under_async_calls_fails_each_may_have_run(ops):
    def script(meta, message):
        if len(seen) == 9:
            raise _CloseAfter(b"")
        seen.append(meta)
    seen = []
    with _ScriptedServer(script) as server:
        transport = _transport(server, ops)
        op = ops.operations["empty"]
        try:
            futures = [transport.call_async(op, op.request(), None, 60) for _ in range(10)]
            for f in futures:
                with pytest.raises(switchboard.TransportError) as failed:
                    f.result(60)
                assert failed.value.delivery == "may-have-run"
        finally:
            transport.close()


def test_async_and_blocking_calls_answered_out_of_order_each_get_their_own(ops):
    """Answers held until every call is in, then sent last first: the reader and a blocking
    caller hand the lead to each other, and every call gets the answer of its correlation id."""
    n = 30
    held, lock = [], threading.Lock()
    op = ops.operations["divide"]

    def script(meta, message):
        request = op.request.FromString(message)
        answer = _answer(meta, message=op.response(quotient=request.dividend, remainder=meta.correlation_id)
                         .SerializeToString())
        with lock:
            held.append(answer)
            if len(held) < n + 1:
                return None
            out, held[:] = b"".join(reversed(held)), []
        return out

    with _ScriptedServer(script) as server:
        transport = _transport(server, ops)
        try:
            futures = [transport.call_async(op, op.request(dividend=i, divisor=1), None, 60) for i in range(n)]
            blocking = []
            caller = threading.Thread(target=lambda: blocking.append(
                transport.call(op, op.request(dividend=-1, divisor=1), None, 60)))
            caller.start()
            answers = [f.result(60)[0] for f in futures]
            caller.join(60)
        finally:
            transport.close()
    assert [a.quotient for a in answers] == list(range(n))
    assert blocking[0][0].quotient == -1
    assert len({a.remainder for a in answers} | {blocking[0][0].remainder}) == n + 1


class _RecordingSession:
    """A requests session that records what is posted and answers nothing: a request it is sent
    fails the attempt, as a server gone away would."""

    def __init__(self):
        self.posted, self.cancel_sent = [], threading.Event()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def post(self, address, data=None, headers=None, timeout=None):
        self.posted.append((dict(headers or {}), data))
        if _transport_module.CANCEL_HEADER in (headers or {}):
            self.cancel_sent.set()
            return _Closable()
        raise RuntimeError("the request went out")


class _Closable:
    def close(self):
        pass


def test_a_cancel_that_lands_as_the_attempt_starts_sends_the_cancel_message_and_not_the_request(ops):
    """The caller cancels after the attempt checked its cancel and before the transport handed
    over its stop: the stop (the cancel message) runs, and the request is never posted."""
    transport = _transport_module.SoapTransport(ops, SoapCodec(ops, "urn:switchboard:echo"),
                                                "http://127.0.0.1:1/services/Echo")
    transport.session = session = _RecordingSession()
    transport._cancel_session = lambda: session   # the cancel message's session of its own
    cancel = _client._Cancel()
    cancel.check()   # the attempt's check: not cancelled yet
    cancel()         # the caller's cancel, before the transport hands over its stop
    op = ops.operations["echoDoubles"]
    with pytest.raises(concurrent.futures.CancelledError):
        transport.call(op, op.request(values=[1.0]), "feedc0de" * 4, 5, on_cancel=cancel.during)
    assert session.cancel_sent.wait(30), "the cancel message was not sent"
    assert [headers.get(_transport_module.CANCEL_HEADER) for headers, _ in session.posted] == ["feedc0de" * 4]
