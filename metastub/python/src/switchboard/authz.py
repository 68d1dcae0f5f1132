"""Who may call what: an authorization policy in gRPC's SDK authorization policy form (the JSON of
grpc-java's ``grpc-authz``), read and compiled once, then decided per call.

::

    policy = switchboard.authz.Policy.load({
        "name": "echo",
        "deny_rules": [{"name": "no-divide", "request": {"paths": ["*/divide"]}}],
        "allow_rules": [{"name": "team-a", "source": {"principals": ["spiffe://example.org/team-a/*"]},
                         "request": {"paths": ["/switchboard.echo.Echo/*"]}}],
    })
    policy.decide("spiffe://example.org/team-a/billing", "/switchboard.echo.Echo/echoDoubles").allowed  # True

Deny rules first, then allow rules; a call no allow rule matches is denied. A rule matches when its
``source`` and its ``request`` match (an absent part matches everything). ``source.principals``
and ``request.paths`` match if any entry does; ``request.headers`` if every header does (one of
its ``values``). A pattern is exact (``abc``), a prefix (``abc*``), a suffix (``*abc``) or ``*``
(any non-empty value). Principals: a caller without an identity (anonymous) has no principal, so
it matches no principal pattern except ``""``; a rule without ``source`` applies to it too. Paths
are gRPC's, ``/<proto package>.<Service>/<operation>``, over SOAP as well.

A policy that does not parse, or whose shape is wrong, is refused with the reason and where
(``PolicyError``): a typo must never turn into a silently ignored rule."""

import json
import logging
import os
import threading
import time

LOG = logging.getLogger("switchboard.authz")

# headers a rule may not name, as gRPC's: pseudo-headers, grpc-*, Host and the hop-by-hop ones
HOP_BY_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
              "transfer-encoding", "upgrade"}


class PolicyError(ValueError):
    """A policy that cannot be used, with the reason and where (``line L column C`` of a file that
    is not JSON, or the place in the policy such as ``allow_rules[1].request.paths[0]``)."""


class Decision:
    """Whether a call is allowed, and the rule that decided (None for the default deny)."""

    __slots__ = ("allowed", "rule", "policy")

    def __init__(self, allowed, rule, policy):
        self.allowed, self.rule, self.policy = allowed, rule, policy

    @property
    def reason(self):
        if self.rule is None:
            return "no allow rule of policy %s matches" % self.policy
        return "%s by rule %s of policy %s" % ("allowed" if self.allowed else "denied", self.rule, self.policy)

    def __repr__(self):
        return "<%s>" % self.reason


def _matcher(pattern, where):
    if not isinstance(pattern, str):
        raise PolicyError("%s: a pattern is a string, not %s" % (where, type(pattern).__name__))
    if pattern == "*":
        return lambda v: bool(v)
    if len(pattern) > 1 and pattern.endswith("*") and "*" not in pattern[:-1]:
        prefix = pattern[:-1]
        return lambda v: v is not None and v.startswith(prefix)
    if len(pattern) > 1 and pattern.startswith("*") and "*" not in pattern[1:]:
        suffix = pattern[1:]
        return lambda v: v is not None and v.endswith(suffix)
    if "*" in pattern:
        raise PolicyError("%s: %r: '*' may stand alone, begin or end a pattern, not sit inside it" % (where, pattern))
    return lambda v: (v or "") == pattern


def _strings(value, where):
    if not isinstance(value, list):
        raise PolicyError("%s: expected a list, got %s" % (where, type(value).__name__))
    return [_matcher(v, "%s[%d]" % (where, i)) for i, v in enumerate(value)]


def _object(value, where, allowed):
    if not isinstance(value, dict):
        raise PolicyError("%s: expected an object, got %s" % (where, type(value).__name__))
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise PolicyError("%s: unknown field %s (known: %s)" % (where, ", ".join(map(repr, unknown)),
                                                               ", ".join(allowed)))
    return value


class _Rule:
    def __init__(self, raw, where):
        _object(raw, where, ("name", "source", "request"))
        self.name = raw.get("name")
        if not isinstance(self.name, str) or not self.name:
            raise PolicyError("%s: a rule needs a non-empty \"name\"" % where)
        self.principals = self.paths = None
        self.headers = []
        if "source" in raw:
            source = _object(raw["source"], where + ".source", ("principals",))
            if source.get("principals"):
                self.principals = _strings(source["principals"], where + ".source.principals")
        if "request" in raw:
            request = _object(raw["request"], where + ".request", ("paths", "headers"))
            if request.get("paths"):
                self.paths = _strings(request["paths"], where + ".request.paths")
            for i, header in enumerate(request.get("headers") or []):
                at = "%s.request.headers[%d]" % (where, i)
                _object(header, at, ("key", "values"))
                key = header.get("key")
                if not isinstance(key, str) or not key:
                    raise PolicyError("%s: a header needs a \"key\"" % at)
                key = key.lower()
                if key.startswith(":") or key.startswith("grpc-") or key == "host" or key in HOP_BY_HOP:
                    raise PolicyError("%s: header %r cannot be matched (pseudo, grpc-*, Host and hop-by-hop headers "
                                      "are not supported)" % (at, key))
                if not header.get("values"):
                    raise PolicyError("%s: a header needs \"values\"" % at)
                self.headers.append((key, _strings(header["values"], at + ".values")))

    def matches(self, principal, path, headers):
        if self.principals is not None and not any(m(principal) for m in self.principals):
            return False
        if self.paths is not None and not any(m(path) for m in self.paths):
            return False
        for key, values in self.headers:
            value = headers.get(key)
            if value is None or not any(m(value) for m in values):
                return False
        return True


class Policy:
    """A compiled policy: immutable, decided per call without locks."""

    def __init__(self, raw):
        _object(raw, "policy", ("name", "deny_rules", "allow_rules", "audit_logging_options"))
        self.name = raw.get("name")
        if not isinstance(self.name, str) or not self.name:
            raise PolicyError("policy: \"name\" is absent or empty")
        if "allow_rules" not in raw:
            raise PolicyError("policy: \"allow_rules\" is absent")
        self.deny = self._rules(raw.get("deny_rules") or [], "deny_rules")
        self.allow = self._rules(raw["allow_rules"], "allow_rules")

    @staticmethod
    def _rules(raw, where):
        if not isinstance(raw, list):
            raise PolicyError("%s: expected a list, got %s" % (where, type(raw).__name__))
        rules = [_Rule(r, "%s[%d]" % (where, i)) for i, r in enumerate(raw)]
        names = [r.name for r in rules]
        duplicate = next((n for n in names if names.count(n) > 1), None)
        if duplicate is not None:
            raise PolicyError("%s: two rules are named %r" % (where, duplicate))
        return rules

    @classmethod
    def load(cls, source):
        """A Policy from a dict, a JSON text, or the path of a JSON file."""
        if isinstance(source, Policy):
            return source
        if isinstance(source, dict):
            return cls(source)
        if isinstance(source, (str, os.PathLike)) and not str(source).lstrip().startswith("{"):
            with open(source, encoding="utf-8") as f:
                return cls.parse(f.read(), str(source))
        return cls.parse(str(source), "the policy")

    @classmethod
    def parse(cls, text, origin):
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as e:
            raise PolicyError("%s is not JSON: line %d column %d: %s" % (origin, e.lineno, e.colno, e.msg)) from None
        try:
            return cls(raw)
        except PolicyError as e:
            raise PolicyError("%s: %s" % (origin, e)) from None

    def decide(self, principal, path, headers=None):
        """The Decision for a caller (its principal, None when anonymous) on ``path``; ``headers``
        maps lower-case names to values (several values of one name joined by commas)."""
        headers = headers or {}
        for rule in self.deny:
            if rule.matches(principal, path, headers):
                return Decision(False, rule.name, self.name)
        for rule in self.allow:
            if rule.matches(principal, path, headers):
                return Decision(True, rule.name, self.name)
        return Decision(False, None, self.name)


class FilePolicy:
    """A policy file, read again when it changes (checked at most every ``check_seconds``, on a call).
    The file must parse at the start; a change that does not parse keeps the policy in force and
    logs an ERROR line with the reason, as grpc-java's file-watching interceptor does."""

    def __init__(self, path, check_seconds=1.0):
        self.path, self.check_seconds = os.fspath(path), check_seconds
        self._stamp = self._read_stamp()
        self.policy = Policy.load(self.path)
        self._checked = time.monotonic()
        self._lock = threading.Lock()

    def _read_stamp(self):
        st = os.stat(self.path)
        return st.st_mtime_ns, st.st_size, st.st_ino

    def current(self):
        now = time.monotonic()
        if now - self._checked >= self.check_seconds and self._lock.acquire(blocking=False):
            try:
                self._checked = now
                try:
                    stamp = self._read_stamp()
                except OSError as e:
                    LOG.error("authorization policy %s cannot be read; keeping policy %s: %s", self.path,
                              self.policy.name, e)
                    return self.policy
                if stamp != self._stamp:
                    self._stamp = stamp
                    try:
                        self.policy = Policy.load(self.path)
                        LOG.info("authorization policy %s reloaded: %s", self.path, self.policy.name)
                    except (PolicyError, OSError) as e:
                        LOG.error("authorization policy %s not reloaded, keeping %s: %s", self.path,
                                  self.policy.name, e)
            finally:
                self._lock.release()
        return self.policy

    def decide(self, principal, path, headers=None):
        return self.current().decide(principal, path, headers)


def authorizer(source, check_seconds=1.0):
    """What ``serve(..., authz=...)`` takes: a file path (reloaded on change), a dict or a Policy."""
    if source is None:
        return None
    if isinstance(source, (Policy, FilePolicy)):
        return source
    if isinstance(source, (str, os.PathLike)) and not str(source).lstrip().startswith("{"):
        return FilePolicy(source, check_seconds)
    return Policy.load(source)
