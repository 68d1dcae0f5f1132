"""Serving a component written in Python over tcp, gRPC and SOAP, bound in a registry with a lease.

::

    class Echo:
        def echoDoubles(self, values):
            return values

    server = switchboard.serve(Echo(), schema="echo.xsd", registry=URL, name="PyEcho")
    server.wait()          # until close() or SIGTERM; both unbind

Each operation of the schema is the object's method of that name, called with the request's
fields as keyword arguments (the values as a caller gets them: lists, or numpy arrays with
``numpy=True``; records for structs; linked values with their cycles); what it returns is the
response (the value of a response's one field, or a dict or object with its fields). Raising
``switchboard.DeclaredFault("why", field=...)`` answers the operation's declared fault. An
operation the object lacks answers a "not implemented" fault, over gRPC ``UNIMPLEMENTED``.

What the Java ComponentServer guarantees and applies here too: requests are bounded
(``max_message_bytes``, 64 MiB by default, refused as ``size-limit``), XML has no DTD or entity,
values are exact or refused (``malformed``, naming the field), a call id seen before for an
operation not marked idempotent is answered with the first outcome without running again (the
entry says so: feature ``call-ids``; a repeat with another request is refused ``call-id-reuse``), a
SOAP cancel message (``Switchboard-Cancel: CALL-ID``) is answered 204 when its own identity's call
of that id runs, 202 when none does (kept, so that call does not run if it comes after its cancel)
and 404 for a malformed id or a token that does not verify, the gRPC
side offers ``grpc.health.v1`` and server reflection (``grpc.reflection.v1``, the component's
file descriptor), and the lease is renewed at a third of its length (bound again if the registry
lost the entry). ``registry`` may list several registries of one store (a list, or one string with
commas): the bind goes to the first that answers and is not repeated on another when it may have
reached one (the heartbeat binds again if the entry is missing), and each renewal goes to the first
that answers within one heartbeat period (see ``switchboard._registry``).

Each call runs in a ``switchboard.context.ServerCallContext`` with the deadline its caller sent:
an operation asks ``switchboard.time_left()`` and ``switchboard.is_cancelled()``, a call whose
deadline passed before it could start does not run (refused ``deadline-exceeded``), and the calls
an operation makes through a board get what is left and are cancelled with it.

``close()`` (and SIGTERM) drains as the Java ComponentServer does: it unbinds, answers for
``drain_quiet`` seconds (0 by default; the Java server's 1 s lets watching clients move away first),
then refuses new calls as draining on every protocol (gRPC ``UNAVAILABLE`` with the ``sb-draining``
trailer, a SOAP refusal of reason ``draining``, tcp error 3002: not delivered, so a client takes
the call to another replica) and waits up to ``drain_timeout`` seconds (30) for the calls under way
before it stops its listeners.

Strangers are expected (docs/python.md, "TLS, tokens and authorization"): ``authz=`` takes a
policy in gRPC's SDK authorization policy form (a file, read again when it changes, or a dict),
decided before each operation runs with the caller's principal from its verified bearer token
(``jwt=``, a ``switchboard.tokens.JwtVerifier``), else its client certificate, else anonymous; a
denial answers gRPC ``PERMISSION_DENIED``, a SOAP Fault ``sb:PermissionDenied`` and tcp ``ERPCAUTH``
(1004; the token travels in ``RpcMeta.authentication_data``).
Each listener bounds what one caller holds: ``max_connections`` (512) and
``max_connections_per_address`` (128) on SOAP, tcp and gRPC, the connection stalled longest making room; a
pool of ``workers`` (8) with a bounded queue and fewer calls per connection than workers on gRPC and
tcp (over it: tcp's ``EOVERCROWDED``); a tcp frame over 4 MiB answered ``ELIMIT`` and its connection
closed; connections silent for ``idle_seconds`` (60) closed. tcp is served on TCP and on a Unix
socket that clients on this host take (``_tcp_server``); with ``tls=`` over TLS (``tcps://``) on
TCP alone, as the Java server does.

``host`` (127.0.0.1) is where every listener listens, an IPv4 or IPv6 address: ``0.0.0.0`` or
``::`` (both families) listen on every interface and then publish this host's address toward its
default route, unless ``advertise=`` names the host or address the endpoints are to publish, as
the Java ``serve --advertise``.

The schema's derived documents come from the interface compiler: the typed ``.proto`` (needed)
and the WSDL (served at ``?wsdl`` when given), found beside the schema as ``<Name>.proto`` and
``<Name>.wsdl``, or in a Maven build's ``target/generated-resources``, or passed as ``proto=`` and
``wsdl=``."""

import collections
import contextlib
import functools
import glob
import hashlib
import io
import itertools
import logging
import math
import operator
import os
import re
import select
import signal
import socket
import ssl
import sys
import threading
import time
import uuid
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

from google.protobuf.descriptor import FieldDescriptor as F

from . import _address, _grpc_listener, _limits, _peer, _soap, _tcp, _trace, _values
from .context import DEADLINE_EXCEEDED, ServerCallContext, _entered, _left
from ._limits import ConnectionLimits
from ._schema import Interface
from .authz import authorizer
from .tokens import bearer
from ._transport import BUSY_HEADER, CANCEL_HEADER, PART_BYTES, RUNNING_ONLY_HEADER, parts
from .errors import DeclaredFault, Draining, PermissionDenied, Refused, SwitchboardError
from .tls import NO_LONGER_TRUSTED

DEFAULT_MAX_MESSAGE = 64 << 20
DEDUP_ENTRIES = 10_000
DEDUP_ENTRIES_PER_IDENTITY = 2_500   # one caller's share of the call-id memory: a flood evicts only its own
# the call ids a server accepts, as the Java servers' CallIds.wellFormed: hex, UUIDs, base64(url),
# readable ids; anything else is refused rather than remembered
_CALL_ID = re.compile(r"[A-Za-z0-9._:+/=-]{1,128}\Z")
CALL_ID_RULE = "a call id has 1 to 128 characters of A-Z a-z 0-9 - _ . : + / ="


def well_formed_call_id(call_id):
    """Whether ``call_id`` is one a server accepts (see CALL_ID_RULE); False for None."""
    return isinstance(call_id, str) and _CALL_ID.match(call_id) is not None

DEDUP_SECONDS = 600
# SOAP cancels that came before their calls, kept as the Java server keeps them (its default request timeout)
EARLY_CANCEL_SECONDS = 30
EARLY_CANCELS_PER_IDENTITY = 64
EARLY_CANCELS = 4096
CANCELLED_REASON = "cancelled"   # the refusal of a call its caller cancelled before it came
CALL_ID_REUSE = "call-id-reuse"   # the refusal of a call id used again for another request, as the Java servers'
DETAILS_KEY = "grpc-status-details-bin"
DENIAL_LOG_SECONDS = 60
LOG = logging.getLogger("switchboard.server")


_NAN = float("nan")
_FLOATING = (F.TYPE_DOUBLE, F.TYPE_FLOAT)


def _canonical_nans(message):
    """``message``, or a copy of it with every NaN made Python's one NaN: the bytes the call-id memory
    compares. XML carries one NaN, so a repeat over SOAP of a call whose first attempt kept a NaN's
    sign or payload bits (over gRPC or tcp) is the same request; every other value is compared exactly."""
    if not _holds_nan([message], message.DESCRIPTOR):
        return message
    copy = type(message)()
    copy.CopyFrom(message)
    _make_nans_canonical(copy)
    return copy


class _FloatPlan:
    """Where a message type's floats are: its float and double fields, single and repeated, and
    the fields of messages that may hold some, at any depth (the interfaces' messages have no maps)."""
    __slots__ = ("holds_floats", "single", "repeated", "messages")


_FLOAT_PLANS = {}   # by descriptor; a plan is put here only when it and the plans it uses are whole
_FLOAT_PLANS_LOCK = threading.Lock()


def _float_plan(descriptor):
    plan = _FLOAT_PLANS.get(descriptor)
    if plan is None:
        with _FLOAT_PLANS_LOCK:
            building = {}
            plan = _build_float_plan(descriptor, building)
            _FLOAT_PLANS.update(building)
    return plan


def _build_float_plan(descriptor, building):
    plan = _FLOAT_PLANS.get(descriptor) or building.get(descriptor)
    if plan is not None:
        return plan
    plan = building[descriptor] = _FloatPlan()   # first: a type may hold itself
    # while its fields are read, a type that holds itself counts as holding floats (it may, through them)
    plan.holds_floats, plan.single, plan.repeated, plan.messages = True, [], [], []
    for f in descriptor.fields:
        if f.type == F.TYPE_MESSAGE:
            if _build_float_plan(f.message_type, building).holds_floats:
                plan.messages.append((f.name, f.is_repeated, f.message_type))
        elif f.type in _FLOATING:
            (plan.repeated if f.is_repeated else plan.single).append(f.name)
    plan.holds_floats = bool(plan.single or plan.repeated or plan.messages)
    return plan


def _any_nan(values):
    # a NaN makes the sum NaN, and the sum is one pass in C; so do infinities of both signs, hence the second look
    return math.isnan(sum(values, 0.0)) and any(map(math.isnan, values))


def _holds_nan(messages, descriptor):
    """Whether any of ``messages``, all of one type, holds a NaN in a float or double field at any
    depth: field by field over all of them at once, so that a node table of 10^5 entries costs a few
    passes in C rather than a Python loop over its entries' fields."""
    plan = _float_plan(descriptor)
    if not plan.holds_floats or not messages:
        return False
    for name in plan.single:
        if _any_nan(list(map(operator.attrgetter(name), messages))):
            return True
    for name in plan.repeated:
        if any(map(_any_nan, map(operator.attrgetter(name), messages))):
            return True
    for name, repeated, kind in plan.messages:
        if repeated:
            children = list(itertools.chain.from_iterable(map(operator.attrgetter(name), messages)))
        else:
            children = list(map(operator.attrgetter(name), filter(operator.methodcaller("HasField", name), messages)))
        if _holds_nan(children, kind):
            return True
    return False


def _make_nans_canonical(message):
    """Replaces each NaN in ``message``, at any depth, by Python's NaN."""
    for field, value in message.ListFields():
        if field.type == F.TYPE_MESSAGE:
            for m in (value if field.is_repeated else (value,)):
                _make_nans_canonical(m)
        elif field.type in _FLOATING:
            if not field.is_repeated:
                if math.isnan(value):
                    setattr(message, field.name, _NAN)
            elif _any_nan(value):
                value[:] = [_NAN if math.isnan(x) else x for x in value]


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def component_name(schema_text):
    m = re.search(r"<sb:component\b[^>]*\bname=\"([^\"]+)\"", schema_text) or \
        re.search(r"<(?:\w+:)?component\s[^>]*\bname=\"([^\"]+)\"", schema_text)
    if not m:
        raise ValueError("the schema names no component (<sb:component name=\"...\"> in its appinfo)")
    return m.group(1)


def find_document(schema_path, name, extension):
    """The derived document beside the schema or in the module's generated resources, or None."""
    here = os.path.dirname(os.path.abspath(schema_path))
    candidates = [os.path.join(here, name + extension)]
    module = os.path.abspath(os.path.join(here, "..", "..", ".."))   # src/main/xsd -> the module
    candidates += sorted(glob.glob(os.path.join(module, "target", "generated-resources", "switchboard", "**",
                                                name + extension), recursive=True))
    return next((c for c in candidates if os.path.isfile(c)), None)


_ANONYMOUS_CALLER = _peer.Peer(None, _peer.ANONYMOUS, None)


class _Run:
    """Runs operations on the object, once per call id, and counts what it ran."""

    def __init__(self, obj, iface, types, use_numpy, clock=time.monotonic):
        self.obj, self.iface, self.types, self.use_numpy = obj, iface, types, use_numpy
        self.lock = threading.Lock()
        self.calls = collections.Counter()
        # caller -> (operation, call id) -> Future of the outcome; one caller's flood of fresh ids
        # evicts its own calls, never another's
        self.results = _Shares(DEDUP_SECONDS, DEDUP_ENTRIES_PER_IDENTITY, DEDUP_ENTRIES, clock)
        self.draining = False
        self.under_way = 0
        self._idle = threading.Condition(self.lock)

    def run(self, protocol, op, request, call_id, caller=_ANONYMOUS_CALLER, call=None):
        """The response message, or raises DeclaredFault (with .message set) / Refused / other errors.
        As the Java DeduplicatingInterceptor: only operations not marked idempotent are remembered
        (an idempotent one may simply run again, and remembering large results would cost memory for
        nothing), the last DEDUP_ENTRIES calls for DEDUP_SECONDS (DEDUP_ENTRIES_PER_IDENTITY of one
        caller's), whichever protocol a repeat uses; a repeat with another request is refused
        ``call-id-reuse`` and does not run. A call id is its caller's (``caller``, a ``_peer.Peer``,
        keyed by ``_peer.call_id_owner``): another identity's call under the same id is a call of its
        own, never answered with the first caller's outcome. Once the
        server drains, raises Draining instead: the check and the count of calls under way are one
        step, so a call either runs before the drain's wait ends or is refused. ``call``, the call's
        ``ServerCallContext``, is the operation's current call; one whose deadline passed before it
        could start (waiting for a worker, say) is refused ``deadline-exceeded`` and does not run."""
        with self.lock:
            if self.draining:
                raise Draining(protocol, Draining.TEXT)
            self.under_way += 1
        try:
            if call is not None and call.expired():
                raise Refused(DEADLINE_EXCEEDED, "the caller's deadline passed before %s could start; it did not run"
                              % op.name)
            with _trace.server_span(self.iface.name, op.name, protocol, call_id, None if call is None else call.trace):
                return self._run_once(protocol, op, request, call_id, _peer.call_id_owner(caller), call)
        finally:
            with self.lock:
                self.under_way -= 1
                if self.under_way == 0:
                    self._idle.notify_all()

    def refuse_from_now(self):
        with self.lock:
            self.draining = True

    def await_idle(self, timeout):
        """Waits up to ``timeout`` seconds for the calls under way; the number still under way."""
        with self.lock:
            self._idle.wait_for(lambda: self.under_way == 0, timeout)
            return self.under_way

    def _run_once(self, protocol, op, request, call_id, caller, call):
        if call_id is None or op.idempotent:
            return self._execute(protocol, op, request, call)
        key = (op.name, call_id)
        request.DiscardUnknownFields()   # what the operation reads, whichever protocol brought it
        digest = hashlib.sha256(_canonical_nans(request).SerializeToString(deterministic=True)).digest()
        with self.lock:
            kept = self.results.get(caller, key)
            mine = kept is None
            if mine:
                first = futures.Future()
                self.results.add(caller, key, (first, digest))
            else:
                first, first_digest = kept
        if not mine and first_digest != digest:
            raise Refused(CALL_ID_REUSE, "call id %s of %s was used for another request; it did not run (a call id "
                          "names one request of one caller)" % (call_id, op.name))
        if mine:
            try:
                first.set_result(self._execute(protocol, op, request, call))
            except BaseException as e:
                first.set_exception(e)
        return first.result()   # a repeated call id: the first call's answer, whatever it was

    def _execute(self, protocol, op, request, call):
        method = getattr(self.obj, op.name, None)
        if method is None or not callable(method):
            raise NotImplementedError("not implemented: %s has no operation %s" % (type(self.obj).__name__, op.name))
        values = _values.Decoder(self.iface, self.types, use_numpy=self.use_numpy).decode(request)
        with self.lock:
            self.calls["%s %s" % (protocol, op.name)] += 1
        entered = None if call is None else _entered(call)
        try:
            result = method(**values)
        except DeclaredFault as f:
            if op.fault is None:
                raise RuntimeError("%s raised a fault but declares none: %s" % (op.name, f)) from f
            f.message = _values.Encoder(self.iface, op.fault.DESCRIPTOR).encode(f.values)
            raise
        finally:
            if entered is not None:
                _left(entered)
        response_fields = [f for f in op.response.DESCRIPTOR.fields if f.name not in ("sb_nodes", "sb_nulls")]
        if not response_fields:
            values = {}
        elif len(response_fields) == 1 and not (isinstance(result, dict) and set(result) == {response_fields[0].name}):
            values = {response_fields[0].name: result}
        else:
            values = result
        return _values.Encoder(self.iface, op.response.DESCRIPTOR).encode(values)


class _Shares:
    """What a server remembers of its callers, keyed by caller identity: each entry for ``seconds``, at
    most ``per_identity`` of one identity (its oldest go first) and ``in_all`` together (the identity
    keeping the most gives up its oldest), so that a stranger's flood costs only its own share, as the
    Java servers' RecentCalls. Expired entries go as they are met. The identities are kept by how
    many entries each holds, so that a full memory finds the largest share without looking at every
    caller for every new entry. Not thread-safe: its user holds a lock around every use."""

    def __init__(self, seconds, per_identity, in_all, clock=time.monotonic):
        self.seconds, self.per_identity, self.in_all, self.clock = seconds, per_identity, in_all, clock
        self._order = collections.OrderedDict()   # (identity, key) -> (when it came, value), oldest first
        self._shares = {}   # identity -> its keys, oldest first (an OrderedDict as an ordered set)
        self._by_count = {}   # entries held -> the identities holding that many (a dict as an ordered set)
        self._most = 0   # the most entries one identity holds

    def get(self, identity, key):
        """The value kept for ``key`` of ``identity``, or None."""
        self._drop_expired(self.clock())
        kept = self._order.get((identity, key))
        return None if kept is None else kept[1]

    def add(self, identity, key, value=True):
        """Keeps ``value`` for ``key`` of ``identity``; a key kept already keeps its first time and value."""
        now = self.clock()
        self._drop_expired(now)
        if (identity, key) in self._order:
            return
        self._order[(identity, key)] = (now, value)
        share = self._shares.setdefault(identity, collections.OrderedDict())
        share[key] = None
        self._counted(identity, len(share) - 1, len(share))
        while len(share) > self.per_identity:
            self._forget((identity, next(iter(share))))
        while len(self._order) > self.in_all:
            largest = next(iter(self._by_count[self._most]))
            self._forget((largest, next(iter(self._shares[largest]))))

    def take(self, identity, key):
        """Whether ``key`` of ``identity`` was kept; it is forgotten."""
        self._drop_expired(self.clock())
        if (identity, key) not in self._order:
            return False
        self._forget((identity, key))
        return True

    def kept(self, identity=None):
        """How many entries are kept, of ``identity`` or in all."""
        return len(self._order) if identity is None else len(self._shares.get(identity, ()))

    def _drop_expired(self, now):
        while self._order:
            key, (when, _) = next(iter(self._order.items()))
            if now - when <= self.seconds:
                return
            self._forget(key)

    def _forget(self, key):
        del self._order[key]
        share = self._shares[key[0]]
        del share[key[1]]
        self._counted(key[0], len(share) + 1, len(share))
        if not share:
            del self._shares[key[0]]

    def _counted(self, identity, was, now):
        """Moves ``identity`` from holding ``was`` entries to ``now`` (one more or one fewer)."""
        if was:
            held = self._by_count[was]
            del held[identity]
            if not held:
                del self._by_count[was]
                if self._most == was and now < was:
                    self._most = now   # it held the most, alone: now one fewer is the most
        if now:
            self._by_count.setdefault(now, {})[identity] = None
            self._most = max(self._most, now)


def _early_cancels(clock=time.monotonic):
    """SOAP cancels that came before their calls, kept as the Java server's SoapCalls keeps them."""
    return _Shares(EARLY_CANCEL_SECONDS, EARLY_CANCELS_PER_IDENTITY, EARLY_CANCELS, clock)


class _SoapCalls:
    """The SOAP calls under way that came with a call id, by caller identity and id, as the Java
    server's SoapCalls, so that a client's cancel message (a POST with the ``Switchboard-Cancel``
    header naming the id) reaches its own call: SOAP has no cancel, and call ids are exported as
    trace attributes, so another identity's cancel finds nothing. A Python operation cannot be
    interrupted: a cancelled call runs to its end and its answer is dropped, as a tcp cancel frame's.
    The cancel travels on a connection of its own and can overtake its call's request: one that
    finds no call is kept for it (``_early_cancels``), and that call does not run."""

    CANCELLED, KEPT, NOT_FOUND = 204, 202, 404   # what a cancel did, as its HTTP status

    def __init__(self, early=None):
        self._lock = threading.Lock()
        self._running = {}   # (identity, call id) -> its ServerCallContext
        self.early = early or _early_cancels()

    def start(self, identity, call_id, call):
        """The call's key until ``end``; None (not registered) without an id, or while the same
        caller runs another call of that id: the first keeps it. Raises Refused ``cancelled`` when
        the caller cancelled the call before it came: it must not run. ``call`` is the call's
        ``ServerCallContext``, which a cancel message cancels."""
        if call_id is None:
            return None
        key = (identity, call_id)
        with self._lock:
            if self.early.take(identity, call_id):
                raise Refused(CANCELLED_REASON, "the caller cancelled call %s before it arrived; it did not run"
                              % call_id)
            if key in self._running:
                return None
            self._running[key] = call
        return key

    def end(self, key):
        """Forgets the call; whether it was cancelled."""
        if key is None:
            return False
        with self._lock:
            return self._running.pop(key).cancelled_by_caller

    def cancelled(self, key):
        """Whether the call of ``key`` (from ``start``) was cancelled so far."""
        if key is None:
            return False
        with self._lock:
            return self._running[key].cancelled_by_caller

    def under_way(self, identity, call_id):
        """Whether a call of ``identity`` under ``call_id`` is registered now (tests)."""
        with self._lock:
            return (identity, call_id) in self._running

    def cancel(self, identity, call_id, running_only=False):
        """Marks ``identity``'s call ``call_id`` cancelled if it runs (CANCELLED); else keeps the
        cancel for that call (KEPT), unless ``running_only`` (NOT_FOUND)."""
        key = (identity, call_id)
        with self._lock:
            call = self._running.get(key)
            if call is None:
                if running_only:
                    return self.NOT_FOUND
                self.early.add(identity, call_id)
                return self.KEPT
        call.cancel()   # outside the lock: its listeners cancel the calls the operation makes
        return self.CANCELLED


class _ClientWatch:
    """The SOAP calls under way, each with its connection, so that a client that closes its
    connection while its operation runs cancels the call, as a closed tcp or gRPC connection does:
    HTTP/1.1 gives a server no other sign of it, and a foreign client that gives up (a timeout, a
    process that ended) sends no cancel message. Once a call has run ``LOOK_AFTER`` seconds, one
    thread looks at its socket every half of that for the peer's end (``POLLRDHUP``, which reads
    nothing: bytes a client sent early stay for the server to read). A call whose deadline comes
    before the next look is left to its deadline. Where ``poll`` or ``POLLRDHUP`` is missing (not
    Linux) nothing is watched."""

    LOOK_AFTER = 1.0
    WATCHES = hasattr(select, "poll") and hasattr(select, "POLLRDHUP")

    def __init__(self):
        self._lock = threading.Lock()
        self._calls = {}   # token -> (socket, ServerCallContext, since)
        self._thread = None
        self._stopped = threading.Event()
        self.looks = 0   # sockets looked at, clients found gone, calls of those left to their deadline (tests)
        self.gone = 0
        self.left_to_deadline = 0

    def watch(self, sock, call):
        """Watches ``sock`` for its client's close until ``unwatch``; its close cancels ``call``."""
        if not self.WATCHES:
            return None
        token = object()
        with self._lock:
            self._calls[token] = (sock, call, time.monotonic())
            if self._thread is None and not self._stopped.is_set():
                self._thread = threading.Thread(target=self._run, name="switchboard-soap-clients", daemon=True)
                self._thread.start()
        return token

    def unwatch(self, token):
        if token is not None:
            with self._lock:
                self._calls.pop(token, None)

    def close(self):
        self._stopped.set()

    def _run(self):
        while not self._stopped.wait(self.LOOK_AFTER / 2):
            now = time.monotonic()
            with self._lock:
                due = [(token, sock, call) for token, (sock, call, since) in self._calls.items()
                       if now - since >= self.LOOK_AFTER]
            for token, sock, call in due:
                self.looks += 1
                if not _peer_ended(sock):
                    continue
                with self._lock:
                    watched = self._calls.pop(token, None) is not None
                if not watched:
                    continue
                self.gone += 1
                left = call.time_left()
                if left is not None and left < self.LOOK_AFTER / 2:
                    # most often a caller that gave up at its deadline: the server's own, later by
                    # the request's time on the way, ends the call before a next look would, and as
                    # what it is, so the calls the operation makes fail as past their deadline
                    self.left_to_deadline += 1
                    continue
                call.cancel()


def _peer_ended(sock):
    """Whether the other end of ``sock`` closed (or shut its side down), without reading anything."""
    try:
        fd = sock.fileno()
    except (OSError, ValueError):
        return True
    if fd < 0:
        return True
    poller = select.poll()
    poller.register(fd, select.POLLRDHUP)   # POLLHUP and POLLERR are reported unasked
    return any(events & (select.POLLRDHUP | select.POLLHUP | select.POLLERR) for _, events in poller.poll(0))


class _Registration:
    """Binds one entry, renews its lease at a third of it, binds again if the registry lost it."""

    def __init__(self, registry, entry, credential, on_renew=None):
        self.registry, self.entry, self.credential, self.on_renew = registry, entry, credential, on_renew
        self.stop = threading.Event()
        self.thread = None
        self.renewals = 0

    def start(self):
        import zeep.exceptions

        from ._registry import MayHaveRun, fault_code

        lease = self.entry.get("leaseSeconds") or 0
        try:
            self.registry.bind(self.entry, self.credential)
        except zeep.exceptions.Fault as e:
            code = fault_code(e)
            raise SwitchboardError("the registry refused the bind of %s: %s%s" % (
                self.entry["name"], e.message, " (code %s)" % code if code else "")) from None
        except MayHaveRun as e:
            if lease <= 0:
                raise SwitchboardError("could not bind %s: %s" % (self.entry["name"], e)) from None
            # the entry may be bound: the heartbeat's renewal finds out, and binds again if it is not
            print("switchboard: %s; the lease's heartbeat binds it again if the registry does not hold it" % e,
                  file=sys.stderr, flush=True)
        if lease > 0:
            self.thread = threading.Thread(target=self._heartbeat, args=(lease / 3.0,), name="switchboard-lease",
                                           daemon=True)
            self.thread.start()

    def _heartbeat(self, every):
        name, instance = self.entry["name"], self.entry["instanceId"]
        while not self.stop.wait(every):
            try:
                # each of several registries gets one period to answer, so the next is asked within the lease
                if self.registry.renew(name, instance, self.credential, timeout=max(1.0, every)):
                    self.renewals += 1
                    if self.on_renew is not None:
                        self.on_renew(name, instance)
                else:
                    self.registry.bind(self.entry, self.credential)
            except Exception as e:   # the registry may be restarting: keep trying, as ComponentServer does
                print("switchboard: could not renew the lease of %s (%s); will try again: %s" % (name, instance, e),
                      file=sys.stderr, flush=True)

    def close(self):
        self.stop.set()
        if self.thread:
            self.thread.join(5)
        return self.registry.unbind(self.entry["name"], self.entry["instanceId"], self.credential)


class Server:
    """A component served over tcp (``tcp=False``: not), gRPC and SOAP, each over TLS with ``tls``;
    ``close()`` unbinds it and stops them."""

    def __init__(self, obj, schema, registry=None, name=None, proto=None, wsdl=None, host="127.0.0.1", lease=30,
                 secret=None, tls=None, max_message_bytes=DEFAULT_MAX_MESSAGE, numpy=False, handle_sigterm=True,
                 workers=8, on_renew=None, authz=None, max_connections=512, max_connections_per_address=128,
                 idle_seconds=60, jwt=None, tcp=True, drain_quiet=0.0, drain_timeout=30.0, advertise=None):
        self.authz = authorizer(authz)   # refused here, with the reason, if it does not parse
        if registry is not None:   # a malformed list of registries too, before anything listens
            from ._registry import registry_urls

            registry_urls(registry)
        self.jwt = jwt
        self.tls = tls
        self.denials = collections.Counter()   # (identity, path) -> calls denied
        self._denial_logged = {}
        self.workers = workers
        self.idle_seconds = idle_seconds
        self.drain_quiet, self.drain_timeout = drain_quiet, drain_timeout
        self.limits = ConnectionLimits(max_connections, max_connections_per_address)
        self._soap_calls = threading.BoundedSemaphore(workers)
        self.max_connections = max_connections
        self.max_connections_per_address = max_connections_per_address
        schema_text = _read(schema)
        self.component = component_name(schema_text)
        proto_path = proto or find_document(schema, self.component, ".proto")
        if proto_path is None:
            raise FileNotFoundError(
                "serving %s needs the typed .proto the interface compiler derives from %s: 'switchboard compile %s' "
                "writes %s.proto and %s.wsdl beside it (or mvn package, in target/generated-resources); or pass "
                "proto=PATH" % (self.component, schema, schema, self.component, self.component))
        wsdl_path = wsdl or find_document(schema, self.component, ".wsdl")
        self.iface = Interface(_read(proto_path))
        self.types = _values.Types(self.iface)
        namespace = re.search(r"namespace (\S+?),", self.iface.text)
        self.codec = _soap.SoapCodec(self.iface, namespace.group(1) if namespace else "urn:switchboard:" + self.component)
        self.max_message = max_message_bytes
        self.runner = _Run(obj, self.iface, self.types, numpy)
        self.soap_calls = _SoapCalls()
        self.client_watch = _ClientWatch()
        self.name = name or self.component
        self.serving = True
        self._closed = threading.Event()
        self._waiting = False
        self.unbound = 0
        self._close_lock = threading.Lock()
        host = _address.socket_host(host) or "0.0.0.0"   # as every listener binds it
        # what the endpoints name: ``advertise``, else for a wildcard this host's routed address, else ``host``
        self.advertised = _address.endpoint_host(host, advertise)
        self.grpc_server, self.grpc_address = self._start_grpc(host, tls, workers)
        wsdl_text = _read(wsdl_path) if wsdl_path else None
        self.soap_server, self.soap_address = self._start_soap(host, tls, wsdl_text)
        self.endpoints = {"grpc": self.grpc_address, "soap": self.soap_address}
        self.tcp = None
        if tcp:
            from ._tcp_server import TcpListener

            self.tcp = TcpListener(self, host, max_connections, max_connections_per_address, workers, idle_seconds,
                                   tls=tls, advertise=self.advertised)
            self.endpoints = {"tcp": self.tcp.address, **self.endpoints}
        self.registration = None
        if registry is not None:
            from ._registry import RegistryClient

            credential = secret if secret is not None else os.environ.get("SWITCHBOARD_SECRET")
            try:
                client = RegistryClient(registry, tls=tls)
                entry = client.entry_dict(self.name, str(uuid.uuid4()), list(self.endpoints.items()),
                                          schema_text, self.iface.text,
                                          self.soap_address + "?wsdl" if wsdl_text else None, lease, ["call-ids"])
                self.registration = _Registration(client, entry, credential, on_renew)
                self.registration.start()
            except BaseException:
                self._stop_servers()
                raise
        if handle_sigterm and threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGTERM)

            def on_sigterm(signum, frame):
                self.close()
                if callable(previous) and previous not in (signal.SIG_DFL, signal.SIG_IGN):
                    previous(signum, frame)
                if not self._waiting:   # wait() returns by itself; otherwise end the program, as SIGTERM does
                    raise SystemExit(0)
            signal.signal(signal.SIGTERM, on_sigterm)

    @property
    def instance_id(self):
        return self.registration.entry["instanceId"] if self.registration else None

    @property
    def calls(self):
        """The calls run, as {"PROTOCOL OPERATION": count}."""
        with self.runner.lock:
            return dict(self.runner.calls)

    # -- authorization ----------------------------------------------------------------------------

    def admit(self, transport_peer, authorization, op):
        """The caller of a call (see ``identify``), once the policy lets it call ``op``; raises
        PermissionDenied. A client certificate the trust store and revocation lists in force no
        longer trust is refused ``unauthenticated`` whatever token the call carries."""
        certificate = transport_peer.certificate
        if certificate is not None and self.tls is not None \
                and not self.tls.still_trusts(certificate, transport_peer.chain, transport_peer.judged_by):
            raise PermissionDenied(NO_LONGER_TRUSTED, PermissionDenied.UNAUTHENTICATED, op.path)
        peer = self.identify(transport_peer, authorization, op.path)
        self.authorize(peer, op)
        return peer

    def identify(self, transport_peer, authorization, path=None):
        """Who sends a request: its verified token's principal, else the transport's peer. Without a
        verifier, tokens are not read. A token that does not verify is refused (PermissionDenied,
        naming ``path``), never taken as no token."""
        token = bearer(authorization) if self.jwt is not None else None
        if token is None:
            return transport_peer
        try:
            principal = self.jwt.verify(token)
        except PermissionDenied as refused:
            refused.path = path
            raise
        except Exception:   # a verifier that fails otherwise still refuses
            raise PermissionDenied("the bearer token could not be verified", PermissionDenied.UNAUTHENTICATED,
                                   path) from None
        return _peer.Peer(principal, _peer.TOKEN, transport_peer.remote_address)

    def authorize(self, peer, op):
        """Raises PermissionDenied unless the policy (if any) lets this peer call ``op``."""
        if self.authz is None:
            return
        decision = self.authz.decide(peer.principal, op.path)
        if decision.allowed:
            return
        key = (peer.identity, op.path)
        now = time.monotonic()
        with self.runner.lock:
            self.denials[key] += 1
            last = self._denial_logged.get(key)
            log = last is None or now - last >= DENIAL_LOG_SECONDS
            if log:
                self._denial_logged[key] = now
        if log:   # at most once a minute per identity and path: a denied flood does not flood the log
            LOG.warning("denied %s to %s from %s: %s", op.path, peer.identity, peer.remote_address, decision.reason)
        # the caller learns the path, never the rules
        raise PermissionDenied("permission denied: %s may not call %s" % (peer.principal or "an anonymous caller",
                                                                          op.path), PermissionDenied.DENIED, op.path)

    # -- gRPC -------------------------------------------------------------------------------------

    def _start_grpc(self, host, tls, workers):
        import grpc

        # a bounded pool with a bounded queue (over it: RESOURCE_EXHAUSTED at once), fewer streams per
        # connection than workers (one connection cannot take them all), a cap on connections, and
        # handshakes and idle connections that end
        # the listening socket is ours where it can be, with the shares of the other listeners
        self.grpc_limits = ConnectionLimits(self.max_connections, self.max_connections_per_address)
        self.grpc_listener = None
        if _grpc_listener.available():
            try:
                # over TLS, callers come over TCP only, where their certificates are checked (as tcp's)
                self.grpc_listener = _grpc_listener.GrpcListener(host, self.grpc_limits,
                                                                 unix=tls is None and _tcp.unix_enabled("grpc"))
            except OSError as e:
                _grpc_listener.start_failed(e)
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="switchboard-grpc"),
                             maximum_concurrent_rpcs=4 * workers,
                             options=[("grpc.max_receive_message_length", max(2 * PART_BYTES + 4096,
                                                                              min(self.max_message, 1 << 30))),
                                      ("grpc.max_send_message_length", 1 << 30),
                                      ("grpc.max_concurrent_streams", max(1, workers // 2)),
                                      # behind the listener its shares bound them (grpcio's cap, on connections
                                      # the listener closed that grpcio has not torn down yet, would close new ones)
                                      ("grpc.max_allowed_incoming_connections",
                                       self.max_connections if self.grpc_listener is None else 1 << 30),
                                      ("grpc.server_handshake_timeout_ms", 10_000),
                                      ("grpc.max_connection_idle_ms", int(self.idle_seconds * 1000))])
        handlers = {}
        for op in self.iface.operations.values():
            if op.streams:
                handlers[op.name] = grpc.stream_stream_rpc_method_handler(self._grpc_streaming(op))
            else:
                handlers[op.name] = grpc.unary_unary_rpc_method_handler(self._grpc_unary(op))
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(self.iface.service.full_name, handlers),
                                         grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
                                             "Check": grpc.unary_unary_rpc_method_handler(self._health)}),
                                         grpc.method_handlers_generic_handler("grpc.reflection.v1.ServerReflection", {
                                             "ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(
                                                 self._reflection)})))
        where = _address.host_port(host, 0) if self.grpc_listener is None else self.grpc_listener.target
        try:
            if tls is not None:
                port = server.add_secure_port(where, tls.grpc_server_credentials())
                scheme = "grpcs"
            else:
                port = server.add_insecure_port(where)
                scheme = "grpc"
            server.start()
        except BaseException:
            if self.grpc_listener is not None:
                self.grpc_listener.close()
            raise
        if self.grpc_listener is not None:
            self.grpc_listener.start()
            port = self.grpc_listener.port
        address = "%s://%s/%s" % (scheme, _address.host_port(self.advertised, port), self.component)
        if self.grpc_listener is not None and self.grpc_listener.unix_path is not None:
            address += "?" + _tcp.unix_query(self.grpc_listener.unix_path)
        return server, address

    def _stop_grpc(self, grace):
        """Stops grpcio (its goodbyes still relayed), then the listener in front of it. A caller that
        takes nothing of what grpcio sends it would hold grpcio's shutdown for good: once the grace
        has passed, the listener cuts every connection."""
        stopped = self.grpc_server.stop(grace=grace)
        if self.grpc_listener is not None:
            stopped.wait(grace + 1)
            self.grpc_listener.close()
        stopped.wait()

    def _grpc_answer(self, op, request, context, peer):
        import grpc

        metadata = dict(context.invocation_metadata())
        call_id = metadata.get("sb-call-id")
        if call_id is not None and not well_formed_call_id(call_id):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the sb-call-id header is malformed: " + CALL_ID_RULE)
        call = ServerCallContext(context.time_remaining(),
                                 trace=_trace.parse(metadata.get(_trace.TRACEPARENT), metadata.get(_trace.TRACESTATE)))
        # gRPC ends the call when its client cancels it, its deadline passes or its connection drops
        context.add_callback(call.cancel)
        try:
            return self.runner.run("grpc", op, request, call_id, peer, call)
        except DeclaredFault as f:
            detail = self.iface.status.DESCRIPTOR.fields_by_name["details"].message_type
            any_class = self.iface.message_class(detail)
            status = self.iface.status(code=grpc.StatusCode.FAILED_PRECONDITION.value[0], message=str(f))
            status.details.append(any_class(type_url="type.googleapis.com/" + op.fault.DESCRIPTOR.full_name,
                                            value=f.message.SerializeToString()))
            context.set_trailing_metadata(((DETAILS_KEY, status.SerializeToString()),))
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(f))
        except Refused as r:
            self._grpc_refuse(context, r)
        except Draining:
            context.set_trailing_metadata((("sb-draining", "1"),))   # as GrpcErrors sends it: not delivered
            context.abort(grpc.StatusCode.UNAVAILABLE, Draining.TEXT)
        except NotImplementedError as e:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, str(e))
        except Exception as e:
            context.set_trailing_metadata((("sb-error-type", type(e).__name__),))
            context.abort(grpc.StatusCode.UNKNOWN, str(e) or type(e).__name__)
        finally:
            call.end()

    @staticmethod
    def _grpc_refuse(context, r):
        import grpc

        trailers = [("sb-refused", r.reason)]
        if r.field:
            trailers.append(("sb-refused-field", r.field))
        context.set_trailing_metadata(tuple(trailers))
        context.abort(grpc.StatusCode.INVALID_ARGUMENT if r.reason == "malformed" else
                      grpc.StatusCode.DEADLINE_EXCEEDED if r.reason == DEADLINE_EXCEEDED else
                      grpc.StatusCode.RESOURCE_EXHAUSTED, r.text)

    def _grpc_authorize(self, op, context, pipe):
        """The call's peer (from ``pipe``, its connection, when the server's own listener relayed
        it); aborts the call with PERMISSION_DENIED (UNAUTHENTICATED for a token that does not
        verify) unless the policy lets it call ``op``."""
        import grpc

        if pipe is not None and pipe.unix_peer is not None:
            transport_peer = pipe.unix_peer
        else:
            transport_peer = _peer.from_grpc(context, pipe.address if pipe is not None else None)
        try:
            return self.admit(transport_peer, dict(context.invocation_metadata()).get("authorization"), op)
        except PermissionDenied as denied:
            # as the Java servers send it: a Java client names the refused path from these
            trailers = [("sb-refused", denied.reason)]
            if denied.path:
                trailers.append(("sb-denied-path", denied.path))
            context.set_trailing_metadata(tuple(trailers))
            context.abort(grpc.StatusCode.UNAUTHENTICATED if denied.reason == PermissionDenied.UNAUTHENTICATED
                          else grpc.StatusCode.PERMISSION_DENIED, denied.text)

    def _grpc_running(self, context):
        """Marks the call's connection busy while it runs (never the one closed to make room); gives
        its connection (``_grpc_listener._Pipe``) where the server's own listener relayed the call,
        else None."""
        if self.grpc_listener is None:
            return contextlib.nullcontext()
        return self.grpc_listener.running(unquote(context.peer()))

    def _grpc_unary(self, op):
        def handle(data, context):
            with self._grpc_running(context) as pipe:
                peer = self._grpc_authorize(op, context, pipe)
                return self._grpc_unary_admitted(op, data, context, peer)
        return handle

    def _grpc_unary_admitted(self, op, data, context, peer):
        try:
            if len(data) > self.max_message:
                raise Refused("size-limit", "request over %d bytes" % self.max_message, op.request.DESCRIPTOR.name)
            request = self._parse(op, data)
        except Refused as r:
            self._grpc_refuse(context, r)
        return self._grpc_answer(op, request, context, peer).SerializeToString()

    def _grpc_streaming(self, op):
        def handle(request_iterator, context):
            with self._grpc_running(context) as pipe:
                peer = self._grpc_authorize(op, context, pipe)   # before a byte of the request is read
                yield from self._grpc_streaming_admitted(op, request_iterator, context, peer)
        return handle

    def _grpc_streaming_admitted(self, op, request_iterator, context, peer):
        received, size = [], 0
        try:
            for part in request_iterator:
                size += len(part)
                if size > self.max_message:
                    raise Refused("size-limit", "request over %d bytes" % self.max_message, op.request.DESCRIPTOR.name)
                received.append(part)
            request = self._parse(op, b"".join(received))
        except Refused as r:
            self._grpc_refuse(context, r)
        yield from parts(self._grpc_answer(op, request, context, peer))

    @staticmethod
    def _parse(op, data):
        from google.protobuf.message import DecodeError

        try:
            return op.request.FromString(data)
        except (DecodeError, ValueError) as e:
            raise Refused("malformed", "cannot read the request: %s" % e, op.request.DESCRIPTOR.name) from None

    def _health(self, data, context):
        request = self.iface.message_class(self.iface.pool.FindMessageTypeByName(
            "grpc.health.v1.HealthCheckRequest")).FromString(data)
        response = self.iface.message_class(self.iface.pool.FindMessageTypeByName(
            "grpc.health.v1.HealthCheckResponse"))
        if request.service not in ("", self.iface.service.full_name):
            import grpc

            context.abort(grpc.StatusCode.NOT_FOUND, "unknown service " + request.service)
        return response(status=1 if self.serving else 2).SerializeToString()

    def _reflection(self, request_iterator, context):
        """grpc.reflection.v1, the parts a tool needs: list services, files by name or symbol."""
        from ._reflection import answer

        for request in request_iterator:
            yield answer(request, self.iface)

    # -- SOAP -------------------------------------------------------------------------------------

    def _start_soap(self, host, tls, wsdl_template):
        path = "/services/" + self.component
        server = _HttpServer((host, 0), _soap_handler(self, path), self.limits,
                             tls.server_contexts() if tls is not None else None)
        scheme = "http" if tls is None else "https"
        address = "%s://%s%s" % (scheme, _address.host_port(self.advertised, server.server_address[1]), path)
        self.wsdl = None
        if wsdl_template:   # the WSDL names the address it is served from
            self.wsdl = re.sub(r'(<soap:address\s+location=")[^"]*(")', lambda m: m.group(1) + address + m.group(2),
                               wsdl_template).encode("utf-8")
        # shutdown() waits for the loop's next poll: a twentieth of a second per server stopped, not the default half
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="switchboard-soap",
                         daemon=True).start()
        return server, address

    # -- lifecycle --------------------------------------------------------------------------------

    def _stop_servers(self):
        self.serving = False
        self.client_watch.close()
        self.soap_server.shutdown()
        self.soap_server.server_close()
        if self.tcp is not None:
            self.tcp.close()
        self._stop_grpc(2)

    def close(self):
        """Unbinds from the registry (if bound), drains (see above) and stops serving; the number of entries
        unbound."""
        with self._close_lock:
            if self._closed.is_set():
                return 0
            self._closed.set()
        unbound = 0
        if self.registration is not None:
            try:
                unbound = self.unbound = self.registration.close()
            except Exception as e:
                print("switchboard: could not unbind %s; its lease will run out: %s" % (self.name, e),
                      file=sys.stderr, flush=True)
        if self.registration is not None and self.drain_quiet > 0:
            time.sleep(self.drain_quiet)   # still answering while watching clients move away
        self.runner.refuse_from_now()
        self.serving = False
        left = self.runner.await_idle(self.drain_timeout)
        if left:
            print("switchboard: %s stops with %d call(s) still under way after %s s of draining"
                  % (self.name, left, self.drain_timeout), file=sys.stderr, flush=True)
        self._stop_servers()
        return unbound

    def wait(self, timeout=None):
        """Blocks until close() or SIGTERM (or ``timeout`` seconds); whether it is closed."""
        self._waiting = True
        try:
            if timeout is not None:
                return self._closed.wait(timeout)
            while not self._closed.wait(0.5):
                pass
            return True
        finally:
            self._waiting = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _HttpServer(ThreadingHTTPServer):
    """One thread per connection, as many threads as the connection limits admit connections."""

    daemon_threads = True
    request_queue_size = 128   # the accept backlog: a burst of connections is accepted (and judged), not dropped

    def __init__(self, address, handler, limits, tls_contexts=None):
        self.address_family = _address.family(address[0])   # read by the socket's making in super().__init__
        super().__init__(address, handler)
        self.limits = limits
        self.tls_contexts = tls_contexts   # tls.server_contexts(), or None for plain HTTP
        self._over_limits = set()   # ids of the refused connections kept for one request (a cancel's)

    def get_request(self):
        try:
            connection, address = self.socket.accept()
        except OSError as e:   # socketserver then waits for the socket to be readable again: at once
            if _limits.accept_failed(e) == _limits.PAUSE:
                time.sleep(_limits.ACCEPT_PAUSE)
            raise
        if self.tls_contexts is not None:
            # the stores as they are now (read again if their files changed); the handshake
            # happens on the connection's own thread, not in the accepting one
            try:
                connection = self.tls_contexts.current().wrap_socket(connection, server_side=True,
                                                                     do_handshake_on_connect=False)
            except Exception as e:   # socketserver drops a connection whose accept failed with OSError alone
                connection.close()
                raise OSError("cannot start TLS on an accepted connection: %s" % e) from e
        return connection, address

    def process_request(self, request, client_address):
        if not self.limits.admit(request, client_address[0]):
            if not self.limits.claim_refused_answer():
                self.shutdown_request(request)
                return
            self._over_limits.add(id(request))
        super().process_request(request, client_address)

    def over_limits(self, request):
        """Whether ``request`` (a connection) was refused and kept for one request: only a cancel is served."""
        return id(request) in self._over_limits

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            if id(request) in self._over_limits:
                self._over_limits.discard(id(request))
                self.limits.refused_answered()
            else:
                self.limits.release(request)

    def handle_error(self, request, client_address):
        """A connection that broke or failed its TLS handshake is the client's affair: no traceback.
        After a refused handshake the close lingers (``_linger``), as the Java server's does."""
        error = sys.exc_info()[1]
        if isinstance(error, ssl.SSLError):
            _linger(request)
        if not isinstance(error, (ConnectionError, TimeoutError, OSError)):
            super().handle_error(request, client_address)


DRAIN_LIMIT = 64 << 20   # past the limit, read at most this much more so that the refusal reaches the sender
LINGER_SECONDS = 1.0     # how long a refused TLS connection's input is read and dropped before it closes


def _linger(connection):
    """Ends the output and reads and drops the input for up to LINGER_SECONDS (DRAIN_LIMIT bytes at
    most). Under TLS 1.3 a client sends its request right after its half of the handshake; closed
    with that request unread, the connection is reset, and a client still writing sees a broken pipe
    (its call "may have run") instead of the alert that says its certificate was refused. Reads the
    socket under the TLS layer, whose handshake failed."""
    try:
        socket.socket.shutdown(connection, socket.SHUT_WR)   # after the alert OpenSSL has sent
        end, drained = time.monotonic() + LINGER_SECONDS, 0
        while drained < DRAIN_LIMIT:
            left = end - time.monotonic()
            if left <= 0:
                break
            connection.settimeout(left)
            data = socket.socket.recv(connection, 64 << 10)
            if not data:
                break
            drained += len(data)
    except OSError:
        pass


def _read_body(handler, limit):
    """The request body by Content-Length or chunked coding. Past ``limit`` it reads on, discarding
    (up to DRAIN_LIMIT more), so that a sender still writing gets the refusal rather than a reset
    connection, as the Java SOAP server does; then refuses it as ``size-limit``."""
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks, size = [], 0
        while True:
            line = handler.rfile.readline(1024)
            try:
                n = int(line.split(b";")[0].strip(), 16)
            except ValueError:
                handler.close_connection = True   # where the next request would start is unknown
                raise Refused("malformed", "bad chunk header") from None
            if n == 0:
                while handler.rfile.readline(1024).strip():   # trailers
                    pass
                if size > limit:
                    raise Refused("size-limit", "request over %d bytes" % limit)
                return b"".join(chunks)
            size += n
            if size > limit + DRAIN_LIMIT:
                handler.close_connection = True
                raise Refused("size-limit", "request over %d bytes" % limit)
            data = handler.rfile.read(n)
            if size <= limit:
                chunks.append(data)
            else:
                chunks = []
            handler.rfile.readline(8)
    length = int(handler.headers.get("Content-Length") or 0)
    if length > limit:
        remaining = length if length <= limit + DRAIN_LIMIT else 0
        while remaining > 0:
            got = handler.rfile.read(min(remaining, 1 << 20))
            if not got:
                break
            remaining -= len(got)
        handler.close_connection = length > limit + DRAIN_LIMIT or remaining > 0
        raise Refused("size-limit", "request over %d bytes" % limit)
    return handler.rfile.read(length)


_BUSY_ANSWER = ("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\nRetry-After: 1\r\n"
                "%s: the request did not run\r\n\r\n" % BUSY_HEADER).encode("ascii")


class _CountingReader(io.RawIOBase):
    """A socket's bytes as a raw stream, counting them: whether a connection has sent anything yet."""

    def __init__(self, sock):
        self._raw = socket.SocketIO(sock, "rb")
        self.count = 0

    def readable(self):
        return True

    def readinto(self, b):
        n = self._raw.readinto(b)
        if n:
            self.count += n
        return n


def _soap_handler(server, path):
    from lxml import etree

    codec, iface = server.codec, server.iface
    wire_ops = {codec.q(op): iface.operations[op] for op in iface.operations}

    class SoapHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True
        server_version = "switchboard-python"
        timeout = server.idle_seconds   # seconds a connection may stay silent (a stalled request, an idle keep-alive)

        def log_message(self, *args):
            pass

        def send(self, status, body, content_type):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

        def setup(self):
            super().setup()
            self.ending = None
            if self.server.over_limits(self.connection):
                self.over_limits = threading.Lock()   # the timer's end and the request's head: one goes first
                self.head_came = self.answered_busy = False
                if not isinstance(self.connection, ssl.SSLSocket):
                    # what has come, so that a connection that sent nothing is told it was not served
                    self.received = _CountingReader(self.connection)
                    self.rfile = io.BufferedReader(self.received)
                # its request's head must come within the time, however slowly its bytes drip
                self.ending = threading.Timer(_limits.REFUSED_SECONDS, self.end_over_limits)
                self.ending.daemon = True
                self.ending.start()

        def end_over_limits(self):
            """A connection over the limits whose request's head has not all come in time is closed;
            if it sent nothing at all (in plain text: under TLS its handshake may not have been made),
            it is answered 503 first, as the Java server answers it, so that a client that sends on
            it later reads that its call did not run."""
            with self.over_limits:
                if self.head_came:
                    return
                self.answered_busy = getattr(self, "received", None) is not None and self.received.count == 0
            try:
                if self.answered_busy:
                    self.connection.sendall(_BUSY_ANSWER)
                self.connection.shutdown(socket.SHUT_RDWR)   # wakes the read; the connection then closes
            except OSError:
                pass

        def finish(self):
            if self.ending is not None:
                self.ending.cancel()
            super().finish()

        def refused_over_limits(self):
            """On a connection the limits refused: anything but a cancel message is answered 503 (not
            run, try again in a second), and the connection closes after its one request."""
            if not self.server.over_limits(self.connection):
                return False
            self.ending.cancel()   # its request has come
            self.close_connection = True
            with self.over_limits:
                if self.answered_busy:
                    return True   # answered 503 already: the bytes came after the time was up
                self.head_came = True
            if self.command == "POST" and self.headers.get(CANCEL_HEADER) is not None:
                return False
            self.send_response(503)
            self.send_header("Retry-After", "1")
            self.send_header(BUSY_HEADER, "the request did not run")
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")
            self.end_headers()
            return True

        def do_GET(self):
            if self.refused_over_limits():
                return
            self.close_if_body_left()
            if self.path.split("?")[0] == path and self.path.lower().endswith("?wsdl") and server.wsdl:
                self.send(200, server.wsdl, "text/xml; charset=UTF-8")
            else:
                self.send(404, b"not found\n", "text/plain")

        def do_POST(self):
            if self.refused_over_limits():
                return
            if self.path.split("?")[0] != path:
                self.close_if_body_left()
                self.send(404, b"not found\n", "text/plain")
                return
            cancel = self.headers.get(CANCEL_HEADER)
            if cancel is not None:   # a cancel message has no envelope
                self.cancel(cancel)
                return
            soap_ns = _soap.SOAP11
            try:
                doc = _soap.parse_document(_read_body(self, server.max_message))
                soap_ns = doc.tag[1:].split("}")[0] if doc.tag.startswith("{") else ""
                if soap_ns not in (_soap.SOAP11, _soap.SOAP12) or doc.tag != "{%s}Envelope" % soap_ns:
                    raise Refused("malformed", "not a SOAP envelope: " + doc.tag[:80])
                call_id, timeout, trace = None, None, None
                header = doc.find("{%s}Header" % soap_ns)
                if header is not None:
                    call_header = header.find("{%s}call" % _soap.SB_SOAP)
                    if call_header is not None:
                        call_id = call_header.get("id")
                        if not well_formed_call_id(call_id):
                            raise Refused("malformed", "the sb:call header's id is malformed: " + CALL_ID_RULE)
                    timeout = _soap.deadline_header(header)
                    trace = _soap.trace_header(header)
                # the deadline counts from the request's arrival, as the Java server counts it
                call = ServerCallContext(timeout, trace=trace)
                body = doc.find("{%s}Body" % soap_ns)
                if body is None or len(body) != 1 or body[0].tag not in wire_ops:
                    raise Refused("malformed", "the body holds no operation of " + server.component)
                op = wire_ops[body[0].tag]
                caller = server.admit(self.peer(), self.headers.get("Authorization"), op)
                request = codec.read(op.request, body[0])
                running = server.soap_calls.start(caller.identity, call_id, call)   # last: it registers the call
            except PermissionDenied as denied:
                self.deny(soap_ns, denied)
                return
            except Refused as r:
                self.fault(soap_ns, "Client", r.text, refused=r)
                return
            server.limits.busy(self.connection, True)
            watched = server.client_watch.watch(self.connection, call)
            try:
                reply = self.run(soap_ns, op, request, call_id, caller, running, call)
            finally:
                server.client_watch.unwatch(watched)
                server.limits.busy(self.connection, False)
                cancelled = server.soap_calls.end(running) or call.cancelled_by_caller
                call.end()
            if cancelled:   # its caller gave up on this connection: no answer, and no request after it
                self.close_connection = True
                return
            reply()

        def run(self, soap_ns, op, request, call_id, caller, running, call):
            """Runs the call; what then writes its answer or fault, unless a cancel came meanwhile. A
            call cancelled while it waited for a worker does not run (None)."""
            try:
                with server._soap_calls:
                    if server.soap_calls.cancelled(running):
                        return None
                    answer = server.runner.run("soap", op, request, call_id, caller, call)
            except DeclaredFault as f:
                detail = etree.Element(codec.q(op.fault.DESCRIPTOR.name), nsmap={None: codec.ns})
                codec.write(f.message, detail)
                return functools.partial(self.fault, soap_ns, "Server", str(f), detail=detail)
            except Refused as r:
                return functools.partial(self.fault, soap_ns, "Client", r.text, refused=r)
            except Draining:
                return functools.partial(self.fault, soap_ns, "Client", Draining.TEXT,
                                         refused=Refused("draining", Draining.TEXT))
            except Exception as e:
                return functools.partial(self.fault, soap_ns, "Server", str(e) or type(e).__name__)
            if call.expired():   # past its deadline a call fails, as the caller's own timer says
                return functools.partial(self.fault, soap_ns, "Server", "the caller's deadline passed while %s ran; its "
                                         "result was not sent" % op.name)
            return functools.partial(self.answer, soap_ns, op, answer)

        def answer(self, soap_ns, op, answer):
            env, out_body = _soap.envelope(soap_ns)
            response = etree.SubElement(out_body, codec.q(op.name + "Response"), nsmap={None: codec.ns})
            try:
                codec.write(answer, response)
            except Refused as r:
                self.fault(soap_ns, "Server", r.text)
                return
            self.send(200, _soap.to_bytes(env), self.content_type(soap_ns))

        def cancel(self, call_id):
            """A client's cancel message, answered as the Java server answers it: 204 when a call of
            that id from the same caller identity runs here and is cancelled now, 202 when none does
            and the cancel is kept for it (it has not come yet, or it ended), 404 for a malformed id,
            a bearer token that does not verify, or a cancel of a running call only (the
            ``Switchboard-Cancel-Running-Only`` header) that found none. It needs no permission to
            call the operation."""
            try:
                _read_body(self, server.max_message)   # read whole, so that the connection serves on
            except Refused as r:
                self.fault(_soap.SOAP11, "Client", r.text, refused=r)
                return
            try:
                canceller = server.identify(self.peer(), self.headers.get("Authorization"))
            except PermissionDenied:
                canceller = None   # cancels nothing
            status = _SoapCalls.NOT_FOUND if canceller is None or not well_formed_call_id(call_id) \
                else server.soap_calls.cancel(canceller.identity, call_id, RUNNING_ONLY_HEADER in self.headers)
            self.send_response(status)
            if status != _SoapCalls.CANCELLED:
                self.send_header("Content-Length", "0")   # a 204 has no body, and may not say so
            self.end_headers()

        def close_if_body_left(self):
            """A request answered without its body read closes its connection after the answer: the
            body's bytes, left in the stream, would otherwise be read as the next request."""
            if self.headers.get("Transfer-Encoding") or self.headers.get("Content-Length", "0").strip() != "0":
                self.close_connection = True

        def peer(self):
            address = _address.of_peer(self.client_address)
            getpeercert = getattr(self.connection, "getpeercert", None)
            if getpeercert is None:
                return _peer.from_der(None, address)
            return _peer.from_der(getpeercert(binary_form=True), address, self.connection)

        def deny(self, soap_ns, denied):
            """A Fault whose code is sb:PermissionDenied (SOAP 1.2: a Sender fault with that Subcode), its
            detail an sb:refused naming the reason and the path, which readers of refusals already take."""
            soap_ns = soap_ns if soap_ns in (_soap.SOAP11, _soap.SOAP12) else _soap.SOAP11
            env, body = _soap.envelope(soap_ns)
            fault = etree.SubElement(body, "{%s}Fault" % soap_ns, nsmap={"sb": _soap.SB_SOAP})
            detail = etree.Element("{%s}refused" % _soap.SB_SOAP, nsmap={"sb": _soap.SB_SOAP})
            detail.set("reason", denied.reason)
            detail.set("path", denied.path)
            if soap_ns == _soap.SOAP11:
                etree.SubElement(fault, "faultcode").text = "sb:" + _soap.PERMISSION_DENIED
                etree.SubElement(fault, "faultstring").text = denied.text
                etree.SubElement(fault, "detail").append(detail)
            else:
                code = etree.SubElement(fault, "{%s}Code" % soap_ns)
                etree.SubElement(code, "{%s}Value" % soap_ns).text = "soapenv:Sender"
                sub = etree.SubElement(code, "{%s}Subcode" % soap_ns)
                etree.SubElement(sub, "{%s}Value" % soap_ns).text = "sb:" + _soap.PERMISSION_DENIED
                reason = etree.SubElement(fault, "{%s}Reason" % soap_ns)
                etree.SubElement(reason, "{%s}Text" % soap_ns).text = denied.text
                etree.SubElement(fault, "{%s}Detail" % soap_ns).append(detail)
            self.send(500, _soap.to_bytes(env), self.content_type(soap_ns))

        @staticmethod
        def content_type(soap_ns):
            return ("application/soap+xml" if soap_ns == _soap.SOAP12 else "text/xml") + "; charset=UTF-8"

        def fault(self, soap_ns, code, text, refused=None, detail=None):
            soap_ns = soap_ns if soap_ns in (_soap.SOAP11, _soap.SOAP12) else _soap.SOAP11
            env, body = _soap.envelope(soap_ns)
            fault = etree.SubElement(body, "{%s}Fault" % soap_ns)
            if refused is not None:
                detail = etree.Element("{%s}refused" % _soap.SB_SOAP, nsmap={"sb": _soap.SB_SOAP})
                detail.set("reason", refused.reason)
                if refused.field:
                    detail.set("field", refused.field)
            if soap_ns == _soap.SOAP11:
                etree.SubElement(fault, "faultcode").text = "soapenv:" + code
                etree.SubElement(fault, "faultstring").text = text
                if detail is not None:
                    etree.SubElement(fault, "detail").append(detail)
            else:
                c = etree.SubElement(fault, "{%s}Code" % soap_ns)
                etree.SubElement(c, "{%s}Value" % soap_ns).text = "soapenv:" + ("Sender" if code == "Client" else "Receiver")
                etree.SubElement(etree.SubElement(fault, "{%s}Reason" % soap_ns), "{%s}Text" % soap_ns).text = text
                if detail is not None:
                    etree.SubElement(fault, "{%s}Detail" % soap_ns).append(detail)
            status = 413 if refused is not None and refused.reason == "size-limit" else 500
            self.send(status, _soap.to_bytes(env), self.content_type(soap_ns))

    return SoapHandler


def serve(obj, schema, registry=None, name=None, **options):
    """A Server for ``obj``; see the module's documentation for the options."""
    return Server(obj, schema, registry=registry, name=name, **options)
