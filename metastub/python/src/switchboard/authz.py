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
``source.principals`` and its ``request.paths`` both match, each if one of its patterns does (an
absent or empty list matches everything, anonymous callers included). A pattern is exact
(``abc``), a prefix (``abc*``), a suffix (``*abc``; a leading star wins over a trailing one) or
``*`` (any non-empty value). A caller without an identity (anonymous) matches no principal
pattern, ``*`` included. Paths are gRPC's, ``/<proto package>.<Service>/<operation>``, over SOAP
as well. The Java servers read and decide the same file the same way
(``io.switchboard.server.authz``).

A policy that does not parse, or whose shape is wrong, is refused with the reason and where
(``PolicyError``): a typo must never turn into a silently ignored rule. As on the Java side, a
field this reader does not know, a key twice in one object, two rules of one name, an empty
``allow_rules`` and ``request.headers`` (a call carries no HTTP headers on every protocol) are
refused."""

import json
import logging
import os
import threading
import time

LOG = logging.getLogger("switchboard.authz")

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
    """A pattern as a predicate on a value (None, an anonymous caller's principal, matches nothing)."""
    if not isinstance(pattern, str):
        raise PolicyError("%s: a pattern is a string, not %s" % (where, type(pattern).__name__))
    if pattern == "*":
        return lambda v: bool(v)
    if pattern.startswith("*"):
        suffix = pattern[1:]
        return lambda v: v is not None and v.endswith(suffix)
    if pattern.endswith("*"):
        prefix = pattern[:-1]
        return lambda v: v is not None and v.startswith(prefix)
    return lambda v: v == pattern


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
        if "source" in raw:
            source = _object(raw["source"], where + ".source", ("principals",))
            if "principals" in source:
                self.principals = _strings(source["principals"], where + ".source.principals") or None
        if "request" in raw:
            if isinstance(raw["request"], dict) and "headers" in raw["request"]:
                raise PolicyError("%s.request.headers: not supported: a call carries no HTTP headers on every "
                                  "protocol; match on \"paths\" and \"source.principals\"" % where)
            request = _object(raw["request"], where + ".request", ("paths",))
            if "paths" in request:
                self.paths = _strings(request["paths"], where + ".request.paths") or None

    def matches(self, principal, path):
        if self.principals is not None and not any(m(principal) for m in self.principals):
            return False
        return self.paths is None or any(m(path) for m in self.paths)


def _no_duplicate_keys(pairs):
    keys = [k for k, _ in pairs]
    twice = next((k for k in keys if keys.count(k) > 1), None)
    if twice is not None:   # json would keep the last silently; which one the author meant is unknown
        raise PolicyError("\"%s\" appears twice in one object" % twice)
    return dict(pairs)


class Policy:
    """A compiled policy: immutable, decided per call without locks."""

    def __init__(self, raw):
        _object(raw, "policy", ("name", "deny_rules", "allow_rules"))
        self.name = raw.get("name")
        if not isinstance(self.name, str) or not self.name:
            raise PolicyError("policy: \"name\" is absent or empty")
        if not raw.get("allow_rules"):
            raise PolicyError("policy: \"allow_rules\" is absent or empty: a policy allows something")
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
            raw = json.loads(text, object_pairs_hook=_no_duplicate_keys)
        except json.JSONDecodeError as e:
            raise PolicyError("%s is not JSON: line %d column %d: %s" % (origin, e.lineno, e.colno, e.msg)) from None
        except PolicyError as e:
            raise PolicyError("%s: %s" % (origin, e)) from None
        try:
            return cls(raw)
        except PolicyError as e:
            raise PolicyError("%s: %s" % (origin, e)) from None

    def decide(self, principal, path):
        """The Decision for a caller (its principal, None when anonymous) on ``path``."""
        for rule in self.deny:
            if rule.matches(principal, path):
                return Decision(False, rule.name, self.name)
        for rule in self.allow:
            if rule.matches(principal, path):
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

    def decide(self, principal, path):
        return self.current().decide(principal, path)


def authorizer(source, check_seconds=1.0):
    """What ``serve(..., authz=...)`` takes: a file path (reloaded on change), a dict or a Policy."""
    if source is None:
        return None
    if isinstance(source, (Policy, FilePolicy)):
        return source
    if isinstance(source, (str, os.PathLike)) and not str(source).lstrip().startswith("{"):
        return FilePolicy(source, check_seconds)
    return Policy.load(source)
