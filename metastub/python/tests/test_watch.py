"""Replica sets follow the registry through one watch per Board: over the registry's gRPC watch
stream when it has one (every name on one stream, as the Java client's), by SOAP long polls when
it has none; a stream that fails or sends what cannot be read is asked for again after growing
pauses."""

import concurrent.futures
import contextlib
import os
import threading
import time
import uuid

import grpc
import pytest
from google.protobuf import descriptor_pb2

import switchboard
from switchboard import _schema, _watch
from conftest import setting, until

ENDPOINT = "http://127.0.0.1:%d/axis2/services/Nowhere"


def unique(prefix):
    return "%s%s" % (prefix, uuid.uuid4().hex[:8])


class Binder:
    """Binds entries of the echo interface (endpoints that nobody calls) under names of its own."""

    def __init__(self, board, secret, proto):
        self.registry, self.secret, self.proto = board.registry, secret, proto

    def bind(self, name, instance, port):
        self.registry.bind(self.entry(name, instance, port), self.secret)

    def rebind(self, name, instance, port):
        with self.registry.lock:
            self.registry.service.rebind(entry=self.entry(name, instance, port), credential=self.secret)

    def unbind(self, name, instance):
        self.registry.unbind(name, instance, self.secret)

    def entry(self, name, instance, port):
        return self.registry.entry_dict(name, instance, [("soap", ENDPOINT % port)], None, self.proto, None, 0, [])


def ports(component):
    return sorted(int(e.endpoint("soap").split(":")[2].split("/")[0]) for e in component.entries)


def test_a_bind_change_and_unbind_are_seen_over_the_stream(registry_url, secret, echo_proto):
    name = unique("PyWatchStream")
    with switchboard.connect(registry_url) as board:
        binder = Binder(board, secret, echo_proto)
        binder.bind(name, "one", 1001)
        component = board.lookup(name)
        until(lambda: board.watcher.mode == "stream", "the registry's watch stream is taken")
        binder.bind(name, "two", 1002)
        until(lambda: ports(component) == [1001, 1002], "the second instance is added")
        binder.rebind(name, "two", 1003)
        until(lambda: ports(component) == [1001, 1003], "the moved instance is re-pointed")
        binder.unbind(name, "one")
        until(lambda: ports(component) == [1003], "the instance gone is dropped")
        assert board.watcher.streams_opened == 1
        assert board.watcher.refusal is None


def test_many_names_follow_one_stream(secret, echo_proto):
    """Against a registry that holds one stream per client host: every name of the board on the one,
    and a second board from this host refused by the registry for its share."""
    url = setting("SWITCHBOARD_TEST_ONE_STREAM_REGISTRY")
    names = [unique("PyWatchMany%d-" % i) for i in range(8)]
    with switchboard.connect(url) as board:
        binder = Binder(board, secret, echo_proto)
        components = []
        for i, name in enumerate(names):   # looked up one after another, with the stream open after the first
            binder.bind(name, "one", 2000 + i)
            components.append(board.lookup(name))
            if i == 0:
                until(lambda: board.watcher.streams_opened == 1, "the stream is open")
        for i, name in enumerate(names):
            binder.bind(name, "two", 3000 + i)
        for i, component in enumerate(components):
            until(lambda: ports(component) == [2000 + i, 3000 + i], "%s follows the registry" % names[i])
        assert board.watcher.mode == "stream"
        assert board.watcher.streams_opened == 1, "one stream for every name"
        assert board.watcher.refusal is None
        with switchboard.connect(url) as second:
            second.lookup(names[0])
            until(lambda: second.watcher.refusal is not None, "the registry refuses a second stream from this host")
            assert "watches open, its share" in second.watcher.refusal
        binder.unbind(names[-1], "one")
        until(lambda: ports(components[-1]) == [3000 + len(names) - 1], "the first board's stream still runs")
        assert board.watcher.streams_opened == 1


def test_a_board_the_registry_lets_watch_only_some_names_streams_the_names_it_follows(secret, echo_proto):
    """Against a registry whose policy lets anyone bind, look up and watch the names under PyOnly.
    and nothing else: the stream of every name is refused, and the board's stream then names the
    names it follows, opened again when it follows one more."""
    url = setting("SWITCHBOARD_TEST_NAMES_ONLY_REGISTRY")
    first, second = unique("PyOnly.first-"), unique("PyOnly.second-")
    with switchboard.connect(url) as board:
        binder = Binder(board, secret, echo_proto)
        binder.bind(first, "one", 4001)
        a = board.lookup(first)
        until(lambda: board.watcher.by_name, "the stream of every name is refused")
        binder.bind(first, "two", 4002)
        until(lambda: ports(a) == [4001, 4002], "a bind after the lookup is followed")
        binder.bind(second, "one", 4101)
        b = board.lookup(second)
        binder.bind(second, "two", 4102)
        until(lambda: ports(b) == [4101, 4102], "a name looked up later is followed too")
        binder.unbind(first, "one")
        until(lambda: ports(a) == [4002], "an unbind is followed")
        assert board.watcher.mode == "stream"
        assert board.watcher.refusal is None
        binder.unbind(first, "two")
        binder.unbind(second, "one")
        binder.unbind(second, "two")


def test_a_registry_without_a_stream_is_long_polled(secret, echo_proto):
    url = setting("SWITCHBOARD_TEST_NO_STREAM_REGISTRY")
    first, second = unique("PyWatchPoll"), unique("PyWatchPoll")
    with switchboard.connect(url) as board:
        binder = Binder(board, secret, echo_proto)
        binder.bind(first, "one", 4001)
        binder.bind(second, "one", 5001)
        a, b = board.lookup(first), board.lookup(second)
        until(lambda: board.watcher.mode == "poll", "the registry has no stream: SOAP watch")
        binder.bind(first, "two", 4002)
        binder.bind(second, "two", 5002)
        until(lambda: ports(a) == [4001, 4002] and ports(b) == [5001, 5002], "both names followed by polls")
        binder.unbind(first, "one")
        until(lambda: ports(a) == [4002], "the instance gone is dropped")
        assert board.watcher.streams_opened == 0


class HostileStream:
    """A stand-in for the registry's stream listener: each call is answered by the next script (a
    function of the request bytes and the context yielding messages); the times calls came in."""

    def __init__(self, scripts):
        self.scripts, self.calls, self.requests = list(scripts), [], []
        self.settled = threading.Event()
        self.released = threading.Event()
        self.server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=4))
        handler = grpc.unary_stream_rpc_method_handler(self.follow, request_deserializer=None,
                                                       response_serializer=None)
        self.server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(
            "switchboard.registry.RegistryWatch", {"follow": handler})])
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    @property
    def address(self):
        return "grpc://127.0.0.1:%d" % self.port

    def follow(self, request, context):
        self.calls.append(time.monotonic())
        self.requests.append(request)
        script = self.scripts[min(len(self.calls), len(self.scripts)) - 1]
        yield from script(context, self)

    def stop(self):
        self.released.set()
        self.server.stop(None)


def snapshot(name, *instances):
    r = _watch.WatchResponse(epoch="hostile", version=7, reset=True)
    for instance, port in instances:
        event = r.events.add(version=7, kind="appear", name=name, instanceId=instance)
        event.entry.name, event.entry.instanceId = name, instance
        event.entry.endpoints.add(protocol="soap", address=ENDPOINT % port)
    return r.SerializeToString()


def settles(name, *instances):
    """A script that sends a snapshot of ``instances`` under ``name``, sets ``settled`` and stays open."""
    def script(context, server):
        yield snapshot(name, *instances)
        server.settled.set()
        server.released.wait(60)
    return script


@contextlib.contextmanager
def following(stream, name, registry_url, secret, echo_proto, monkeypatch, settled_why):
    """A board whose watch streams from ``stream`` and that looked ``name`` up (one instance bound
    in the suite's registry, port 6001), once ``stream`` has settled; the stand-in stops after."""
    try:
        with switchboard.connect(registry_url) as board:
            Binder(board, secret, echo_proto).bind(name, "one", 6001)
            monkeypatch.setattr(board.registry, "stream_address", lambda names: stream.address)
            component = board.lookup(name)
            assert stream.settled.wait(60), settled_why
            yield board, component
    finally:
        stream.stop()


def test_a_stream_that_sends_garbage_or_ends_is_asked_again_after_growing_pauses(registry_url, secret, echo_proto,
                                                                                monkeypatch):
    name = unique("PyWatchHostile")

    def garbage(context, server):
        yield b"\xff\xff\xff\xff not protobuf"

    def ends_at_once(context, server):
        return
        yield

    def appear_without_entry(context, server):
        r = _watch.WatchResponse(epoch="hostile", version=3, reset=True)
        r.events.add(version=3, kind="appear", name=name, instanceId="ghost")
        yield r.SerializeToString()

    def unavailable(context, server):
        context.abort(grpc.StatusCode.UNAVAILABLE, "going away")
        yield

    stream = HostileStream([garbage, ends_at_once, appear_without_entry, unavailable,
                            settles(name, ("one", 6001), ("two", 6002))])
    with following(stream, name, registry_url, secret, echo_proto, monkeypatch,
                   "the client asked again until a stream worked") as (board, component):
        until(lambda: ports(component) == [6001, 6002], "the good stream's snapshot is applied")
        assert board.watcher.streams_opened == len(stream.calls) == 5
        # the pauses double from 0.1 s, each at least half its base (jitter): never a busy loop
        gaps = [b - a for a, b in zip(stream.calls, stream.calls[1:])]
        for k, gap in enumerate(gaps):
            assert gap >= 0.5 * _watch.RETRY_FIRST * 2 ** k, gaps
        assert ports(component) == [6001, 6002], "nothing the hostile streams sent was applied"
        assert all(r == b"" for r in stream.requests), "each asked for every name from a snapshot"


def test_a_stream_of_every_name_refused_later_is_followed_by_a_stream_of_the_names_followed(registry_url, secret,
                                                                                         echo_proto, monkeypatch):
    """The registry's policy edited while the stream of every name runs: the registry ends it with
    PERMISSION_DENIED after it has carried changes, and the board streams the names it follows."""
    name = unique("PyWatchRefusedLater")

    def every_name_then_refused(context, server):
        yield snapshot(name, ("one", 6001))
        context.abort(grpc.StatusCode.PERMISSION_DENIED, "the policy no longer allows this watch")
        yield

    stream = HostileStream([every_name_then_refused, settles(name, ("one", 6001), ("two", 6002))])
    with following(stream, name, registry_url, secret, echo_proto, monkeypatch,
                   "the board asked again after the refusal") as (board, component):
        until(lambda: ports(component) == [6001, 6002], "the stream of the name followed is applied")
        assert board.watcher.by_name, "the board follows by name once refused"
        assert stream.requests[0] == b"", "it first asked for every name"
        assert list(_watch.WatchRequest.FromString(stream.requests[1]).names) == [name], \
            "then for the name it follows"
        assert board.watcher.streams_opened == len(stream.calls) == 2
        assert board.watcher.refusal is None


def test_the_stream_messages_match_the_registrys_proto(schemas):
    """The watch messages built in Python have the field numbers and types of the .proto the
    interface compiler makes of registry.xsd (copied from the registry's jar by the test's JVM)."""
    with open(os.path.join(schemas, "Registry.proto"), encoding="utf-8") as f:
        compiled = _schema.compile_proto(f.read())
    theirs = {"%s.%s" % (fd.package, m.name): m for fd in compiled.file for m in fd.message_type}
    for name, cls in _watch.MESSAGES.items():
        expected = theirs["switchboard.registry." + name]
        by_name = {f.name: f for f in expected.field}
        for field in cls.DESCRIPTOR.fields:
            assert field.name in by_name, "%s.%s is not in the registry's .proto" % (name, field.name)
            other = by_name[field.name]
            repeated = other.label == descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
            assert (field.number, field.type, field.is_repeated) == (other.number, other.type, repeated), \
                "%s.%s differs from the registry's .proto" % (name, field.name)
            if field.message_type is not None:
                assert other.type_name.endswith("." + field.message_type.name)
            elif not repeated:   # absent tells from empty where the registry's says so
                assert field.has_presence == other.proto3_optional, "%s.%s presence" % (name, field.name)


def test_read_changes_refuses_what_a_registry_does_not_send():
    for bad in (b"\x0a", _watch.WatchResponse(version=1).SerializeToString()):
        with pytest.raises(ValueError):
            _watch.read_changes(bad)
    r = _watch.WatchResponse(epoch="e", version=2)
    r.events.add(version=2, kind="moved", name="A", instanceId="i")
    with pytest.raises(ValueError, match="cannot be read"):
        _watch.read_changes(r.SerializeToString())
    r = _watch.WatchResponse(epoch="e", version=2)
    r.events.add(version=2, kind="go", name="A", instanceId="i")
    assert _watch.read_changes(r.SerializeToString()) == ("e", 2, False, [("go", "A", "i", None)])


class _Registry:
    """A registry client whose lookups are counted and whose stream address never comes."""

    def __init__(self, entries):
        self.entries, self.lookups, self.released = entries, [], threading.Event()

    def lookup(self, name):
        self.lookups.append(name)
        return list(self.entries)

    def stream_address(self, names):
        self.released.wait(60)
        raise OSError("closed")

    def stream_failed(self, address):
        pass


class _Board:
    url, token, tls, watch_wait = "http://registry.invalid", None, None, 1

    def __init__(self, registry):
        self.registry = registry


class _Follower:
    def __init__(self, name):
        self.name, self.replaced, self.applied = name, [], []

    def _replace_entries(self, entries):
        self.replaced.append(entries)

    def _apply(self, kind, instance, entry):
        self.applied.append((kind, instance))


def test_a_change_told_while_a_name_is_looked_up_makes_it_looked_up_again():
    """The stream and a lookup race: what the stream tells of a name between the mark taken before
    its lookup and its following may be older or newer than the lookup, so the name is looked up
    again (the stream waiting); with nothing told meanwhile it is not."""
    entry = _watch.entry_of(_watch.MESSAGES["Entry"](name="N", instanceId="i", endpoints=[
        _watch.MESSAGES["EndpointInfo"](protocol="soap", address=ENDPOINT % 1)]))
    registry = _Registry([entry])
    watcher = _watch.RegistryWatcher(_Board(registry))
    try:
        mark = watcher.mark("N")
        watcher._streamed("e", 5, True, [("appear", "N", "i", entry)])   # a snapshot meanwhile
        first = _Follower("N")
        watcher.follow(first, mark)
        assert registry.lookups == ["N"] and first.replaced == [[entry]]

        mark = watcher.mark("N")
        watcher._streamed("e", 6, False, [("go", "N", "i", None)])      # a change meanwhile
        second = _Follower("N")
        watcher.follow(second, mark)
        assert registry.lookups == ["N", "N"] and second.replaced == [[entry]]
        assert first.applied == [("go", "i")], "a follower hears the changes told after it started"

        quiet = _Follower("M")
        watcher.follow(quiet, watcher.mark("M"))
        assert registry.lookups == ["N", "N"] and quiet.replaced == []
        watcher._streamed("e", 7, False, [("go", "N", "i", None)])
        assert second.applied == [("go", "i")] and len(first.applied) == 2
    finally:
        registry.released.set()
        watcher.close()
