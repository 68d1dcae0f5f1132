"""Tracing across Python hops, as the Java tracing steps trace calls: with OpenTelemetry, a client span
per attempt and a server span per served call, one trace from the caller through a Python hop to the
next over tcp, gRPC and SOAP, named and attributed as the Java spans are; without it, a hop passes the
context it came with on to the calls its operation makes. The trace context is checked as the Java
``TraceContext`` checks it: a malformed one on any wire is ignored and the call runs."""

import os
import sys

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import switchboard
from switchboard import _trace

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts", "python"))
from echo_component import Echo  # noqa: E402  the example component's operations

PROTOCOLS = ["tcp", "grpc", "soap"]
PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
EXPORTER = InMemorySpanExporter()


class Hop(Echo):
    """``echoDoubles`` notes the trace context its call came with and, with ``onward`` set, calls the
    next hop from the operation over ``onward_protocol``."""

    def __init__(self):
        self.seen = []
        self.onward = None
        self.onward_protocol = None

    def echoDoubles(self, values):
        self.seen.append(switchboard.current_call().trace)
        if self.onward is not None:
            return self.onward.echoDoubles(values=values, protocol=self.onward_protocol)
        return values


def _unset_tracer_provider():
    """Puts OpenTelemetry's global tracer provider back to unset, as opentelemetry-test-utils'
    ``reset_trace_globals`` does (the API sets it once per process and offers no public undo):
    the modules after this one run without spans, as the rest of the suite was written for."""
    from opentelemetry.util._once import Once

    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace._TRACER_PROVIDER = None


@pytest.fixture(scope="module")
def hops(schemas, registry_url, secret):
    """Hops A and B, each bound in the registry, A with a board of its own to call B; the process's
    tracer provider records every span in memory until the module's end."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
    trace.set_tracer_provider(provider)
    a, b = Hop(), Hop()
    schema = os.path.join(schemas, "echo.xsd")
    servers = [switchboard.serve(hop, schema=schema, registry=registry_url, name=name, secret=secret)
               for hop, name in ((a, "PyTraceA"), (b, "PyTraceB"))]
    own = switchboard.connect(registry_url)
    a.onward = own.lookup("PyTraceB")
    yield a, b
    own.close()
    for server in servers:
        server.close()
    EXPORTER.shutdown()
    provider.shutdown()
    _unset_tracer_provider()
    assert not _trace._spans(), "later modules make no spans"


@pytest.fixture()
def fresh(hops):
    for hop in hops:
        hop.seen.clear()
    EXPORTER.clear()
    return hops


def only(spans, parent_id, kind):
    """The one span of ``kind`` whose parent is ``parent_id``."""
    found = [s for s in spans if s.kind == kind and s.parent is not None and s.parent.span_id == parent_id]
    assert len(found) == 1, (kind, parent_id, [(s.name, s.kind, s.parent) for s in spans])
    return found[0]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_one_trace_from_the_caller_through_a_python_hop(fresh, board, protocol):
    a, b = fresh
    a.onward_protocol = protocol
    tracer = trace.get_tracer("test")
    with tracer.start_as_current_span("caller") as root:
        assert board.lookup("PyTraceA").echoDoubles(values=[-0.0, 1.5], protocol="tcp") == [-0.0, 1.5]
    spans = EXPORTER.get_finished_spans()
    root_id = root.get_span_context().span_id
    to_a = only(spans, root_id, trace.SpanKind.CLIENT)
    in_a = only(spans, to_a.context.span_id, trace.SpanKind.SERVER)
    to_b = only(spans, in_a.context.span_id, trace.SpanKind.CLIENT)
    in_b = only(spans, to_b.context.span_id, trace.SpanKind.SERVER)
    for span in (to_a, in_a, to_b, in_b):
        assert span.context.trace_id == root.get_span_context().trace_id, span
        assert span.name == "Echo/echoDoubles"
        assert span.attributes["rpc.system"] == "switchboard" and span.attributes["rpc.service"] == "Echo"
        assert span.attributes["rpc.method"] == "echoDoubles"
    assert [s.attributes["switchboard.protocol"] for s in (to_a, in_a, to_b, in_b)] == ["tcp", "tcp", protocol, protocol]
    assert to_a.attributes["switchboard.call_id"] == in_a.attributes["switchboard.call_id"]
    assert to_b.attributes["switchboard.call_id"] == in_b.attributes["switchboard.call_id"]
    assert to_a.attributes["switchboard.attempt"] == 0 and to_a.attributes["switchboard.fallback"] is False
    assert "pinned" in to_a.attributes["switchboard.reason"]
    # what B's operation was handed is the context of A's client span
    assert b.seen[-1].traceparent == "00-%032x-%016x-%02x" % (root.get_span_context().trace_id, to_b.context.span_id,
                                                            to_b.context.trace_flags)


def test_a_failed_attempt_and_its_fallback_are_sibling_spans(fresh, board, schemas, registry_url, secret):
    """A gRPC attempt to a listener that is gone fails (span status ERROR), and the failsafe's SOAP
    attempt that follows is a sibling under the caller's span, with ``fallback`` true."""
    server = switchboard.serve(Hop(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url,
                               name="PyTraceGone", secret=secret, tcp=False)
    try:
        echo = board.lookup("PyTraceGone")
        server._stop_grpc(0)   # the listener goes; the entry still names it
        with trace.get_tracer("test").start_as_current_span("caller") as root:
            assert echo.echoDoubles(values=[2.5], policy="fixed:grpc") == [2.5]
    finally:
        server.close()
    attempts = sorted((s for s in EXPORTER.get_finished_spans() if s.kind == trace.SpanKind.CLIENT
                       and s.parent is not None and s.parent.span_id == root.get_span_context().span_id),
                      key=lambda s: s.attributes["switchboard.attempt"])
    assert [(s.attributes["switchboard.protocol"], s.attributes["switchboard.fallback"]) for s in attempts] \
        == [("grpc", False), ("soap", True)], [(s.name, dict(s.attributes)) for s in attempts]
    assert attempts[0].status.status_code == trace.StatusCode.ERROR
    assert attempts[0].attributes["error.type"] == "TransportError"
    assert attempts[1].status.status_code == trace.StatusCode.UNSET


@pytest.mark.parametrize("without", ["the API", "a tracer provider"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_hop_without_opentelemetry_passes_the_context_it_came_with_on(fresh, board, protocol, without, monkeypatch):
    a, b = fresh
    if without == "the API":
        monkeypatch.setattr(_trace, "_otel", None)
    else:   # the API installed, no provider set: OpenTelemetry's proxy, which makes no spans of its own
        monkeypatch.setattr(trace, "get_tracer_provider", lambda: trace.ProxyTracerProvider())
    a.onward_protocol = protocol
    stub = board.lookup("PyTraceA")
    sent = _trace.Trace(PARENT, "vendor=x")
    response = send(stub, "tcp", sent)
    assert list(response.values) == [4.0]
    assert a.seen[-1] == sent and b.seen[-1] == sent, (a.seen, b.seen)
    assert EXPORTER.get_finished_spans() == ()


MALFORMED = [
    PARENT.upper(),                                                   # hex in upper case
    "00-00000000000000000000000000000000-00f067aa0ba902b7-01",        # an all-zero trace id
    "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",        # an all-zero span id
    "ff" + PARENT[2:],                                                # version ff
    PARENT + "-extra",                                                # version 00 with more fields
    "01-" + PARENT[3:] + "-" + "x" * 200,                             # a later version, over 128 characters
    PARENT[:54],                                                      # cut short
    PARENT.replace("4bf9", "4bf\u0669"),                              # a digit that is not ASCII
]


def printable(value):
    return all(0x20 <= ord(c) <= 0x7E for c in value)


# gRPC metadata cannot carry what is not printable ASCII: grpcio refuses to send it
@pytest.mark.parametrize("protocol,malformed", [(p, m) for p in PROTOCOLS for m in MALFORMED
                                                if p != "grpc" or printable(m)])
def test_a_malformed_traceparent_on_the_wire_is_ignored_and_the_call_runs(fresh, board, protocol, malformed):
    _, b = fresh
    response = send(board.lookup("PyTraceB"), protocol, _trace.Trace(malformed, "vendor=x"))
    assert list(response.values) == [4.0]
    assert b.seen[-1] is None, b.seen
    served = [s for s in EXPORTER.get_finished_spans() if s.kind == trace.SpanKind.SERVER]
    assert len(served) == 1 and served[0].parent is None, served   # a trace of its own


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_tracestate_too_long_or_not_printable_is_dropped_and_the_traceparent_kept(fresh, board, protocol):
    _, b = fresh
    stub = board.lookup("PyTraceB")
    for state in ["k=" + "v" * 600] + (["k=v\x7f"] if protocol != "grpc" else []):
        send(stub, protocol, _trace.Trace(PARENT, state))
        assert b.seen[-1] == _trace.Trace(PARENT, None), b.seen
    send(stub, protocol, _trace.Trace(PARENT, "k=v"))
    assert b.seen[-1] == _trace.Trace(PARENT, "k=v")


def send(stub, protocol, sent):
    """One call of ``echoDoubles([4.0])`` over ``protocol`` with the trace context ``sent`` on the
    wire as it is, unchecked: the client's own transport, below its checks."""
    op = stub.iface.operations["echoDoubles"]
    request = op.request()
    request.values.append(4.0)
    replica = stub._replicas[0]
    response, _ = replica.transport(protocol).call(op, request, None, 30, trace=sent)
    return response


@pytest.mark.parametrize("traceparent,tracestate,expected", [
    (PARENT, None, _trace.Trace(PARENT, None)),
    (PARENT, "a=1,b=2", _trace.Trace(PARENT, "a=1,b=2")),
    (PARENT, "", _trace.Trace(PARENT, None)),
    ("01-" + PARENT[3:] + "-future", None, _trace.Trace("01-" + PARENT[3:] + "-future", None)),
    ("01-" + PARENT[3:] + "x", None, None),     # a later version's fields follow a dash
    (None, "a=1", None),
    ("", None, None),
    (PARENT[:2] + "_" + PARENT[3:], None, None),
])
def test_the_trace_context_is_checked_as_the_java_trace_context_checks_it(traceparent, tracestate, expected):
    assert _trace.parse(traceparent, tracestate) == expected
