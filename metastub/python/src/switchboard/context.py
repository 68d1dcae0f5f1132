"""The call a served operation runs in, as the Java ``ServerCallContext``: its deadline, as the caller
set it, and whether the caller has cancelled it. A call the operation makes through a board on the
operation's thread gets what is left of that deadline (never more than its own timeout) and is
cancelled when the operation's call is::

    import switchboard

    class Optimizer:
        def fit(self, data):
            while not switchboard.is_cancelled():           # the caller gave up, or its deadline passed
                simulator.simulate(parameters=p)             # within the time left, cancelled with it
            ...

A caller gives several calls one deadline with ``with switchboard.deadline(seconds):``.
Work handed to another thread takes the call along with ``wrap``:
``pool.submit(switchboard.current_call().wrap(step), args)``. A Python operation is never
interrupted: it sees the cancel when it asks.
"""

import contextlib
import contextvars
import threading
import time

_CURRENT = contextvars.ContextVar("switchboard_call", default=None)

DEADLINE_EXCEEDED = "deadline-exceeded"   # the refusal of a call whose deadline passed before it could start


class ServerCallContext:
    """One call of a served operation. Servers make one per call (``timeout``: the seconds the
    caller had left when the request arrived, None without a deadline)."""

    def __init__(self, timeout=None, clock=time.monotonic, trace=None):
        self._clock = clock
        self.deadline = None if timeout is None else clock() + max(0.0, timeout)   # on ``clock``
        self.trace = trace   # the W3C trace context the call arrived with (a checked ``_trace.Trace``), or None
        self._lock = threading.Lock()
        self._cancelled = False
        self._ended = False
        self._listeners = []

    def time_left(self):
        """Seconds until the deadline (0 once it has passed); None without one."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - self._clock())

    def expired(self):
        """Whether the deadline has passed; False without one."""
        return self.deadline is not None and self._clock() >= self.deadline

    @property
    def cancelled(self):
        """Whether the caller cancelled the call or its deadline passed."""
        return self._cancelled or self.expired()

    @property
    def cancelled_by_caller(self):
        """Whether the caller (or the server on its behalf: a dropped connection, gRPC's deadline)
        cancelled the call; the server then drops its answer."""
        return self._cancelled

    def cancel(self):
        """Cancels the call: ``cancelled`` turns true and the listeners run, once, on this thread.
        Does nothing once the call has ended."""
        with self._lock:
            if self._cancelled or self._ended:
                return
            self._cancelled = True
            listeners, self._listeners = self._listeners, []
        for listener in listeners:
            try:
                listener()
            except Exception:   # one listener's failure must not keep the others from running
                pass

    def on_cancel(self, listener):
        """Runs ``listener`` when the caller cancels the call (at once, on this thread, if it has
        already); returns what drops the registration. Listeners run on the thread that cancels (a
        connection's reader): they must be short. A deadline needs no listener: the calls the
        operation makes end by it themselves."""
        with self._lock:
            if not self._cancelled:
                if not self._ended:
                    self._listeners.append(listener)
                return lambda: self._drop(listener)
        listener()
        return lambda: None

    def _drop(self, listener):
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def end(self):
        """The call's answer is settled: later cancels do nothing, and the listeners are dropped."""
        with self._lock:
            self._ended = True
            self._listeners = []

    def wrap(self, fn):
        """``fn``, run in this call on whichever thread calls it, with the context variables of the
        thread that wraps it (OpenTelemetry's current span among them, so the calls ``fn`` makes are
        traced as children of the operation's span)."""
        handed_over = contextvars.copy_context()

        def in_call(*args, **kwargs):
            def run():
                token = _CURRENT.set(self)
                try:
                    return fn(*args, **kwargs)
                finally:
                    _CURRENT.reset(token)
            return handed_over.copy().run(run)   # a copy per run: one context cannot be entered twice at once
        return in_call


@contextlib.contextmanager
def deadline(seconds):
    """Every call made in the ``with`` block, on this thread, ends within ``seconds`` from now, each
    of its attempts (a failsafe fallback, another replica) getting only what is left; inside an
    operation, never later than the operation's own deadline, and cancelled with its call. As
    grpc-java's ``Context.withDeadlineAfter`` and the Java meta-stub's ``withDeadlineAfter``::

        with switchboard.deadline(2.0):
            plan = optimizer.fit(data=d)        # both calls together within 2 s
            simulator.simulate(parameters=plan)
    """
    outer = _CURRENT.get()
    scope = ServerCallContext(seconds, trace=None if outer is None else outer.trace)
    drop = None
    if outer is not None:
        if outer.deadline is not None and outer.deadline < scope.deadline:
            scope.deadline = outer.deadline
        drop = outer.on_cancel(scope.cancel)
    token = _CURRENT.set(scope)
    try:
        yield scope
    finally:
        _CURRENT.reset(token)
        scope.end()
        if drop is not None:
            drop()


def current_call():
    """The call the current thread's operation runs in, or the ``deadline`` block it is in; None
    outside of both."""
    return _CURRENT.get()


def time_left():
    """Seconds left until the current call's deadline; None without one, or outside of a call."""
    call = _CURRENT.get()
    return None if call is None else call.time_left()


def is_cancelled():
    """Whether the current call was cancelled by its caller or its deadline passed; False outside of a call."""
    call = _CURRENT.get()
    return call is not None and call.cancelled


def _entered(call):
    """Makes ``call`` the current thread's until the returned token is reset (servers)."""
    return _CURRENT.set(call)


def _left(token):
    _CURRENT.reset(token)
