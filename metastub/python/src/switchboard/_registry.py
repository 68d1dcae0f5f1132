"""The registry's SOAP service through a zeep client built from its WSDL (``<registry>?wsdl``), with
the safe settings (no DTDs, no entities, no external documents).

Several registry servers that share one store (ZooKeeper) can be given as a list, or as one string
with the URLs separated by commas, with the Java ``RegistryClient``'s rules: writes go to the first
that answers and move to the next when one cannot be reached (or, for idempotent operations, when
one fails mid-call); a ``bind`` that may have reached a registry is not repeated on another (a
served component's heartbeat binds again if the entry is missing); reads and watches do the same
from a registry picked at random per client, so that many clients given the same list spread over
it. A registry that failed is tried after the others for a while (1 s, doubling up to 30 s)."""

import random
import threading
import time
from urllib.parse import urlparse

# a watch over several registries waits at most this per poll, so that one that is cut off (and
# answers nothing) is left for the next soon; as the Java client's FAILOVER_WATCH_SECONDS
FAILOVER_WATCH_SECONDS = 5
FAILOVER_WATCH_ANSWER = 5                  # how long a poll's answer may take beyond its wait
# how long one registry has to answer the WSDL, a lookup, the ask for the stream or a bind when
# there are others (at most the client's timeout), so that one that hangs costs this rather than a
# whole timeout, as in the Java client; a bind that may have run is still not sent to the next
# (serve leaves it to the lease)
ANSWER_WITH_OTHERS = 5
AVOID_FIRST, AVOID_MAX = 1.0, 30.0         # seconds a registry that failed is tried last, as ReplicatedChannel
NOT_DELIVERED, MAY_HAVE_RUN = "not delivered", "may have run"
IDEMPOTENT = {"lookup", "watch", "renew", "unbind"}   # as registry.xsd marks them; bind is not


def registry_urls(urls):
    """The registry URLs of ``urls``, a list or one string with commas; ValueError naming the item
    when one is empty or not an http:// or https:// URL, or when they mix the two (an https://
    registry's rule that no plain-text endpoint is taken would hold for some lookups only)."""
    items = urls.split(",") if isinstance(urls, str) else list(urls)
    if not items:
        raise ValueError("no registry URL given")
    found = []
    for i, item in enumerate(items, 1):
        url = item.strip() if isinstance(item, str) else item
        if not url:
            raise ValueError("registry %d of %r is empty" % (i, urls))
        parsed = urlparse(url) if isinstance(url, str) else None
        if parsed is None or parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError("registry %d, %r, is not an http:// or https:// URL: a registry URL is the registry's "
                             "SOAP endpoint (http://HOST:PORT/axis2/services/Registry)" % (i, url))
        found.append(url)
    schemes = sorted({urlparse(u).scheme for u in found})
    if len(schemes) > 1:
        raise ValueError("the registries %s mix http:// and https://: give every registry over TLS (https://), or "
                         "none" % ", ".join(found))
    return found


def _read_start(count):
    """Where a client's reads start among ``count`` registries: its own, at random."""
    return random.randrange(count)


def fault_code(fault):
    """The code (``invalid``, ``unavailable``, ...) of a registry's SOAP fault; None if it has none."""
    if getattr(fault, "detail", None) is None:
        return None
    found = fault.detail.xpath(".//*[local-name()='code']")
    return found[0].text if found else None


def delivery(error):
    """How far a registry call that raised ``error`` got: NOT_DELIVERED (the registry was not reached,
    or it said it changed nothing: its store is away), MAY_HAVE_RUN (it failed under way), or None
    (an answer: a fault, a refusal, which another registry of the same store would give too)."""
    import requests
    import urllib3.exceptions
    import zeep.exceptions

    if isinstance(error, zeep.exceptions.Fault):
        return NOT_DELIVERED if fault_code(error) == "unavailable" else None
    if isinstance(error, (requests.exceptions.ConnectTimeout, requests.exceptions.SSLError)):
        return NOT_DELIVERED
    if isinstance(error, requests.exceptions.ConnectionError):
        reason = getattr(error.args[0], "reason", None) if error.args else None
        return NOT_DELIVERED if isinstance(reason, urllib3.exceptions.NewConnectionError) else MAY_HAVE_RUN
    if isinstance(error, (requests.exceptions.RequestException, zeep.exceptions.TransportError)):
        return MAY_HAVE_RUN
    return None


class MayHaveRun(Exception):
    """A call that is not repeated on another registry failed where it may have reached this one."""

    def __init__(self, operation, url, error):
        super().__init__("%s may have reached %s, so it was not sent to another registry: %s" % (operation, url, error))
        self.url, self.error = url, error


def _endpoints(entry):
    items = entry.get("endpoints") or []
    items = items.get("item") if isinstance(items, dict) else items
    items = [items] if isinstance(items, dict) else items
    return [(e["protocol"], e["address"]) for e in items or []]


def _features(entry):
    f = entry.get("features")
    if f is None:
        return []
    if isinstance(f, dict):
        f = f.get("item") or []
    return list(f)


class Entry:
    """One instance bound under a name: its endpoints in the order bound, documents and features."""

    def __init__(self, raw):
        self.name = raw["name"]
        self.instance_id = raw["instanceId"]
        self.endpoints = _endpoints(raw)
        self.interface_schema = raw.get("interfaceSchema")
        self.interface_proto = raw.get("interfaceProto")
        self.wsdl_url = raw.get("wsdlUrl")
        self.features = _features(raw)
        self.lease_seconds = raw.get("leaseSeconds") or 0

    def endpoint(self, protocol):
        return next((a for p, a in self.endpoints if p == protocol), None)

    def __repr__(self):
        return "<entry %s %s %s>" % (self.name, self.instance_id, dict(self.endpoints))


class RegistryClient:
    """The registry's operations; ``url`` names one registry, or several of one store (see above)."""

    def __init__(self, url, tls=None, timeout=30, token=None):
        import requests
        import zeep
        import zeep.transports

        urls = registry_urls(url)
        session = requests.Session()
        if tls is not None:
            tls.configure(session)
        if token is not None:   # the registry learns who reads and writes its names
            from ._token import requests_auth

            session.auth = requests_auth(token)
        settings = zeep.Settings(strict=True, forbid_dtd=True, forbid_entities=True, forbid_external=True,
                                 xml_huge_tree=False)
        self.urls, self.url = urls, ",".join(urls)
        self._answer = min(ANSWER_WITH_OTHERS, timeout)   # applied by _call only with several registries
        # writes keep the order given; reads and watches start at a registry of this client's own
        start = _read_start(len(urls)) if len(urls) > 1 else 0
        self.read_order = urls[start:] + urls[:start]
        self._avoided = {}        # url -> (monotonic time until which it is tried last, that pause)
        self._avoid_lock = threading.Lock()
        self._timed = {}          # (url, timeout) -> the service through a transport with that timeout
        self.transport = zeep.transports.Transport(session=session, timeout=timeout, operation_timeout=timeout)
        self.client = self._load(settings)
        binding = next(iter(self.client.wsdl.bindings))
        # the addresses we were given, not the one the WSDL names (it may be a name only the registry host knows)
        self.services = {u: self.client.create_service(binding, u) for u in urls}
        self.service = self.services[urls[0]]
        self.lock = threading.Lock()
        self._stream = None   # (address or None, the registry that named it) once asked
        self._asking = threading.Lock()   # guards _stream; a question under way holds it

    def _load(self, settings):
        """A zeep client of the WSDL of the first registry, in read order, that serves it; with
        several, each gets what a lookup gets, so that one that hangs does not hold the client up
        for a whole timeout."""
        import zeep

        timeout = self.transport.load_timeout
        if len(self.read_order) > 1:
            self.transport.load_timeout = self._answer
        try:
            for i, url in enumerate(self.read_order):
                try:
                    return zeep.Client(url + "?wsdl", settings=settings, transport=self.transport)
                except Exception:
                    if i == len(self.read_order) - 1:
                        raise
                    self._failed(url)
        finally:
            self.transport.load_timeout = timeout

    def _order(self, urls):
        """``urls`` with those that failed lately last, the one back soonest first."""
        now = time.monotonic()
        with self._avoid_lock:
            late = {u: until for u, (until, _) in self._avoided.items() if until > now}
        return [u for u in urls if u not in late] + sorted((u for u in urls if u in late), key=late.get)

    def _failed(self, url):
        with self._avoid_lock:
            pause = min(AVOID_MAX, self._avoided.get(url, (0, AVOID_FIRST / 2))[1] * 2)
            self._avoided[url] = (time.monotonic() + pause, pause)

    def _call(self, operation, urls, timeout=None, **request):
        """(answer, the registry that gave it) of ``operation`` on the first of ``urls`` that answers;
        ``timeout``: how long each registry may take, with several (None: the client's)."""
        if len(urls) == 1:
            return getattr(self.services[urls[0]], operation)(**request), urls[0]
        last = None
        for url in self._order(urls):
            try:
                answer = self._send(url, operation, timeout, request)
            except Exception as e:
                how = delivery(e)
                if how is None:
                    raise
                self._failed(url)
                if how == MAY_HAVE_RUN and operation not in IDEMPOTENT:
                    raise MayHaveRun(operation, url, e) from e
                last = e
                continue
            with self._avoid_lock:
                self._avoided.pop(url, None)
            return answer, url
        raise last

    def _send(self, url, operation, timeout, request):
        service = self.services[url] if timeout is None else self._timed_service(url, timeout)
        return getattr(service, operation)(**request)

    def _timed_service(self, url, timeout):
        """The service at ``url`` through a transport of its own whose calls wait at most ``timeout``:
        the shared transport's timeout is not changed, since a watch or a lookup may be under way
        on it from another thread. The WSDL is the one loaded already."""
        import zeep
        import zeep.transports

        key = (url, timeout)
        with self._avoid_lock:
            service = self._timed.get(key)
        if service is None:
            transport = zeep.transports.Transport(session=self.transport.session, timeout=self.transport.load_timeout,
                                                  operation_timeout=timeout)
            client = zeep.Client(self.client.wsdl, settings=self.client.settings, transport=transport)
            service = client.create_service(next(iter(client.wsdl.bindings)), url)
            with self._avoid_lock:
                self._timed[key] = service
        return service

    def lookup(self, name):
        with self.lock:
            raw = self._call("lookup", self.read_order, self._answer, name=name)[0] or []
        from zeep.helpers import serialize_object

        return [Entry(serialize_object(e, dict)) for e in raw]

    def watch(self, names, epoch, since, wait_seconds):
        """(epoch, version, reset, events) after the changes to ``names`` since ``since``, waiting up
        to ``wait_seconds`` for one; each event is (kind, name, instance id, Entry or None). Not under
        the lock: a watch waits, and other calls must not wait behind it."""
        raw = self._watch(names, epoch, since, wait_seconds)[0]
        events = raw.get("events") or []
        events = events.get("item") or [] if isinstance(events, dict) and "item" in events else events
        events = [events] if isinstance(events, dict) else events
        wanted = set(names)
        out = [(e["kind"], e["name"], e["instanceId"], Entry(e["entry"]) if e.get("entry") else None)
               for e in events if e.get("name") in wanted]
        return raw["epoch"], raw["version"], bool(raw.get("reset")), out

    def _watch(self, names, epoch, since, wait_seconds, timeout=None):
        """(the watch answer as a dict, the registry that gave it); ``timeout``: how long each of
        several registries may take (None: the client's)."""
        from zeep.helpers import serialize_object

        answer, url = self._call("watch", self.read_order, timeout, names={"item": list(names)}, epoch=epoch,
                                 sinceVersion=since, waitSeconds=wait_seconds)
        return serialize_object(answer, dict), url

    def stream_address(self, names):
        """Where the registry streams changes (``grpc://HOST:PORT``), asked with a ``watch`` of
        ``names`` that does not wait, and kept until ``stream_failed``; None when it has no stream
        (the watch then long-polls), as the Java client's ``streamAddress``. Asked under a lock of
        its own: the question may wait on a slow or cut-off registry, and lookups must not wait
        behind it."""
        with self._asking:
            if self._stream is None:
                # a watch that does not wait: each of several registries gets what a lookup gets
                answer, url = self._watch(names, None, None, 0, self._answer)
                self._stream = (answer.get("stream") or None, url)
            return self._stream[0]

    def stream_failed(self, address):
        """The stream at ``address`` failed: the next watch asks the registry again, with several
        the next one first."""
        with self._asking:
            if self._stream is not None and self._stream[0] == address:
                if len(self.urls) > 1:
                    self._failed(self._stream[1])
                self._stream = None

    def entry_dict(self, name, instance_id, endpoints, schema, proto, wsdl_url, lease, features):
        entry = {"name": name, "instanceId": instance_id,
                 "endpoints": {"item": [{"protocol": p, "address": a} for p, a in endpoints]},
                 "interfaceSchema": schema, "interfaceProto": proto, "wsdlUrl": wsdl_url, "leaseSeconds": lease}
        if features:
            entry["features"] = {"item": list(features)}
        return entry

    def bind(self, entry, credential):
        """Binds ``entry`` through the first registry that answers; MayHaveRun when it failed where it
        may have reached one of several (it is not sent to the next: it would find the entry bound)."""
        with self.lock:
            self._call("bind", self.urls, self._answer, entry=entry, credential=credential)

    def renew(self, name, instance_id, credential, timeout=None):
        """Whether the registry still held the instance, renewing its lease; ``timeout``: how long
        each of several registries may take (a heartbeat's period, so the next is asked in time)."""
        with self.lock:
            return self._call("renew", self.urls, timeout, name=name, instanceId=instance_id,
                              credential=credential)[0]

    def unbind(self, name, instance_id, credential):
        with self.lock:
            return self._call("unbind", self.urls, name=name, instanceId=instance_id, credential=credential)[0]
