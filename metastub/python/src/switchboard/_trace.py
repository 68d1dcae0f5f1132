"""The W3C trace context of a call, on the wire as the Java side carries it (tcp's ``user_fields``,
gRPC's metadata, SOAP's ``<sb:trace traceparent="..." tracestate="..."/>`` header, each under the
W3C names), and the spans of a Python hop.

With OpenTelemetry's API installed (``pip install 'switchboard[tracing]'``) and a tracer provider
set by the application, a served call is a ``SERVER`` span, child of the context it arrived with,
and current while the operation runs; each attempt of a call is a ``CLIENT`` span, whose context
goes on the wire; both named and attributed as the Java ``TracingInterceptor`` names them. Without
the API, a served call's context goes on unchanged with the calls its operation makes: the hop has
no span of its own, but the trace stays one. Values off the wire are checked as the Java
``TraceContext`` checks them; a malformed one is ignored and the call runs in no trace.
"""

import collections
import contextlib

TRACEPARENT = "traceparent"
TRACESTATE = "tracestate"
MAX_TRACEPARENT = 128   # version 00 has 55 characters; later versions may append fields within this
MAX_TRACESTATE = 512

RPC_SYSTEM = "switchboard"
_HEX = frozenset("0123456789abcdef")

try:   # optional: the hop's own spans
    from opentelemetry import propagate as _propagate
    from opentelemetry import trace as _otel
    # follows the provider the application sets, also when it sets one after this import
    _TRACER = _otel.get_tracer("switchboard")
except ImportError:   # without the API (the tests switch it off by setting _otel to None)
    _otel = _propagate = _TRACER = None


class Trace(collections.namedtuple("Trace", "traceparent tracestate")):
    """A checked trace context: ``traceparent`` always, ``tracestate`` or None."""

    def items(self):
        """(name, value) pairs to send: gRPC metadata, tcp user fields, SOAP attributes."""
        return [(TRACEPARENT, self.traceparent)] + ([(TRACESTATE, self.tracestate)] if self.tracestate else [])


def parse(traceparent, tracestate=None):
    """The context of these values, or None when ``traceparent`` is absent or malformed; a
    malformed or too long ``tracestate`` is left out."""
    if not _valid_parent(traceparent):
        return None
    return Trace(traceparent, tracestate if _valid_state(tracestate) else None)


def _valid_parent(s):
    if not isinstance(s, str) or not 55 <= len(s) <= MAX_TRACEPARENT:
        return False
    if s[2] != "-" or s[35] != "-" or s[52] != "-":
        return False
    if not all(c in _HEX for c in s[0:2] + s[3:35] + s[36:52] + s[53:55]):
        return False
    if s.startswith("ff") or s[3:35] == "0" * 32 or s[36:52] == "0" * 16:
        return False
    if s.startswith("00"):
        return len(s) == 55
    return len(s) == 55 or (s[55] == "-" and all(0x21 <= ord(c) <= 0x7E for c in s[55:]))


def _valid_state(s):
    return isinstance(s, str) and 0 < len(s) <= MAX_TRACESTATE and all(0x20 <= ord(c) <= 0x7E for c in s)


def _spans():
    """Whether this process makes spans: the API is installed and the application has set a tracer
    provider. Until then OpenTelemetry's proxy provider makes spans that record nothing and carry
    no context of their own, which every call would pay for and the served call's context, passed
    on as it came, does without."""
    return _otel is not None and not isinstance(_otel.get_tracer_provider(), _otel.ProxyTracerProvider)


def _attributes(service, method, protocol, call_id):
    attributes = {"rpc.system": RPC_SYSTEM, "rpc.service": service, "rpc.method": method,
                  "switchboard.protocol": protocol}
    if call_id:
        attributes["switchboard.call_id"] = call_id
    return attributes


@contextlib.contextmanager
def server_span(service, method, protocol, call_id, trace):
    """The span of a served call, current while its operation runs (nothing without OpenTelemetry).
    A failure marks it and goes on up."""
    if not _spans():
        yield
        return
    parent = _propagate.extract(dict(trace.items())) if trace is not None else None
    with _TRACER.start_as_current_span("%s/%s" % (service, method), context=parent, kind=_otel.SpanKind.SERVER,
                                         attributes=_attributes(service, method, protocol, call_id),
                                         record_exception=False) as span:
        try:
            yield
        except BaseException as e:
            _failed(span, e)
            raise


class Attempt:
    """One attempt of a call: its span (None without OpenTelemetry) and the context it sends."""

    __slots__ = ("span", "trace")

    def __init__(self, span, trace):
        self.span, self.trace = span, trace

    def end(self, failure=None):
        """The attempt is over: ``failure``, what it raised (a declared fault is an answer)."""
        if self.span is not None:
            if failure is not None:
                _failed(self.span, failure)
            self.span.end()


def attempt(service, method, protocol, call_id, number, reason, inherited):
    """Starts the span of one attempt (number ``number``, chosen for ``reason``), a child of the
    current span; without OpenTelemetry, the served call's context (``inherited``) goes on as it
    came. An attempt that is never made is never ended, and so never exported."""
    if not _spans():
        return Attempt(None, inherited)
    attributes = _attributes(service, method, protocol, call_id)
    attributes.update({"switchboard.attempt": number, "switchboard.fallback": reason.startswith("fallback"),
                       "switchboard.reason": reason})
    span = _TRACER.start_span("%s/%s" % (service, method), kind=_otel.SpanKind.CLIENT, attributes=attributes,
                              record_exception=False)
    if not span.get_span_context().is_valid:   # a provider that makes no spans (a no-op one set on purpose)
        return Attempt(None, inherited)
    carrier = {}
    _propagate.inject(carrier, context=_otel.set_span_in_context(span))
    sent = parse(carrier.get(TRACEPARENT), carrier.get(TRACESTATE))
    return Attempt(span, sent if sent is not None else inherited)


def _failed(span, e):
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("error.type", type(e).__name__)
    span.set_status(Status(StatusCode.ERROR))
