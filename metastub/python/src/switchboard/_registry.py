"""The registry's SOAP service through a zeep client built from its WSDL (``<registry>?wsdl``), with
the safe settings (no DTDs, no entities, no external documents)."""

import threading


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
    def __init__(self, url, tls=None, timeout=30, token=None):
        import requests
        import zeep
        import zeep.transports

        session = requests.Session()
        if tls is not None:
            tls.configure(session)
        if token is not None:   # the registry learns who reads and writes its names
            from ._token import requests_auth

            session.auth = requests_auth(token)
        settings = zeep.Settings(strict=True, forbid_dtd=True, forbid_entities=True, forbid_external=True,
                                 xml_huge_tree=False)
        self.url = url
        self.client = zeep.Client(url + "?wsdl", settings=settings,
                                  transport=zeep.transports.Transport(session=session, timeout=timeout,
                                                                      operation_timeout=timeout))
        binding = next(iter(self.client.wsdl.bindings))
        # the address we were given, not the one the WSDL names (it may be a name only the registry host knows)
        self.service = self.client.create_service(binding, url)
        self.lock = threading.Lock()
        self._stream = None   # (address or None,) once asked

    def lookup(self, name):
        with self.lock:
            raw = self.service.lookup(name=name) or []
        from zeep.helpers import serialize_object

        return [Entry(serialize_object(e, dict)) for e in raw]

    def watch(self, names, epoch, since, wait_seconds):
        """(epoch, version, reset, events) after the changes to ``names`` since ``since``, waiting up
        to ``wait_seconds`` for one; each event is (kind, name, instance id, Entry or None). Not under
        the lock: a watch waits, and other calls must not wait behind it."""
        raw = self._watch(names, epoch, since, wait_seconds)
        events = raw.get("events") or []
        events = events.get("item") or [] if isinstance(events, dict) and "item" in events else events
        events = [events] if isinstance(events, dict) else events
        wanted = set(names)
        out = [(e["kind"], e["name"], e["instanceId"], Entry(e["entry"]) if e.get("entry") else None)
               for e in events if e.get("name") in wanted]
        return raw["epoch"], raw["version"], bool(raw.get("reset")), out

    def _watch(self, names, epoch, since, wait_seconds):
        from zeep.helpers import serialize_object

        return serialize_object(self.service.watch(names={"item": list(names)}, epoch=epoch, sinceVersion=since,
                                                   waitSeconds=wait_seconds), dict)

    def stream_address(self, names):
        """Where the registry streams changes (``grpc://HOST:PORT``), asked with a ``watch`` of
        ``names`` that does not wait, and kept until ``stream_failed``; None when it has no stream
        (the watch then long-polls), as the Java client's ``streamAddress``."""
        with self.lock:
            if self._stream is None:
                self._stream = (self._watch(names, None, None, 0).get("stream") or None,)
            return self._stream[0]

    def stream_failed(self, address):
        """The stream at ``address`` failed: the next watch asks the registry again."""
        with self.lock:
            if self._stream is not None and self._stream[0] == address:
                self._stream = None

    def entry_dict(self, name, instance_id, endpoints, schema, proto, wsdl_url, lease, features):
        entry = {"name": name, "instanceId": instance_id,
                 "endpoints": {"item": [{"protocol": p, "address": a} for p, a in endpoints]},
                 "interfaceSchema": schema, "interfaceProto": proto, "wsdlUrl": wsdl_url, "leaseSeconds": lease}
        if features:
            entry["features"] = {"item": list(features)}
        return entry

    def bind(self, entry, credential):
        with self.lock:
            self.service.bind(entry=entry, credential=credential)

    def renew(self, name, instance_id, credential):
        with self.lock:
            return self.service.renew(name=name, instanceId=instance_id, credential=credential)

    def unbind(self, name, instance_id, credential):
        with self.lock:
            return self.service.unbind(name=name, instanceId=instance_id, credential=credential)
