"""Following the registry: one watch per Board for every name it looks up, as the Java
``Switchboard``'s one watch (``RegistryWatch`` on every name).

When the registry has a watch stream (its SOAP ``watch`` answer names it, ``grpc://HOST:PORT``),
the watch is one gRPC server-streaming call, ``switchboard.registry.RegistryWatch/follow``, whose
request is the SOAP ``watch`` message and whose messages are ``watchResponse`` in the registry's
proto3 form: a ``reset`` message is a snapshot (an ``appear`` for every instance), the others the
changes after the previous one. The stream watches every name, as Java's does, so a name looked
up later needs no new stream; a name whose changes the stream told while it was being looked up
is looked up again (see ``mark``). It runs on one thread of the Board's.

As the Java client does, a stream that ends, fails or sends what cannot be read is asked for again
after a pause that doubles from 0.1 s to 5 s (5 s to 60 s when the registry refuses it over its
limits), asking the registry again where it streams; a registry without a stream is long-polled
over SOAP (``watch``) on the same thread, every name in one poll.

Over several registries the watch asks where to stream in the order of the Board's reads; a stream
that breaks or cannot be opened makes the next registry the one asked first, and on another
registry's stream the watch starts from a snapshot (every name read again), so that no change made
meanwhile is missed. A poll then waits at most FAILOVER_WATCH_SECONDS, and its answer at most 5 s
more, so that a registry that is cut off is left for the next soon."""

import logging
import random
import threading
import time

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from . import _address
from ._registry import FAILOVER_WATCH_ANSWER, FAILOVER_WATCH_SECONDS, Entry

LOG = logging.getLogger("switchboard.watch")
FOLLOW = "/switchboard.registry.RegistryWatch/follow"
RETRY_FIRST, RETRY_MAX = 0.1, 5.0           # seconds, as the Java RegistryWatch
REFUSED_FIRST, REFUSED_MAX = 5.0, 60.0
MIN_EMPTY_POLL = 1.0                        # an empty poll answered sooner: the registry is busy, pause
MAX_MESSAGE_BYTES = 64 << 20                # a snapshot of tens of thousands of entries, as the Java client reads
KEEPALIVE_MS = 10_000                       # notice a registry that is cut off (the registry permits 5 s)
KEEPALIVE_TIMEOUT_MS = 5_000                # a ping unanswered this long ends the stream, as in the Java watch


def _messages():
    """watch and watchResponse of the registry's .proto (the interface compiler's, from registry.xsd),
    with the fields a follower reads; unknown fields are skipped as protobuf does."""
    P = descriptor_pb2.FieldDescriptorProto
    f = descriptor_pb2.FileDescriptorProto(name="switchboard_python_registry_watch.proto",
                                           package="switchboard.registry", syntax="proto3")
    S, I32, I64, B, M = P.TYPE_STRING, P.TYPE_INT32, P.TYPE_INT64, P.TYPE_BOOL, P.TYPE_MESSAGE

    def message(name, *fields):
        """fields: (name, number, type, how): how is `optional` (proto3's, absent tells from empty),
        `plain`, `repeated`, or a message type's name (`repeated NAME` for a list of them)."""
        m = f.message_type.add(name=name)
        for field_name, number, kind, how in fields:
            repeated = how.startswith("repeated")
            field = m.field.add(name=field_name, number=number, type=kind,
                                label=P.LABEL_REPEATED if repeated else P.LABEL_OPTIONAL)
            if kind == M:
                field.type_name = ".switchboard.registry." + how.split()[-1]
            elif how == "optional":
                field.proto3_optional = True
                field.oneof_index = len(m.oneof_decl)
                m.oneof_decl.add(name="_" + field_name)

    message("EndpointInfo", ("protocol", 1, S, "optional"), ("address", 2, S, "optional"))
    message("Entry", ("name", 1, S, "optional"), ("instanceId", 2, S, "optional"),
            ("endpoints", 3, M, "repeated EndpointInfo"), ("interfaceSchema", 4, S, "optional"),
            ("interfaceProto", 5, S, "optional"), ("wsdlUrl", 6, S, "optional"), ("features", 8, S, "repeated"),
            ("leaseSeconds", 9, I32, "optional"))
    message("Event", ("version", 1, I64, "plain"), ("kind", 2, S, "optional"), ("name", 3, S, "optional"),
            ("instanceId", 4, S, "optional"), ("entry", 5, M, "Entry"))
    message("watch", ("names", 1, S, "repeated"), ("epoch", 2, S, "optional"), ("sinceVersion", 3, I64, "optional"))
    message("watchResponse", ("epoch", 1, S, "optional"), ("version", 2, I64, "plain"), ("reset", 3, B, "plain"),
            ("events", 4, M, "repeated Event"), ("stream", 5, S, "optional"))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    return {m.name: message_factory.GetMessageClass(pool.FindMessageTypeByName("switchboard.registry." + m.name))
            for m in f.message_type}


MESSAGES = _messages()
WatchRequest, WatchResponse = MESSAGES["watch"], MESSAGES["watchResponse"]


def entry_of(message):
    """An Entry from the registry's protobuf Entry; ValueError when it names no instance."""
    if not message.name or not message.instanceId:
        raise ValueError("an entry without its name or instance id")
    return Entry({"name": message.name, "instanceId": message.instanceId,
                  "endpoints": [{"protocol": e.protocol, "address": e.address} for e in message.endpoints],
                  "interfaceSchema": message.interfaceSchema if message.HasField("interfaceSchema") else None,
                  "interfaceProto": message.interfaceProto if message.HasField("interfaceProto") else None,
                  "wsdlUrl": message.wsdlUrl if message.HasField("wsdlUrl") else None,
                  "features": list(message.features),
                  "leaseSeconds": message.leaseSeconds})


def read_changes(data):
    """(epoch, version, reset, [(kind, name, instance id, Entry or None)]) of one streamed message;
    ValueError when it is not a watchResponse a registry sends."""
    from google.protobuf.message import DecodeError

    try:
        r = WatchResponse.FromString(data)
    except DecodeError as e:
        raise ValueError("not a watchResponse: %s" % e) from None
    if not r.HasField("epoch"):
        raise ValueError("a watchResponse without the registry's epoch")
    events = []
    for e in r.events:
        if e.kind not in ("appear", "change", "go") or not e.name or not e.instanceId:
            raise ValueError("an event that cannot be read (kind %r)" % e.kind)
        if e.kind != "go" and not e.HasField("entry"):
            raise ValueError("a %s event without its entry" % e.kind)
        events.append((e.kind, e.name, e.instanceId, entry_of(e.entry) if e.HasField("entry") else None))
    return r.epoch, r.version, r.reset, events


class Backoff:
    """Pauses that double after each failure in a row, with jitter (half to all of the pause)."""

    def __init__(self, first, most):
        self.first, self.most, self.next = first, most, first

    def pause(self):
        base, self.next = self.next, min(self.most, self.next * 2)
        return base * (0.5 + random.random() / 2)

    def reset(self):
        self.next = self.first


class RegistryWatcher:
    """The Board's one watch: keeps the replica sets of its components equal to the registry's
    entries. ``streams_opened`` counts the streams it has opened (one while the registry keeps it),
    ``mode`` is ``stream`` or ``poll`` once it knows, ``refusal`` the registry's reason when it
    last refused the stream. ``by_name``: the registry's policy refused a stream of every name, so
    the stream names the names followed (and is opened again when one more is followed), as a Java
    ``Switchboard`` then watches each name it looks up."""

    def __init__(self, board):
        self.board = board
        self.streams_opened = 0
        self.mode = None
        self.refusal = None
        self._followers = {}                  # name -> the components following it
        self._cond = threading.Condition()
        # held while components are told of changes, so that one that starts following sees the
        # registry of one moment and then every change after it
        self._telling = threading.RLock()
        self._snapshots = 0                   # snapshots (and poll resets) told so far
        self._told = {}                       # name -> changes told for it so far
        self._streaming = False               # the stream has told a snapshot since the last poll
        self._closed = False
        self._call = None                     # the stream's call while it is open
        self._epoch = self._since = None
        self._retry = Backoff(RETRY_FIRST, RETRY_MAX)
        self._refused = Backoff(REFUSED_FIRST, REFUSED_MAX)
        self._channel = self._channel_address = None
        self._poller = None
        self._thread = None
        self.by_name = False
        self._stream_names = ()               # the names the open stream carries, once by_name

    # -- what the Board and its components call -------------------------------------------------------

    def mark(self, name):
        """What the watcher has told of ``name`` so far; taken before a lookup and handed to
        ``follow``, it shows whether changes were told while the lookup ran."""
        with self._telling:
            return self._snapshots, self._told.get(name, 0)

    def follow(self, component, mark=None):
        """Tells ``component`` of the changes to its name from now on. When changes to the name
        were told since ``mark`` (the lookup may be older or newer than they are), the name is
        looked up again, the watcher waiting meanwhile, so the component starts from now."""
        with self._telling:
            with self._cond:
                if self._closed:
                    return
                self._followers.setdefault(component.name, []).append(component)
                if self.by_name and component.name not in self._stream_names and self._call is not None:
                    self._call.cancel()   # the stream names its names: opened again with this one
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="switchboard-watch", daemon=True)
                    self._thread.start()
                self._cond.notify_all()
            if mark is not None and self.mark(component.name) != mark:
                try:
                    component._replace_entries(self.board.registry.lookup(component.name))
                except Exception as e:   # the registry is away: the next change or snapshot tells
                    LOG.warning("looking %s up again: %s", component.name, e)

    def forget(self, component):
        with self._telling, self._cond:
            followers = self._followers.get(component.name, [])
            if component in followers:
                followers.remove(component)
            if not followers:
                self._followers.pop(component.name, None)

    def close(self):
        with self._cond:
            self._closed = True
            call, self._call = self._call, None
            self._cond.notify_all()
        if call is not None:
            call.cancel()
        if self._channel is not None:
            self._channel.close()

    # -- the watch's thread ---------------------------------------------------------------------------

    def _names(self):
        with self._cond:
            while not self._followers and not self._closed:
                self._cond.wait()
            return sorted(self._followers)

    def _wait(self, seconds):
        """Pauses the thread; True when the watcher was closed meanwhile."""
        with self._cond:
            if not self._closed:
                self._cond.wait(seconds)
            return self._closed

    def _run(self):
        while not self._closed:
            names = self._names()
            if self._closed:
                return
            try:
                address = self.board.registry.stream_address(names)
            except Exception as e:
                self._failed("asking %s where it streams: %s" % (self.board.url, e), self._retry)
                continue
            tls = self.board.tls
            if address is not None and address.startswith("grpcs:") and tls is not None and not tls.checks_grpc:
                address = None   # a stream over grpcio's TLS, which reads no revocation lists: poll instead
            if address is None:
                self.mode = "poll"
                self._poll(names)
            else:
                self.mode = "stream"
                self._stream(address, names)

    def _failed(self, why, backoff):
        pause = backoff.pause()
        with self._cond:
            names = ", ".join(sorted(self._followers))
        LOG.warning("watching %s: %s; trying again in %d ms", names, why, pause * 1000)
        self._wait(pause)

    def _stream(self, address, names):
        import grpc

        request = WatchRequest()   # no names: every name, as the Java client's follower
        if self.by_name:
            request.names.extend(names)
            if tuple(names) != self._stream_names:
                self._streaming = False   # a name new to the stream: a snapshot of the names
            self._stream_names = tuple(names)
        if self._channel_address not in (None, address) and len(self.board.registry.urls) > 1:
            self._streaming = False   # another registry's versions are not this one's: read every name again
        if self._streaming:   # go on from the last change; else (first, or after polls) a snapshot
            request.epoch, request.sinceVersion = self._epoch, self._since
        try:
            metadata = self._metadata(address)
            follow = self._channel_to(address).unary_stream(FOLLOW, request_serializer=None,
                                                            response_deserializer=None)
        except Exception as e:
            self.board.registry.stream_failed(address)
            self._failed("the stream at %s: %s" % (address, e), self._retry)
            return
        with self._cond:
            if self._closed:
                return
            call = self._call = follow(request.SerializeToString(), metadata=metadata)
            self.streams_opened += 1
            if self.by_name and self._unstreamed():
                call.cancel()   # a name followed while the stream was asked for: opened again with it
        started, messages, code = time.monotonic(), 0, None
        try:
            for data in call:
                try:
                    changes = read_changes(data)
                except ValueError as e:
                    call.cancel()
                    self.board.registry.stream_failed(address)
                    self._failed("the registry at %s sent a change that cannot be read: %s" % (address, e),
                                 self._retry)
                    return
                self._streamed(*changes)
                messages += 1
                self.refusal = None
            why = "the stream at %s ended" % address
        except grpc.RpcError as e:
            code = e.code()
            why = "the stream at %s ended: %s (%s)" % (address, code.name, e.details())
        finally:
            with self._cond:
                if self._call is call:
                    self._call = None
        if self._closed:
            return
        with self._cond:
            renamed = self.by_name and self._unstreamed()
        if code == grpc.StatusCode.CANCELLED and renamed:
            return   # cancelled here for a name new to it: opened again at once, with that name
        if code == grpc.StatusCode.PERMISSION_DENIED and not self.by_name:
            # the registry's policy hides some names from this client: stream the followed ones
            LOG.info("the registry at %s does not let this client watch every name: the stream names the"
                     " names followed", address)
            self.by_name, self._streaming = True, False
            return
        # a stream that carried changes for a while was fine: the next failure starts the pauses over
        if messages and time.monotonic() - started >= RETRY_MAX:
            self._retry.reset()
            self._refused.reset()
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED:   # over the registry's limits: not soon again
            self.refusal = why
            self._failed(why, self._refused)
            return
        self.board.registry.stream_failed(address)
        self._failed(why, self._retry)

    def _unstreamed(self):
        """Names followed that the open stream does not name; under ``_cond``."""
        return set(self._followers) - set(self._stream_names)

    def _metadata(self, address):
        token = self.board.token
        if token is None:
            return ()
        from ._transport import _token_header

        return (("authorization", _token_header(token, address, "grpc")),)

    def _channel_to(self, address):
        """One HTTP/2 connection to the registry's stream listener, kept while the stream stays there."""
        import grpc
        from urllib.parse import urlparse

        if self._channel is not None and self._channel_address == address:
            return self._channel
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        url = urlparse(address)
        if url.scheme not in ("grpc", "grpcs") or not url.hostname or not url.port:
            raise ValueError("not a grpc:// or grpcs:// address")
        # A registry that hangs is noticed only by its unanswered ping. grpcio 1.85 closed the
        # transport at one only after ping_timeout_ms, whatever keepalive_timeout_ms said; and after
        # two pings while the client sends no data, which a watch never does after its request,
        # grpc core pings once a minute (gRFC L116) or not at all (grpc/grpc#25722).
        options = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES), ("grpc.keepalive_time_ms", KEEPALIVE_MS),
                   ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_MS), ("grpc.keepalive_permit_without_calls", 0),
                   ("grpc.http2.max_pings_without_data", 0), ("grpc.http2.ping_timeout_ms", KEEPALIVE_TIMEOUT_MS)]
        target = _address.host_port(url.hostname, url.port)
        if url.scheme == "grpcs":
            tls = self.board.tls
            credentials = tls.grpc_credentials() if tls is not None else grpc.ssl_channel_credentials()
            self._channel = grpc.secure_channel(target, credentials, options=options)
        else:
            self._channel = grpc.insecure_channel(target, options=options)
        self._channel_address = address
        return self._channel

    def _poll(self, names):
        """One SOAP long poll of the names followed (a registry without a stream), on a registry
        client of its own so that the Board's lookups never wait behind it."""
        from ._registry import RegistryClient

        board = self.board
        wait, answer = board.watch_wait, 30
        if len(board.registry.urls) > 1:   # a registry that is cut off costs little before the next is asked
            wait, answer = min(wait, FAILOVER_WATCH_SECONDS), FAILOVER_WATCH_ANSWER
        started = time.monotonic()
        try:
            if self._poller is None:
                self._poller = RegistryClient(board.url, tls=board.tls, timeout=wait + answer, token=board.token)
            epoch, version, reset, events = self._poller.watch(names, self._epoch, self._since, wait)
            with self._telling:
                self._streaming = False   # a poll's version covers the names polled only
                if reset or epoch != self._epoch:
                    self._snapshots += 1
                    for name in names:
                        self._replace(name, self._poller.lookup(name))
                else:
                    for kind, name, instance, entry in events:
                        self._tell(name, kind, instance, entry)
                # a name followed while the poll ran: its changes up to this version were not in the
                # answer, so it is looked up now, and polled from this version on
                with self._cond:
                    late = set(self._followers) - set(names)
                for name in late:
                    self._replace(name, self._poller.lookup(name))
        except Exception as e:   # the registry is restarting or away: the replicas stay as they are
            self._failed("polling %s: %s" % (board.url, e), self._retry)
            return
        self._epoch, self._since = epoch, version
        self._retry.reset()
        early = MIN_EMPTY_POLL - (time.monotonic() - started)
        if not reset and not events and early > 0:
            self._wait(early)

    # -- telling the components -----------------------------------------------------------------------

    def _streamed(self, epoch, version, reset, events):
        with self._telling:
            if reset or not self._streaming:   # a snapshot of every name streamed: what is not in it is gone
                self._snapshots += 1
                bound = {}
                for kind, name, instance, entry in events:
                    bound.setdefault(name, []).append(entry)
                for name in (self._stream_names if self.by_name else list(self._followers)):
                    self._replace(name, bound.get(name, []))
                self._streaming = True
            else:
                for kind, name, instance, entry in events:
                    self._tell(name, kind, instance, entry)
            self._epoch, self._since = epoch, version

    def _components(self, name):
        with self._cond:
            return list(self._followers.get(name, ()))

    def _replace(self, name, entries):
        for c in self._components(name):
            c._replace_entries(entries)

    def _tell(self, name, kind, instance, entry):
        self._told[name] = self._told.get(name, 0) + 1
        for c in self._components(name):
            c._apply(kind, instance, entry)
