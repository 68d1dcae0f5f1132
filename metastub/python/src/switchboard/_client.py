"""Calling components knowing only the registry: the Python meta-stub.

Each call goes through the same steps as the Java meta-stub's chain: a call id (kept by every
attempt), a replica (the one with the fewest calls in flight from this client, ties in turn;
failed replicas avoided for a back-off), the protocol (pinned on the call, or chosen by the call's,
the operation's or the component's policy among the candidates not in back-off), the attempt, a
record, and the failsafe: a call that fails on a protocol other than SOAP runs again over SOAP,
with the same call id, when that cannot run the operation twice (the request never reached it,
the operation is idempotent, or the server answers a repeated call id with the first result)."""

import asyncio
import concurrent.futures
import contextlib
import functools
import re
import secrets
import threading
import time
from urllib.parse import urlparse

from . import _tcp, _trace, _values, context, policies
from ._schema import Interface
from ._soap import SoapCodec
from ._token import BearerToken, PlainTextToken
from ._tcp import TcpTransport
from ._transport import FaultMessage, GrpcTransport, SoapTransport
from .errors import (Draining, NoCommonProtocol, NotFound, RegistryUnavailable, SwitchboardError, TransportError,
                     fault_class)
from .policies import FAILSAFE

DEFAULT_PROTOCOLS = ("tcp", "grpc", "soap")
KNOWN_PROTOCOLS = {"tcp", "grpc", "soap"}
PROTECTED_SCHEMES = {"grpcs", "https", "tcps"}
# protocols a policy takes only for calls up to a size (bulk goes over gRPC, which streams it in parts)
SMALL_ONLY = {"tcp": _tcp.POLICY_MAX_BYTES}
SMALL_CALL_BYTES = min(SMALL_ONLY.values())
_REASONS = {}   # (policy, level) -> the reason string, made once


def new_call_id():
    """128 random bits in hex, as the Java meta-stub's call ids."""
    return secrets.token_hex(16)


class CallRecord:
    """One attempt of a call, with the fields of the Java meta-stub's CallRecord: which operation,
    its call id, over which protocol to which address, why (the policy's reason, ``pinned on call``
    or ``fallback from grpc (...)``), the request payload counted, how long it took (seconds), how it
    ended (``error`` is None on success, a declared fault included) and the response payload."""

    __slots__ = ("component", "operation", "call_id", "protocol", "address", "reason", "estimated_bytes",
                 "latency", "error", "response_bytes", "via")

    def __init__(self, component, operation, call_id, protocol, address, reason, estimated_bytes, latency, error,
                 response_bytes=-1, via=None):
        self.component, self.operation, self.call_id, self.via = component, operation, call_id, via
        self.protocol, self.address, self.reason = protocol, address, reason
        self.estimated_bytes, self.latency, self.error, self.response_bytes = estimated_bytes, latency, error, response_bytes

    @property
    def fallback(self):
        """Whether this attempt was the failsafe's repeat over SOAP."""
        return self.reason.startswith("fallback")

    @property
    def succeeded(self):
        return self.error is None

    @property
    def payload_bytes(self):
        return -1 if self.estimated_bytes < 0 else self.estimated_bytes + max(0, self.response_bytes)

    def __repr__(self):
        return "CallRecord(%s.%s over %s to %s, %s, %.3f ms%s)" % (
            self.component, self.operation, self.protocol, self.address, self.reason, self.latency * 1e3,
            "" if self.error is None else ", error: " + self.error)


class _Context:
    """What a policy sees of one call."""

    def __init__(self, operation, estimated, expected_response, suite_candidates, replica):
        self.operation = operation
        self.estimated_bytes, self.expected_response_bytes = estimated, expected_response
        self.suite_candidates, self._replica = suite_candidates, replica

    def address(self, protocol):
        return self._replica.endpoints.get(protocol)


class _Plan:
    """One call: its operation, the request encoded once, what the caller asked and its call id;
    ``cancel``, for an async call, what its caller's cancel does to the attempt under way. The
    timeout is each attempt's (as the Java ``ClientSettings.callTimeout``); ``deadline`` (on
    ``time.monotonic``), the whole call's, inherited from the served call that makes it: every
    attempt, a fallback or another replica's too, gets only what is left of it."""

    __slots__ = ("op", "request", "numpy", "pinned", "policy", "timeout", "deadline", "call_id", "cancel", "trace",
                 "attempts")

    def __init__(self, op, request, numpy, pinned, policy, timeout, call_id, deadline=None, trace=None):
        self.op, self.request, self.numpy, self.pinned = op, request, numpy, pinned
        self.policy, self.timeout, self.call_id = policy, timeout, call_id
        self.deadline = deadline
        self.trace = trace   # the served call's trace context, sent on when the hop has no span of its own
        self.cancel = None
        self.attempts = 0

    def time_left(self, protocol=None):
        """Seconds the next attempt, over ``protocol``, may take (None: no limit): its timeout, or
        less when the call's deadline is nearer; raises _DeadlinePassed once that has passed."""
        if self.deadline is None:
            return self.timeout
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _DeadlinePassed(protocol or "meta-stub", TransportError.NOT_DELIVERED,
                                  "the deadline its caller left %s passed before %s" % (
                                      self.op.name, "its attempt over %s could start" % protocol if protocol
                                      else "it was sent"))
        return left if self.timeout is None else min(self.timeout, left)


class _DeadlinePassed(TransportError):
    """The call's deadline passed before an attempt could start: no protocol's or replica's fault,
    and nothing left to fall back with."""

    def __init__(self, protocol, delivery, message):
        super().__init__(protocol, delivery, message)
        self.text = message


class _Cancel:
    """An async call's cancel, for its attempts that run on a thread (SOAP, streamed gRPC, and
    whatever follows a failed attempt): the transport hands over how to stop the attempt under
    way (``during``); the caller's cancel runs it (the cancel message, the gRPC call's cancel, the
    tcp cancel frame), and no failsafe or other replica takes the call after it."""

    def __init__(self):
        self._lock = threading.Lock()
        self.cancelled = False
        self._stop = None

    def during(self, stop):
        """Called by the transport as its attempt starts; if the caller cancelled meanwhile, stops it
        and raises CancelledError, so that nothing more of the attempt is sent."""
        with self._lock:
            self._stop = stop
            cancelled = self.cancelled
        if cancelled:
            stop()
            raise concurrent.futures.CancelledError()

    def done(self):
        with self._lock:
            self._stop = None

    def __call__(self):
        with self._lock:
            self.cancelled = True
            stop, self._stop = self._stop, None
        if stop is not None:
            stop()

    def check(self):
        """Raises CancelledError once the caller has cancelled the call."""
        if self.cancelled:
            raise concurrent.futures.CancelledError()


class _Selection:
    """The protocol of one attempt, why, by which policy, and the request's size as counted."""

    __slots__ = ("protocol", "reason", "policy", "pinned", "estimated")

    def __init__(self, protocol, reason, policy, pinned, estimated):
        self.protocol, self.reason, self.policy, self.pinned, self.estimated = protocol, reason, policy, pinned, estimated


def _chain(source, target):
    """Settles the concurrent Future ``target`` as ``source`` is settled, unless its caller
    cancelled it (then ``source`` is cancelled if it has not run yet); returns ``target``."""
    def copy(done):
        if target.cancelled():
            return
        try:
            target.set_result(done.result())
        except BaseException as e:
            target.set_exception(e)
    source.add_done_callback(copy)
    target.add_done_callback(lambda t: source.cancel() if t.cancelled() else None)
    return target


def _awaitable(future):
    """An asyncio future in a running event loop (settled on the loop's thread), else the
    concurrent Future itself."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return future
    return asyncio.wrap_future(future)


def protected(address):
    """Whether an endpoint's address speaks TLS (``grpcs://``, ``https://``)."""
    return urlparse(address).scheme in PROTECTED_SCHEMES


def usable_endpoints(entry, protocols, registry_protected):
    """{protocol: address} of the endpoints this client may take, as the Java ProtocolSuite decides:
    when the registry is ``https://`` or the entry's SOAP endpoint is protected, a plain-text endpoint
    (``grpc://``, ``http://``) is never taken, so that nobody who can write an entry or sit on the
    path downgrades a TLS client to plain text; the TLS one of a protocol is taken when both are
    offered. Raises NoCommonProtocol, naming the refused endpoints, when no SOAP endpoint remains."""
    first_soap = entry.endpoint(FAILSAFE)
    must_protect = registry_protected or (first_soap is not None and protected(first_soap))
    chosen, refused = {}, []
    for protocol, address in entry.endpoints:
        if protocol not in protocols or protocol in chosen:
            continue
        if must_protect and not protected(address):
            refused.append(address)
            continue
        chosen[protocol] = address
    if FAILSAFE not in chosen:
        if refused and any(p == FAILSAFE for p, _ in entry.endpoints):
            raise NoCommonProtocol(
                "refusing a downgrade to plain text: %s %s offers no TLS endpoint for %s (refused: %s)%s"
                % (entry.name, entry.instance_id, FAILSAFE, ", ".join(refused),
                   " and the registry is https://" if registry_protected else ""))
        raise NoCommonProtocol("%s must be spoken by both sides (client %s, server %s)"
                               % (FAILSAFE, list(protocols), [p for p, _ in entry.endpoints]))
    return chosen, refused


class _Replica:
    """One instance of the component: its transports and which of its protocols are in back-off."""

    def __init__(self, board, component, entry):
        self.entry = entry
        self.board = board
        self.component = component
        self.endpoints, self.refused = usable_endpoints(entry, board.protocols, board.registry_protected)
        self.candidates = [p for p in board.protocols if p in self.endpoints]
        self.health = policies.Backoff()
        self.transports = {}
        self.in_flight = 0
        self.lock = threading.Lock()

    def transport(self, protocol):
        t = self.transports.get(protocol)
        if t is None:
            with self.lock:
                t = self.transports.get(protocol)
                if t is None:
                    address = self.endpoints[protocol]
                    iface, codec = self.component.iface, self.component.codec
                    if protocol == "tcp":
                        t = TcpTransport(iface, address, self.board.tls, self.board.token, unix=self.board.unix_sockets)
                    elif protocol == "grpc":
                        t = GrpcTransport(iface, address, self.board.tls, self.board.token, unix=self.board.unix_sockets)
                    else:
                        t = SoapTransport(iface, codec, address, self.board.tls, token=self.board.token)
                    self.transports[protocol] = t
        return t

    def avoided(self):
        return [p for p in self.candidates if p != FAILSAFE and self.health.avoided(p)]

    def close(self):
        for t in self.transports.values():
            t.close()


class _Operation:
    def __init__(self, component, name):
        self.component, self.name = component, name
        functools.update_wrapper(self, component._describe(name), updated=())

    def __call__(self, protocol=None, policy=None, timeout=None, call_id=None, **values):
        return self.component._call(self.name, values, protocol, policy, timeout, call_id)


class Component:
    """The stub of one component, made at run time from its registry entry: its operations are
    methods taking the schema's field names as keyword arguments (``echo.echoDoubles(values=...)``),
    each also as ``NAME_async`` (an asyncio future in a running loop, a concurrent future otherwise;
    over tcp and unary gRPC no thread waits for it).
    Every call takes ``protocol=`` (pin) or ``policy=``, and ``timeout=`` (seconds)."""

    def __init__(self, board, name, entries, policy, operation_policies):
        self._board, self.name = board, name
        proto = next((e.interface_proto for e in entries if e.interface_proto), None)
        if proto is None:
            raise SwitchboardError("the entry of %s carries no .proto (PROTO document); a Python client needs it" % name)
        self.iface = board._interface(proto)
        namespace = re.search(r"namespace (\S+?),", proto)
        self.codec = SoapCodec(self.iface, namespace.group(1) if namespace else "urn:switchboard:" + name)
        self.types = _values.Types(self.iface)
        self.faults = {}
        for op in self.iface.operations.values():
            if op.fault is not None:
                self.faults[op.name] = fault_class(op.fault.DESCRIPTOR.name, [
                    f.name for f in op.fault.DESCRIPTOR.fields])
        self.policy = policies.by_name(policy)
        self.operation_policies = {k: policies.by_name(v) for k, v in (operation_policies or {}).items()}
        self._replicas, refusals = [], []
        for e in entries:
            try:
                self._replicas.append(_Replica(board, self, e))
            except NoCommonProtocol as refusal:   # an instance this client cannot (or must not) call
                refusals.append(refusal)
        if not self._replicas:
            raise refusals[0]
        self._replica_health = policies.Backoff()
        self._turn = 0
        self._lock = threading.Lock()
        self._response_sizes = {}
        self._last = None
        self._local = threading.local()

    # -- the stub's surface -----------------------------------------------------------------------

    def __getattr__(self, attr):
        if attr.startswith("_"):
            raise AttributeError(attr)
        ops = self.__dict__.get("iface").operations if "iface" in self.__dict__ else {}
        if attr in ops:
            made = self.__dict__.setdefault("_made_operations", {})   # made once: a call looks it up each time
            operation = made.get(attr)
            if operation is None:
                operation = made[attr] = _Operation(self, attr)
            return operation
        if attr.endswith("_async") and attr[:-6] in ops:
            name = attr[:-6]
            return lambda protocol=None, policy=None, timeout=None, call_id=None, **values: _awaitable(
                self._call_async(name, values, protocol, policy, timeout, call_id))
        for fault in self.__dict__.get("faults", {}).values():
            if fault.__name__ == attr:
                return fault
        raise AttributeError("%s has no operation %r (operations: %s)" % (self.name, attr, ", ".join(sorted(ops))))

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.iface.operations)
                      | {n + "_async" for n in self.iface.operations})

    @property
    def last_call(self):
        """The CallRecord of the last attempt of this thread's last call through this stub (of any
        thread's, for a thread that made none): ``protocol``, ``reason``, ``fallback``, ..."""
        return getattr(self._local, "last", None) or self._last

    @property
    def operations(self):
        return sorted(self.iface.operations)

    @property
    def entries(self):
        return [r.entry for r in self._replicas]

    def _describe(self, name):
        op = self.iface.operations[name]
        fields = [f.name for f in op.request.DESCRIPTOR.fields if f.name not in ("sb_nodes", "sb_nulls")]

        def doc():
            pass
        doc.__name__ = name
        doc.__doc__ = "%s(%s) of %s%s%s" % (name, ", ".join(f + "=..." for f in fields), self.name,
                                            "; idempotent" if op.idempotent else "", "; one-way" if op.one_way else "")
        return doc

    # -- a call -----------------------------------------------------------------------------------

    def _call(self, name, values, protocol, policy, timeout, call_id):
        outer = context.current_call()
        plan = self._plan(name, values, protocol, policy, timeout, call_id, outer)
        if outer is None:
            return self._run(plan)
        # made by a served operation: cancelled with the operation's call, on the wire too
        plan.cancel = _Cancel()
        drop = outer.on_cancel(plan.cancel)
        try:
            return self._run(plan)
        finally:
            drop()

    def _plan(self, name, values, protocol, policy, timeout, call_id, outer):
        """What every attempt of one call shares: the request encoded once, its call id and settings;
        ``outer``, the served call or ``deadline`` block the call is made in (None: neither), its deadline."""
        op = self.iface.operations[name]
        fields = {f.name for f in op.request.DESCRIPTOR.fields} - {"sb_nodes", "sb_nulls"}
        unknown = set(values) - fields
        if unknown:
            raise TypeError("%s() got unexpected keyword arguments %s (it takes %s)" % (
                name, ", ".join(sorted(unknown)), ", ".join(sorted(fields)) or "none"))
        encoder = _values.Encoder(self.iface, op.request.DESCRIPTOR)
        request = encoder.encode(values)
        if protocol is not None and protocol not in KNOWN_PROTOCOLS:
            raise NoCommonProtocol("call pins %s, which this client does not speak (it speaks %s)"
                                   % (protocol, sorted(KNOWN_PROTOCOLS)))
        plan = _Plan(op, request, encoder.saw_numpy, protocol, policy,
                     timeout if timeout is not None else self._board.timeout, call_id or new_call_id(),
                     # made by a served operation: within what its caller left it, never more
                     None if outer is None else outer.deadline, None if outer is None else outer.trace)
        plan.time_left(protocol)   # raises, before anything is sent, once that has passed
        return plan

    def _run(self, plan, first=None):
        """The call on its replicas, blocking; ``first`` is (replica, selection, failure or None) of
        an attempt chosen (and perhaps made) already, which the call goes on from."""
        op = plan.op
        tried, last = set(), None
        while True:
            if first is not None:
                replica, resumed, first = first[0], first[1:], None
            else:
                replica, resumed = self._pick_replica(tried), None
            if replica is None:
                if last is None:
                    raise NotFound("no instance of %s is bound in %s now" % (self.name, self._board.url))
                raise last
            tried.add(id(replica))
            with self._lock:
                replica.in_flight += 1
            try:
                response, raw = self._on_replica(replica, plan, resumed)
                self._replica_health.succeeded(replica.entry.instance_id)
                break
            except _DeadlinePassed as e:
                if last is not None and last.delivery == TransportError.MAY_HAVE_RUN:
                    raise TransportError(e.protocol, TransportError.MAY_HAVE_RUN, "%s; the attempt before may have run: "
                                         "%s" % (e.text, last)) from e
                raise
            except TransportError as e:
                if plan.cancel is not None:
                    plan.cancel.check()   # cancelled by its caller: not another replica's call either
                self._replica_health.failed(replica.entry.instance_id)
                last = e
                if e.delivery != TransportError.NOT_DELIVERED and not op.idempotent:
                    raise
            finally:
                with self._lock:
                    replica.in_flight -= 1
        return self._finish(plan, response, raw)

    def _finish(self, plan, response, raw):
        """The answer as the caller gets it: the response's values, or the declared fault raised."""
        op = plan.op
        if isinstance(response, FaultMessage):
            fields = _values.Decoder(self.iface, self.types).decode(response.message)
            raise self.faults[op.name](response.text, **fields)
        self._response_sizes[op.name] = response.ByteSize()
        decoded = _values.Decoder(self.iface, self.types, use_numpy=plan.numpy).decode(response, raw)
        return _values.unwrap(decoded, op.response, self.types)

    def _call_async(self, name, values, protocol, policy, timeout, call_id):
        """A concurrent Future of the call's answer. Over tcp (and gRPC for unary methods) the
        attempt waits on no thread: the connection's reader (grpcio's own threads) settles it. What
        cannot wait so (SOAP, streamed gRPC) and what follows a failed attempt (the failsafe, another
        replica) runs on a thread of the board's pool, as a blocking call."""
        future = concurrent.futures.Future()
        try:
            outer = context.current_call()
            plan = self._plan(name, values, protocol, policy, timeout, call_id, outer)
            plan.cancel = _Cancel()
            future.add_done_callback(lambda f: plan.cancel() if f.cancelled() else None)
            if outer is not None:   # made by a served operation: cancelled with the operation's call
                drop = outer.on_cancel(future.cancel)
                future.add_done_callback(lambda f: drop())
                if future.cancelled():
                    return future
            replica = self._pick_replica(set())
            if replica is None:
                raise NotFound("no instance of %s is bound in %s now" % (self.name, self._board.url))
            selection = self._select(replica, plan)
            transport = replica.transport(selection.protocol)
            with self._lock:
                replica.in_flight += 1
            started = time.perf_counter()
            traced = None
            try:
                left = plan.time_left(selection.protocol)
                if hasattr(transport, "call_async"):
                    traced = self._traced(plan, selection)
                    attempt = transport.call_async(plan.op, plan.request, plan.call_id, left, trace=traced.trace)
                else:
                    attempt = None
            except BaseException as e:
                attempt = concurrent.futures.Future()
                attempt.set_exception(e)
        except Exception as e:
            future.set_exception(e)
            return future
        if attempt is None:   # made as a blocking call: its span, never ended here, is never exported
            plan.attempts = 0
            with self._lock:
                replica.in_flight -= 1
            return _chain(self._board._pool().submit(self._run, plan, (replica, selection, None)), future)

        def attempted(done):
            with self._lock:
                replica.in_flight -= 1
            if future.cancelled():
                if traced is not None:
                    traced.end(concurrent.futures.CancelledError())
                return   # its caller cancelled it: no failsafe, nobody to tell
            try:
                response, raw = done.result()
            except FaultMessage as f:
                response, raw, failure = f, None, None
            except BaseException as e:
                response, raw, failure = None, None, e
            else:
                failure = None
            self._attempted(replica, plan, selection, transport, started, response, failure, mine=False, traced=traced)
            if isinstance(failure, TransportError):   # the failsafe and failover, as a blocking call
                _chain(self._board._pool().submit(self._run, plan, (replica, selection, failure)), future)
                return
            try:
                if failure is not None:
                    raise failure
                self._replica_health.succeeded(replica.entry.instance_id)
                future.set_result(self._finish(plan, response, raw))
            except BaseException as e:
                future.set_exception(e)

        attempt.add_done_callback(attempted)
        # a call its caller cancels is cancelled on the wire too (over tcp: the cancel frame)
        future.add_done_callback(lambda f: attempt.cancel() if f.cancelled() else None)
        return future

    def _pick_replica(self, tried):
        with self._lock:
            fresh = [r for r in self._replicas if id(r) not in tried]
            if not fresh:
                return None
            healthy = [r for r in fresh if not self._replica_health.avoided(r.entry.instance_id)] or fresh
            least = min(r.in_flight for r in healthy)
            ties = [r for r in healthy if r.in_flight == least]
            self._turn += 1
            return ties[self._turn % len(ties)]

    def _select(self, replica, plan):
        """The protocol of the call's attempt on ``replica``: pinned, or the policy's choice."""
        op, pinned, policy = plan.op, plan.pinned, plan.policy
        estimated = plan.request.ByteSize()
        if pinned is not None:
            if pinned not in replica.candidates:
                raise NoCommonProtocol("call pins %s, which client and server do not share %s%s"
                                       % (pinned, replica.candidates, "; refused as a downgrade to plain text: "
                                          + ", ".join(replica.refused) if replica.refused else ""))
            return _Selection(pinned, "pinned on call", self.policy, True, estimated)
        level = "call"
        chosen = policies.by_name(policy) if policy is not None else None
        if chosen is None:
            chosen, level = self.operation_policies.get(op.name), "operation"
        if chosen is None:
            chosen, level = self.policy, "stub"
        avoided = replica.avoided() if replica.health.states else ()
        expected = self._response_sizes.get(op.name, 0)
        if not avoided and estimated + expected <= SMALL_CALL_BYTES:
            candidates = replica.candidates   # the common small call: every candidate, nothing to filter
        else:
            fixed = getattr(chosen, "protocol", None)
            candidates = [p for p in replica.candidates if p not in avoided
                          and (p == fixed or estimated + expected <= SMALL_ONLY.get(p, estimated + expected))]
        context = _Context(op.name, estimated, expected, replica.candidates, replica)
        protocol = chosen.select(context, candidates)
        if avoided:
            reason = "%s (%s policy; %s in back-off)" % (chosen.name, level, ", ".join(sorted(avoided)))
        else:
            reason = _REASONS.get((chosen.name, level))
            if reason is None:
                reason = _REASONS[(chosen.name, level)] = "%s (%s policy)" % (chosen.name, level)
        return _Selection(protocol, reason, chosen, False, estimated)

    def _on_replica(self, replica, plan, resumed=None):
        """One replica's meta-stub: select, attempt, record, and the failsafe; ``resumed`` is
        (selection, failure or None) of an attempt chosen (and perhaps made) already."""
        op = plan.op
        selection, failure = resumed if resumed is not None else (self._select(replica, plan), None)
        protocol = selection.protocol
        try:
            if failure is not None:
                raise failure
            return self._attempt(replica, plan, selection)
        except TransportError as e:
            if plan.cancel is not None:
                plan.cancel.check()   # cancelled by its caller: no failsafe
            # a draining server refuses over SOAP too, and its protocols are not at fault: the next
            # replica; a deadline that passed before the attempt is nobody's fault, and leaves no time
            if selection.pinned or protocol == FAILSAFE or isinstance(e, (Draining, _DeadlinePassed)):
                raise
            replica.health.failed(protocol)
            why = self._repeatable(op, e, replica)
            if why is None:
                raise TransportError(protocol, TransportError.MAY_HAVE_RUN,
                                     "%s failed and was not repeated over SOAP: it is not idempotent and the server "
                                     "does not recognise call ids (%s)" % (op.name, e)) from e
            fallback = _Selection(FAILSAFE, "fallback from %s (%s)" % (protocol, why), selection.policy, False,
                                  selection.estimated)
            try:
                return self._attempt(replica, plan, fallback)
            except TransportError as second:
                if e.delivery == TransportError.MAY_HAVE_RUN and second.delivery == TransportError.NOT_DELIVERED:
                    raise TransportError(FAILSAFE, TransportError.MAY_HAVE_RUN,
                                         "%s over %s may have run; the fallback over SOAP was not delivered (%s)"
                                         % (op.name, protocol, second)) from second
                raise

    @staticmethod
    def _repeatable(op, failure, replica):
        if failure.delivery == TransportError.NOT_DELIVERED:
            return "the request never reached the operation"
        if op.idempotent:
            return "the operation is idempotent"
        if "call-ids" in replica.entry.features:
            return "the server answers a repeated call id with the first result"
        return None

    def _attempt(self, replica, plan, selection):
        transport = replica.transport(selection.protocol)
        timeout = plan.time_left(selection.protocol)
        started = time.perf_counter()
        cancel = plan.cancel
        traced = self._traced(plan, selection)
        try:
            if cancel is None:
                response, raw = transport.call(plan.op, plan.request, plan.call_id, timeout, trace=traced.trace)
            else:
                cancel.check()
                try:
                    response, raw = transport.call(plan.op, plan.request, plan.call_id, timeout,
                                                   on_cancel=cancel.during, trace=traced.trace)
                finally:
                    cancel.done()
        except FaultMessage as f:
            response, raw = f, None
        except BaseException as e:
            self._attempted(replica, plan, selection, transport, started, None, e, traced=traced)
            raise
        self._attempted(replica, plan, selection, transport, started, response, None, traced=traced)
        return response, raw

    def _traced(self, plan, selection):
        """The attempt's span, a child of the current one, and the trace context it sends."""
        number, plan.attempts = plan.attempts, plan.attempts + 1
        return _trace.attempt(self.iface.name, plan.op.name, selection.protocol, plan.call_id, number,
                              selection.reason, plan.trace)

    def _attempted(self, replica, plan, selection, transport, started, response, failure, mine=True, traced=None):
        """After each attempt, blocking or not: the protocol's health (any answer, a declared fault
        or a refusal included, ends its back-off), the record, what the policy learns. ``mine``: the
        record is also this thread's ``last_call`` (not for an async attempt, settled elsewhere)."""
        if traced is not None:
            traced.end(failure)
        if not isinstance(failure, TransportError):
            replica.health.succeeded(selection.protocol)
        size = response.ByteSize() if response is not None and hasattr(response, "ByteSize") else -1
        record = CallRecord(self.name, plan.op.name, plan.call_id, selection.protocol, transport.address,
                            selection.reason, selection.estimated, time.perf_counter() - started,
                            None if failure is None else "%s: %s" % (type(failure).__name__, failure), size,
                            getattr(transport, "via", None))
        self._last = record
        if mine:
            self._local.last = record
        selection.policy.observe(record)
        self._board._recorded(record)

    # -- following the registry --------------------------------------------------------------------

    def _replace_entries(self, entries):
        with self._lock:
            known = {r.entry.instance_id: r for r in self._replicas}
        for entry in entries:
            if entry.instance_id not in known or known[entry.instance_id].entry.endpoints != entry.endpoints:
                self._apply("appear", entry.instance_id, entry)
        for instance in set(known) - {e.instance_id for e in entries}:
            self._apply("go", instance, None)

    def _apply(self, kind, instance, entry):
        replica = None
        if kind != "go" and entry is not None:
            try:
                replica = _Replica(self._board, self, entry)
            except NoCommonProtocol:
                replica = None   # an instance this client cannot call (no SOAP): as if it were not there
        with self._lock:
            old = [r for r in self._replicas if r.entry.instance_id == instance]
            if replica is not None and old and old[0].entry.endpoints == entry.endpoints:
                return
            self._replicas = [r for r in self._replicas if r.entry.instance_id != instance]
            if replica is not None:
                self._replicas.append(replica)
        for r in old:
            if r.in_flight == 0:
                r.close()

    def close(self):
        if self._board.watch:
            self._board._watcher().forget(self)
        for r in self._replicas:
            r.close()


@contextlib.contextmanager
def _registry_reached(url):
    """Raises what reaching the registry at ``url`` met as RegistryUnavailable; its answers (faults,
    refusals) as they are."""
    from ._registry import NOT_DELIVERED, delivery

    try:
        yield
    except SwitchboardError:
        raise
    except Exception as e:
        how = delivery(e)
        if how is None:
            raise
        raise RegistryUnavailable(url, TransportError.NOT_DELIVERED if how == NOT_DELIVERED
                                  else TransportError.MAY_HAVE_RUN, e) from e


class Board:
    """A connection to a registry: looks components up by name and makes their stubs."""

    def __init__(self, registry_url, tls=None, policy="adaptive", protocols=DEFAULT_PROTOCOLS, timeout=60.0,
                 listener=None, watch=True, watch_wait=10, token=None, unix_sockets=True):
        from ._registry import RegistryClient, registry_urls

        unknown = [p for p in protocols if p not in KNOWN_PROTOCOLS]
        if unknown:
            raise ValueError("this client speaks %s, not %s" % (sorted(KNOWN_PROTOCOLS), unknown))
        if FAILSAFE not in protocols:
            raise ValueError("%s must be among the protocols: it is the failsafe" % FAILSAFE)
        urls = registry_urls(registry_url)   # a malformed list is refused before anything connects
        self.url, self.tls, self.timeout = ",".join(urls), tls, timeout
        # an https:// registry (all are, or none): every endpoint taken is TLS too (usable_endpoints)
        self.registry_protected = urlparse(urls[0]).scheme == "https"
        self.token = BearerToken.of(token)
        for url in urls if self.token is not None else ():
            if not BearerToken.may_travel_to(url):
                raise PlainTextToken(url)
        self.watch, self.watch_wait = watch, watch_wait
        self.unix_sockets = unix_sockets
        if tls is not None and not tls.checks_grpc and "grpc" in protocols:
            # grpcio's TLS reads no revocation lists: a server they revoke would be called
            protocols = tuple(p for p in protocols if p != "grpc")
        self.protocols = tuple(protocols)
        self.policy = policy
        policies.by_name(policy)   # refuse a bad name now, not at the first call
        with _registry_reached(self.url):
            self.registry = RegistryClient(urls, tls=tls, timeout=timeout, token=self.token)
        self.listeners = [listener] if listener else []
        self._interfaces = {}
        self._components = []
        self._executor = None
        self._watch = None
        self._lock = threading.Lock()

    @property
    def watcher(self):
        """The one watch that keeps this board's replica sets equal to the registry's entries, for
        every name looked up (``switchboard._watch.RegistryWatcher``; None before the first lookup
        or with ``watch=False``): ``mode`` (``stream`` or ``poll``), ``streams_opened``."""
        return self._watch

    def _watcher(self):
        from ._watch import RegistryWatcher

        with self._lock:
            if self._watch is None:
                self._watch = RegistryWatcher(self)
            return self._watch

    def lookup(self, name, policy=None, operation_policies=None):
        """The stub of the component bound under ``name`` (all its replicas)."""
        watcher = self._watcher() if self.watch else None
        mark = watcher.mark(name) if watcher is not None else None   # before the lookup: see follow
        with _registry_reached(self.url):
            entries = self.registry.lookup(name)
        if not entries:
            raise NotFound("no component is bound as %r in %s" % (name, self.url))
        c = Component(self, name, entries, policy or self.policy, operation_policies)
        self._components.append(c)
        if watcher is not None:
            watcher.follow(c, mark)
        return c

    def _interface(self, proto):
        with self._lock:
            iface = self._interfaces.get(proto)
            if iface is None:
                iface = self._interfaces[proto] = Interface(proto)
            return iface

    def _recorded(self, record):
        for listener in self.listeners:
            listener(record)

    def _pool(self):
        """The threads of what cannot wait without one: SOAP attempts of async calls, the failsafe."""
        with self._lock:
            if self._executor is None:
                self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=16,
                                                                       thread_name_prefix="switchboard-call")
            return self._executor

    def close(self):
        if self._watch is not None:
            self._watch.close()
        for c in self._components:
            c.close()
        if self._executor is not None:
            self._executor.shutdown(wait=False)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
