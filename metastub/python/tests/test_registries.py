"""Several registries of one store, given as a list or as one string with commas, with the Java
RegistryClient's rules: writes go to the first that answers, reads and watches start at a registry
picked at random per client, a bind that may have reached a registry is not sent to another, and
the watch moves to the next registry when its stream breaks, reading every name again. The
registries are doors in front of the suite's registry (registry_doors), so that they share its
entries as registry servers of one ZooKeeper ensemble do."""

import os
import threading
import time
import types

import pytest

import switchboard
from conftest import until
from registry_doors import Door, closed_port_url
from switchboard import _registry, _watch
from switchboard._registry import FAILOVER_WATCH_ANSWER
from switchboard._registry import RegistryClient
from test_serve import Echo
from test_watch import Binder, ports, unique


@pytest.fixture
def doors(registry_url):
    made = [Door(registry_url), Door(registry_url)]
    yield made
    for door in made:
        door.shut()


@pytest.fixture
def reads_from_the_first(monkeypatch):
    """Every client's reads start at the first registry of its list (else at one of its own, at random)."""
    monkeypatch.setattr(_registry, "_read_start", lambda count: 0, raising=False)


def serve(schemas, registry, name, secret, **options):
    return switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry, name=name,
                             secret=secret, handle_sigterm=False, tcp=False, **options)


def instances(registry_url, name):
    return sorted(e.instance_id for e in RegistryClient(registry_url).lookup(name))


def test_malformed_lists_are_refused_before_anything_connects(doors, schemas):
    url = doors[0].url
    cases = [("%s,,%s" % (url, url), r"registry 2 of '.*' is empty"),
             ([url, " "], r"registry 2 of \[.*\] is empty"),
             ([], "no registry URL given"),
             ([url, "grpc://127.0.0.1:1/Registry"], r"registry 2, 'grpc://127.0.0.1:1/Registry', is not an http:// "
                                                    r"or https:// URL"),
             ("%s,registry.example:8081" % url, r"registry 2, 'registry.example:8081', is not an http://"),
             ([url, url.replace("http://", "https://")], r"mix http:// and https://")]
    for urls, message in cases:
        with pytest.raises(ValueError, match=message):
            switchboard.connect(urls)
        with pytest.raises(ValueError, match=message):
            serve(schemas, urls, unique("PyBadList"), None)
        with pytest.raises(ValueError, match=message):
            RegistryClient(urls)
    assert not doors[0].counts and not doors[0].stream.accepted, "nothing reached the registry"


def test_a_list_whose_first_registry_is_down_works_through_the_second(registry_url, secret, schemas, echo_proto,
                                                                      reads_from_the_first):
    urls = [closed_port_url(), registry_url]
    name = unique("PyDownFirst")
    renewed = threading.Event()
    server = serve(schemas, urls, name, secret, lease=3, on_renew=lambda *_: renewed.set())
    try:
        assert instances(registry_url, name) == [server.instance_id], "bound through the second"
        with switchboard.connect(",".join(urls)) as board:   # one string, with commas
            assert board.registry.read_order == urls, "reads start at the registry that is down"
            echo = board.lookup(name)
            assert echo.echoDoubles(values=[1.5]) == [1.5]
            assert renewed.wait(30), "the lease is renewed through the second"
            until(lambda: board.watcher.mode == "stream", "the watch streams from the second")
            binder = Binder(board, secret, echo_proto)
            binder.bind(name, "two", 7001)
            until(lambda: len(echo.entries) == 2, "a bind is seen over the watch")
            binder.unbind(name, "two")
            until(lambda: len(echo.entries) == 1, "an unbind is seen over the watch")
    finally:
        server.close()
    assert instances(registry_url, name) == [], "unbound through the second"


def streaming_from_the_first(board, doors, name, secret, echo_proto):
    """Binds ``name`` (instance "one", port 8001) through the second door and looks it up on
    ``board``, whose watch then streams from the first; the binder and the component."""
    first, second = doors
    # binds through a registry client of their own: the board's waits for its watch's question
    binder = Binder(types.SimpleNamespace(registry=RegistryClient(second.url)), secret, echo_proto)
    binder.bind(name, "one", 8001)
    component = board.lookup(name)
    until(lambda: board.watcher.mode == "stream" and first.stream.accepted == 1, "the watch streams from the first")
    return binder, component


def test_a_watch_whose_registry_goes_away_moves_to_the_next_and_misses_nothing(doors, secret, echo_proto,
                                                                              reads_from_the_first):
    first, second = doors
    name = unique("PyWatchMoves")
    with switchboard.connect([first.url, second.url]) as board:
        binder, component = streaming_from_the_first(board, doors, name, secret, echo_proto)
        second.held["watch"] = threading.Event()   # the watch must ask the second where it streams: not yet
        first.shut()
        second.wait_for("watch")
        # the watch has left the first and not reached the second's stream: a bind in the gap
        binder.bind(name, "gap", 8002)
        second.held.pop("watch").set()
        until(lambda: ports(component) == [8001, 8002], "the bind made in the gap is seen")
        assert second.stream.accepted == 1 and board.watcher.streams_opened == 2
        binder.bind(name, "after", 8003)
        until(lambda: ports(component) == [8001, 8002, 8003], "a bind made after the move is seen")
        binder.unbind(name, "one")
        until(lambda: ports(component) == [8002, 8003], "an unbind after the move is seen")
        for instance in ("gap", "after"):
            binder.unbind(name, instance)


def test_a_watch_whose_registry_hangs_moves_to_the_next_and_misses_nothing(doors, secret, echo_proto,
                                                                          reads_from_the_first, monkeypatch):
    """A registry that hangs (stopped, say) keeps its ports and connections: nothing ends the stream
    but its unanswered ping. It hangs here once it has answered the stream's first two pings, the
    most grpc core sends while its client sends no data unless told otherwise: the watch must go on
    pinging, end the stream at the ping it does not answer, ask the next registry first (not the
    hung one) and hear a bind made meanwhile. Pings every 6 s (the registry permits one per 5 s) and 1 s to answer, so that the test takes
    seconds; the defaults are 10 s and 5 s."""
    monkeypatch.setattr(_watch, "KEEPALIVE_MS", 6_000)
    monkeypatch.setattr(_watch, "KEEPALIVE_TIMEOUT_MS", 1_000)
    first, second = doors
    name = unique("PyWatchHangs")
    with switchboard.connect([first.url, second.url]) as board:
        binder, component = streaming_from_the_first(board, doors, name, secret, echo_proto)
        first.stream.wait_for_answered_pings(2)
        first.hang()
        hung = time.monotonic()
        binder.bind(name, "meanwhile", 8002)
        until(lambda: ports(component) == [8001, 8002], "the bind made while the first hangs is seen")
        heard = time.monotonic() - hung
        print("a watch whose registry hangs heard the bind after %.1f s" % heard)
        # the next ping within 6 s, 1 s for its answer, and the next registry asked at once
        assert heard < 6 + 1 + FAILOVER_WATCH_ANSWER, "heard after %.1f s" % heard
        assert second.stream.accepted == 1 and board.watcher.streams_opened == 2
        binder.unbind(name, "one")
        until(lambda: ports(component) == [8002], "an unbind after the move is seen")
        binder.unbind(name, "meanwhile")


def test_a_lookup_that_begins_on_a_registry_that_hangs_moves_to_the_next(doors, secret, echo_proto,
                                                                        reads_from_the_first, monkeypatch):
    """A registry that hangs answers nothing and closes nothing: a lookup gives it ANSWER_WITH_OTHERS
    (5 s; 2 s here, to be quick), not the client's whole timeout (30 s), before it asks the next."""
    monkeypatch.setattr(_registry, "ANSWER_WITH_OTHERS", 2)
    first, second = doors
    name = unique("PyLookupHangs")
    binder = Binder(types.SimpleNamespace(registry=RegistryClient(second.url)), secret, echo_proto)
    binder.bind(name, "one", 8001)
    try:
        reader = RegistryClient([first.url, second.url])
        assert [e.instance_id for e in reader.lookup(name)] == ["one"]
        first.hang()
        started = time.monotonic()
        assert [e.instance_id for e in reader.lookup(name)] == ["one"]
        took = time.monotonic() - started
        assert 2 <= took < 2 + 3, "the lookup took %.1f s" % took
        assert first.counts["lookup"] == 2 and second.counts["lookup"] == 1
    finally:
        binder.unbind(name, "one")


def test_a_bind_that_may_have_reached_a_registry_is_not_sent_to_another(registry_url, doors, secret, schemas):
    first, second = doors
    first.drop.add("bind")   # the first binds, and the connection drops before its answer
    name = unique("PyBindOnce")
    server = serve(schemas, [first.url, second.url], name, secret, lease=3)
    try:
        assert (first.counts["bind"], second.counts["bind"]) == (1, 0), "not repeated on the second"
        assert instances(registry_url, name) == [server.instance_id]
        first.drop.clear()
        RegistryClient(registry_url).unbind(name, server.instance_id, secret)   # the entry is lost
        until(lambda: instances(registry_url, name) == [server.instance_id], "the heartbeat binds it again")
    finally:
        server.close()


@pytest.mark.parametrize("reads_start_at", [0, 1])
def test_a_component_whose_first_registry_hangs_is_served_and_bound_through_the_next(registry_url, doors, secret,
                                                                                    schemas, monkeypatch,
                                                                                    reads_start_at):
    """Each of several registries gets 5 s (2 s here), not the client's timeout (30 s): for the WSDL when the
    client's reads start at the hung one (0), after which the bind goes to the second; for the
    bind when they start at the second (1), after which the bind, which may have run on the hung
    one, is not sent to the second, and the lease's heartbeat binds it there."""
    monkeypatch.setattr(_registry, "_read_start", lambda count: reads_start_at, raising=False)
    monkeypatch.setattr(_registry, "ANSWER_WITH_OTHERS", 2)
    first, second = doors
    first.hang()
    name = unique("PyServeHangs")
    started = time.monotonic()
    server = serve(schemas, [first.url, second.url], name, secret, lease=3)
    try:
        took = time.monotonic() - started
        assert 2 <= took < 2 + 3, "served after %.1f s" % took
        assert second.counts["bind"] == (1 if reads_start_at == 0 else 0)
        until(lambda: instances(registry_url, name) == [server.instance_id], "bound through the second")
    finally:
        server.close()


def test_clients_given_the_same_list_spread_their_reads(doors):
    urls = [door.url for door in doors]
    for _ in range(40):
        RegistryClient(urls).lookup(unique("PyNobody"))
    counts = [door.counts["lookup"] for door in doors]
    assert sum(counts) == 40 and min(counts) > 0, counts


def test_a_renewals_own_timeout_leaves_the_other_calls_timeout_alone(doors, secret, reads_from_the_first):
    """A renewal over several registries waits a heartbeat's period per registry; a watch or a lookup
    under way on another thread meanwhile keeps the client's own timeout."""
    first, second = doors
    client = RegistryClient([first.url, second.url], timeout=30)
    assert client.transport.operation_timeout == 30
    first.held["renew"] = threading.Event()
    renewal = threading.Thread(target=client.renew, args=(unique("PyNobody"), "none", secret),
                               kwargs={"timeout": 7}, daemon=True)
    renewal.start()
    try:
        first.wait_for("renew")
        assert client.transport.operation_timeout == 30, "the renewal's timeout leaked into the shared transport"
    finally:
        first.held.pop("renew").set()
        renewal.join(60)
    assert not renewal.is_alive()


def test_a_lookup_does_not_wait_behind_the_question_where_the_registry_streams(doors):
    """The watch asks where the registry streams with a watch that does not wait; a registry slow to
    answer it (held here) holds that question only, not the client's lookups."""
    door = doors[0]
    client = RegistryClient(door.url)
    door.held["watch"] = threading.Event()
    asking = threading.Thread(target=client.stream_address, args=([],), daemon=True)
    asking.start()
    try:
        door.wait_for("watch")
        looked_up = threading.Event()
        threading.Thread(target=lambda: (client.lookup(unique("PyNobody")), looked_up.set()), daemon=True).start()
        assert looked_up.wait(30), "the lookup waited behind the held question"
    finally:
        door.held.pop("watch").set()
        asking.join(60)
    assert client.stream_address([]) == door.stream.address


def test_a_registry_that_cannot_be_reached_is_a_registry_unavailable_not_a_library_error(doors):
    """connect and lookup name the registry and say nothing was delivered, whatever the HTTP
    library met; an answer of the registry (a name not bound) stays what it is."""
    down = closed_port_url()
    with pytest.raises(switchboard.RegistryUnavailable, match="could not be reached") as refused:
        switchboard.connect(down, watch=False)
    assert refused.value.url == down and refused.value.delivery == switchboard.TransportError.NOT_DELIVERED
    assert isinstance(refused.value, switchboard.TransportError) and refused.value.__cause__ is not None
    door = doors[0]
    with switchboard.connect(door.url, watch=False) as board:
        with pytest.raises(switchboard.NotFound):
            board.lookup(unique("PyNeverBound"))
        door.shut()
        with pytest.raises(switchboard.RegistryUnavailable) as gone:
            board.lookup(unique("PyNeverBound"))
        assert gone.value.url == door.url
