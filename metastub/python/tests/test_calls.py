"""Calling the Java echo component knowing only the registry: protocols pinned per call, exact
values both ways, numpy arrays, linked values, declared faults as typed exceptions, asyncio, the
policies' choices and the reasons the Java meta-stub gives, and the failsafe."""

import asyncio
import math
import struct

import numpy
import pytest

import switchboard
from conftest import bits

EDGE = [1.5, -0.0, 0.0, math.inf, -math.inf, 5e-324, -5e-324, 1e-310, 2.2250738585072014e-308,
        1.7976931348623157e308, 0.1, -123456.789e-300]


@pytest.mark.parametrize("protocol", ["grpc", "soap"])
def test_doubles_bit_for_bit_over_each_protocol(echo, protocol):
    assert bits(echo.echoDoubles(values=EDGE, protocol=protocol)) == bits(EDGE)
    record = echo.last_call
    assert (record.protocol, record.reason, record.fallback, record.error) == (protocol, "pinned on call", False, None)
    assert echo.echoDoubles(values=[], protocol=protocol) == []
    assert echo.echoDoubles(values=None, protocol=protocol) is None


def test_nan_payloads_over_grpc_and_the_one_nan_over_soap(echo):
    nan = struct.unpack("<d", struct.pack("<Q", 0x7FF0000000000ABC))[0]
    assert bits(echo.echoDoubles(values=[nan], protocol="grpc")) == ["7ff0000000000abc"]
    assert math.isnan(echo.echoDoubles(values=[nan], protocol="soap")[0])   # XML has one NaN


@pytest.mark.parametrize("protocol", ["grpc", "soap"])
def test_a_numpy_array_of_200000_doubles_comes_back_equal(echo, protocol):
    data = numpy.random.default_rng(3).standard_normal(200_000)
    data[:3] = [-0.0, math.inf, 5e-324]
    back = echo.echoDoubles(values=data, protocol=protocol)
    assert isinstance(back, numpy.ndarray) and back.dtype == numpy.float64
    assert numpy.array_equal(back.view(numpy.uint64), data.view(numpy.uint64))


@pytest.mark.parametrize("protocol", ["grpc", "soap"])
def test_linked_values_heterogeneous_lists_and_tensors(echo, protocol):
    entry = echo.types.LinkEntry
    a = entry(llong=2 ** 62, sshort=-5, iint=7, ffloat=0.25, ddouble=-0.0, sstring="h\u00e9llo")
    b = entry(llong=1, sshort=1, iint=1, ffloat=1.0, ddouble=1.0, sstring="", nextLink=a)
    a.nextLink = b
    head = echo.echoList(head=a, protocol=protocol)
    assert head.nextLink.nextLink is head and head.sstring == "h\u00e9llo" and head.nextLink.sstring == ""
    assert echo.echoList(head=None, protocol=protocol) is None
    tensor = numpy.arange(12.0).reshape(3, 4)
    back = echo.echoMixed(list=[1.5, -2, True, "x", [3.0, []], tensor], protocol=protocol)
    assert back[:5] == [1.5, -2, True, "x", [3.0, []]] and numpy.array_equal(back[5], tensor)
    assert numpy.array_equal(echo.echoTensor(tensor=tensor, protocol=protocol), tensor)


@pytest.mark.parametrize("protocol", ["grpc", "soap"])
def test_a_declared_fault_is_a_typed_exception(echo, protocol):
    with pytest.raises(echo.divideFault) as fault:
        echo.divide(dividend=7, divisor=0, protocol=protocol)
    assert isinstance(fault.value, switchboard.DeclaredFault)
    assert (fault.value.reason, fault.value.dividend) == ("division by zero", 7)
    answer = echo.divide(dividend=-7, divisor=2, protocol=protocol)
    assert (answer.quotient, answer.remainder) == (-3, -1)   # Java's division, truncated toward zero


def test_unknown_arguments_and_unknown_protocols_are_refused(echo):
    with pytest.raises(TypeError, match="unexpected keyword arguments vals"):
        echo.echoDoubles(vals=[1.0])
    with pytest.raises(switchboard.NoCommonProtocol):
        echo.echoDoubles(values=[1.0], protocol="quic")


def test_async_calls(echo):
    async def main():
        futures = [echo.echoDoubles_async(values=[float(i)]) for i in range(8)]
        return await asyncio.gather(*futures)
    assert asyncio.run(main()) == [[float(i)] for i in range(8)]
    assert echo.empty_async(protocol="soap").result(timeout=30) is None   # outside a loop: a concurrent future


def test_policies_and_their_reasons(board, registry_url):
    """Without tcp, as a client that speaks gRPC and SOAP only (test_tcp: the policies with tcp)."""
    with switchboard.connect(registry_url, policy="size", protocols=("grpc", "soap")) as sized:
        echo = sized.lookup("Echo")
        echo.echoDoubles(values=[1.0])
        assert (echo.last_call.protocol, echo.last_call.reason) == ("soap", "size (stub policy)")
        echo.echoDoubles(values=[1.0] * 1000)
        assert (echo.last_call.protocol, echo.last_call.reason) == ("grpc", "size (stub policy)")
        echo.echoDoubles(values=[1.0], policy="fixed:grpc")
        assert (echo.last_call.protocol, echo.last_call.reason) == ("grpc", "fixed:grpc (call policy)")
        echo.echoDoubles(values=[1.0] * 1000, policy="size:100000")
        assert (echo.last_call.protocol, echo.last_call.reason) == ("soap", "size:100000 (call policy)")
    echo = board.lookup("Echo", operation_policies={"empty": "first-common"})
    echo.empty()
    assert (echo.last_call.protocol, echo.last_call.reason) == ("tcp", "first-common (operation policy)")
    with switchboard.connect(registry_url, protocols=("grpc", "soap")) as lean_less:
        echo = lean_less.lookup("Echo")
        echo.echoDoubles(values=list(range(10_000)))
        assert (echo.last_call.protocol, echo.last_call.reason) == ("grpc", "adaptive (stub policy)")
    with switchboard.connect(registry_url, protocols=["soap"]) as soap_only:
        e = soap_only.lookup("Echo")
        e.empty()
        assert e.last_call.protocol == "soap"
        with pytest.raises(switchboard.NoCommonProtocol):
            e.echoDoubles(values=[1.0], policy="fixed:grpc")
    with pytest.raises(ValueError, match="unknown selection policy 'fastest'"):
        switchboard.connect(registry_url, policy="fastest")


def test_the_failsafe_repeats_over_soap_once(registry_url):
    """EchoGrpcDown is bound with a gRPC endpoint that no longer listens: the call goes to gRPC by
    the policy, is not delivered, and runs over SOAP once (PythonPackageTest checks the Java
    component ran it once)."""
    records = []
    with switchboard.connect(registry_url, listener=records.append) as board:
        echo = board.lookup("EchoGrpcDown")
        assert bits(echo.echoDoubles(values=[1.5, -0.0])) == bits([1.5, -0.0])
    assert [(r.protocol, r.reason) for r in records] == [
        ("grpc", "adaptive (stub policy)"),
        ("soap", "fallback from grpc (the request never reached the operation)")]
    assert records[0].error is not None and records[1].error is None and records[1].fallback
    assert records[0].call_id == records[1].call_id and len(records[0].call_id) == 32
    assert echo.last_call is records[1]


def test_the_java_server_runs_a_repeated_call_id_once(board, registry_url):
    """The call id travels as the Java meta-stub sends it (sb-call-id over gRPC, the sb:call header
    over SOAP), and a Java server remembers the calls of operations not marked idempotent:
    simulateWithProgress sent twice with one id, over each protocol, runs once and both get its
    outcome (here its declared fault: this simulator has no registry to call back through);
    tcp carries it as request_id. PythonPackageTest counts the runs."""
    same_host = board.lookup("SimulatorDedup")
    with switchboard.connect(registry_url, watch=False, unix_sockets=False) as over_tcp:
        simulator = over_tcp.lookup("SimulatorDedup")   # tcp over TCP: anonymous, as over gRPC and SOAP
        reasons = _run_under_one_id(simulator)
    assert "call-ids" in simulator.entries[0].features
    assert reasons[0] == reasons[1] == reasons[2] and "without a registry" in reasons[0]
    # over the Unix socket the caller is its OS user, but the server remembers such a caller's calls
    # as anonymous (the failsafe repeats a call that failed over the socket over SOAP, where it
    # arrives anonymous): the same request under the id gets the first outcome without running
    with pytest.raises(same_host.simulateWithProgressFault) as fault:
        same_host.simulateWithProgress(parameters=[0.5, 2.0, 1.0, 1.5, 0.3], initial=[2.0, 1.0, 0.0, 0.0],
                                       times=[0.0, 1.0], progress="nobody", reports=1, protocol="tcp",
                                       call_id="feedc0de" * 4)
    assert fault.value.reason == reasons[0] and same_host.last_call.via == "unix"
    # another request under that id is still refused without running
    with pytest.raises(switchboard.Refused) as reuse:
        same_host.simulateWithProgress(parameters=[0.5, 2.0, 1.0, 1.5, 0.4], initial=[2.0, 1.0, 0.0, 0.0],
                                       times=[0.0, 1.0], progress="nobody", reports=1, protocol="tcp",
                                       call_id="feedc0de" * 4)
    assert reuse.value.reason == "call-id-reuse"


def _run_under_one_id(simulator):
    reasons = []
    for protocol in ("grpc", "tcp", "soap"):
        with pytest.raises(simulator.simulateWithProgressFault) as fault:
            simulator.simulateWithProgress(parameters=[0.5, 2.0, 1.0, 1.5, 0.3], initial=[2.0, 1.0, 0.0, 0.0],
                                           times=[0.0, 1.0], progress="nobody", reports=1, protocol=protocol,
                                           call_id="feedc0de" * 4)
        reasons.append(fault.value.reason)
    return reasons
