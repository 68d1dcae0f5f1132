"""Selection policies: which protocol a call takes among the candidates (the protocols client and
server share, in the client's order, without those in back-off; SOAP always among them). The same
policies, names and rules as the Java meta-stub's (``io.switchboard.metastub``):

- ``adaptive`` (the default): predicts each candidate's round-trip time for this call's payload,
  ``fixed cost + bytes x cost per byte``, from priors (SOAP 600 us + 0.08 us/B, tcp 100 us +
  0.004 us/B, the others 400 us + 0.004 us/B) refined by the calls it sees (a low quantile, so queueing does not mislead
  it), and takes the fastest; now and then it tries a close runner-up to keep both models fresh;
- ``size`` or ``size:BYTES``: tcp, the small-call protocol, whenever it is a candidate (the client
  offers it for calls up to 2 MiB of payload); without it, SOAP up to the threshold (800 bytes of
  request and expected response), the first other protocol above it;
- ``fixed:PROTOCOL``: always that protocol (SOAP while it is in back-off); refused if the server
  does not speak it;
- ``first-common``: the first protocol of the client's list that the server speaks.
"""

import itertools
import threading
import time

from .errors import NoCommonProtocol

FAILSAFE = "soap"
SMALL_CALLS = "tcp"


class Policy:
    name = "?"
    uses_response_sizes = False

    def select(self, call, candidates):
        raise NotImplementedError

    def observe(self, record):
        """Told of every attempt, to learn from; most policies ignore it."""

    def __repr__(self):
        return "<policy %s>" % self.name


class FirstCommon(Policy):
    name = "first-common"

    def select(self, call, candidates):
        return candidates[0]


class Size(Policy):
    DEFAULT = 800
    uses_response_sizes = True

    def __init__(self, threshold=DEFAULT):
        if threshold < 0:
            raise ValueError("threshold must not be negative")
        self.threshold = threshold
        self.name = "size" if threshold == self.DEFAULT else "size:%d" % threshold

    def select(self, call, candidates):
        if SMALL_CALLS in candidates:
            return SMALL_CALLS
        if len(candidates) == 1 or call.estimated_bytes + call.expected_response_bytes <= self.threshold:
            return FAILSAFE
        return next((p for p in candidates if p != FAILSAFE), FAILSAFE)


class Fixed(Policy):
    def __init__(self, protocol):
        self.protocol = protocol
        self.name = "fixed:" + protocol

    def select(self, call, candidates):
        if self.protocol not in candidates:
            if self.protocol in call.suite_candidates:
                return FAILSAFE
            raise NoCommonProtocol("%s is the fixed protocol but not among the candidates %s"
                                   % (self.protocol, list(candidates)))
        return self.protocol


class _CostModel:
    """As the Java policy's CostModel: fixed cost plus cost per byte, each a low quantile of the
    samples, a sample below ``STALE_BELOW`` of its estimate replacing it (waiting and compiling only
    make calls slower, so such a sample shows the estimate is stale)."""
    QUANTILE, RATE, SMALL, LARGE, SKIPPED, STALE_BELOW = 0.2, 0.1, 2 * 1024, 32 * 1024, 2, 0.25

    def __init__(self, fixed, per_byte, now):
        self.fixed, self.per_byte, self.seen, self.touched = fixed, per_byte, 0, now
        self.lock = threading.Lock()

    @classmethod
    def prior(cls, protocol, now):
        if protocol == FAILSAFE:
            return cls(600, 0.08, now)
        return cls(100, 0.004, now) if protocol == SMALL_CALLS else cls(400, 0.004, now)

    def predict(self, n):
        # no lock: two attribute reads, at worst one estimate old, on every call's path
        return self.fixed + self.per_byte * n

    def crossover(self, other):
        if self.per_byte == other.per_byte:
            return 0
        x = (other.fixed - self.fixed) / (self.per_byte - other.per_byte)
        return x if x > 0 else 0

    def learn(self, n, micros, now):
        with self.lock:
            self.touched = now
            self.seen += 1
            if self.seen <= self.SKIPPED:
                return
            if n <= self.SMALL:
                self.fixed = max(1.0, self._toward(self.fixed, micros - self.per_byte * n))
            elif n >= self.LARGE:
                self.per_byte = max(1e-6, self._toward(self.per_byte, max(0.0, micros - self.fixed) / n))

    def _toward(self, estimate, sample):
        if sample < estimate * self.STALE_BELOW:
            return sample
        return estimate * (1 + self.RATE * (self.QUANTILE - 1 if sample < estimate else self.QUANTILE))

    def claim_reprobe(self, now, every):
        if now - self.touched < every:   # the common case, without the lock
            return False
        with self.lock:
            if now - self.touched >= every:
                self.touched = now
                return True
            return False


class Adaptive(Policy):
    name = "adaptive"
    uses_response_sizes = True
    EXPLORE_EVERY = 32
    EXPLORE_RATIO = 1.5  # a runner-up predicted within 1.5x of the best is tried once in EXPLORE_EVERY calls
    REPROBE_SECONDS = 10.0
    REPROBE_RATIO = 4
    REPROBE_EXTRA_MICROS = 20_000
    ESTIMATE_CAP = 8 << 20

    REPROBE_CHECK_EVERY = 8   # the clock is read for a re-probe on every 8th call, not on each
    CACHED_CHOICES = 4096

    def __init__(self, clock=time.monotonic):
        self.models = {}
        self._decisions = itertools.count(1)   # atomic under the GIL: no lock on every call
        self._candidate_models = {}   # (operation, replica, candidates) -> (replica, [(protocol, model)])
        self.clock = clock
        self.lock = threading.Lock()

    def _models_of(self, call, candidates):
        """The candidates' models for this call: looked up once per operation, replica and candidate
        list (a small call over tcp costs tens of microseconds in Python; a lookup per candidate
        per call was a tenth of it)."""
        replica = getattr(call, "_replica", None)
        if replica is None:
            return [(p, self.model(p, call.address(p), call.operation)) for p in candidates]
        key = (call.operation, id(replica), tuple(candidates))
        known = self._candidate_models.get(key)
        if known is None or known[0] is not replica:
            if len(self._candidate_models) >= self.CACHED_CHOICES:
                self._candidate_models.clear()   # replicas come and go: never more than this many kept
            known = self._candidate_models[key] = (
                replica, [(p, self.model(p, call.address(p), call.operation)) for p in candidates])
        return known[1]

    def model(self, protocol, address, operation):
        # one model per operation, as the Java policy: an operation's own running time counts for
        # its protocols alike and does not make another operation's protocol look slow
        key = (protocol, address, operation)
        m = self.models.get(key)
        if m is None:
            with self.lock:
                m = self.models.setdefault(key, _CostModel.prior(protocol, self.clock()))
        return m

    def predict_micros(self, protocol, address, operation, n):
        return self.model(protocol, address, operation).predict(n)

    def select(self, call, candidates):
        if len(candidates) == 1:
            return candidates[0]
        n = call.estimated_bytes + call.expected_response_bytes
        best = second = best_model = second_model = None
        best_time = second_time = float("inf")
        for p, m in self._models_of(call, candidates):   # the two fastest, ties to the client's order
            t = m.fixed + m.per_byte * n   # predict(), inline: this runs on every call
            if t < best_time:
                second, second_time, second_model = best, best_time, best_model
                best, best_time, best_model = p, t, m
            elif t < second_time:
                second, second_time, second_model = p, t, m
        decision = next(self._decisions)
        # relative only, as the Java policy: 100 µs more on a 25 µs call is 4x the call, however few µs
        if decision % self.EXPLORE_EVERY == 0 and second_time < best_time * self.EXPLORE_RATIO:
            return second
        if decision % self.REPROBE_CHECK_EVERY == 0:
            affordable = second_time <= best_time * self.REPROBE_RATIO or second_time - best_time <= self.REPROBE_EXTRA_MICROS
            if affordable and second_model.claim_reprobe(self.clock(), self.REPROBE_SECONDS):
                return second
        return best

    def observe(self, record):
        payload = record.payload_bytes
        if record.succeeded and 0 <= payload <= self.ESTIMATE_CAP and record.address:
            self.model(record.protocol, record.address, record.operation).learn(
                payload, record.latency * 1e6, self.clock())


def by_name(spec):
    """A policy from its name: ``adaptive``, ``size``, ``size:4096``, ``fixed:grpc``, ``first-common``;
    a Policy passes through."""
    if isinstance(spec, Policy):
        return spec
    name, _, argument = str(spec).partition(":")
    if name == "adaptive" and not argument:
        return Adaptive()
    if name == "first-common" and not argument:
        return FirstCommon()
    if name == "size":
        if not argument:
            return Size()
        try:
            return Size(int(argument))
        except ValueError:
            raise ValueError("size policy threshold must be a number of bytes: size:" + argument) from None
    if name == "fixed":
        if not argument:
            raise ValueError("fixed needs a protocol, as in fixed:grpc")
        return Fixed(argument)
    if argument and name in ("adaptive", "first-common"):
        raise ValueError("the %s policy takes no argument: %s" % (name, spec))
    raise ValueError("unknown selection policy '%s' (known: adaptive, first-common, size[:BYTES], fixed:PROTOCOL)" % spec)


class Backoff:
    """Avoid something that failed for ``initial`` seconds, doubling per failure in a row, at most ``maximum``."""

    def __init__(self, initial=1.0, maximum=30.0, clock=time.monotonic):
        self.initial, self.maximum, self.clock = initial, maximum, clock
        self.states = {}
        self.lock = threading.Lock()

    def failed(self, key):
        with self.lock:
            failures = self.states.get(key, (0, 0))[0] + 1
            self.states[key] = (failures, self.clock() + min(self.maximum, self.initial * (2 ** min(failures - 1, 20))))

    def succeeded(self, key):
        with self.lock:
            self.states.pop(key, None)

    def avoided(self, key):
        s = self.states.get(key)
        return s is not None and self.clock() < s[1]
