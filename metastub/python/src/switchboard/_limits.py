"""Fair shares on the Python server's SOAP listener, as the Java servers' (``ConnectionShares``):
connections per remote address are capped, and a new connection over its address's share
displaces that address's own connection stalled longest (idle, or a request begun and not
finished), so a host flooding the listener with quiet connections costs only its own; at the
server's cap the connection stalled longest of all makes room. A connection running an operation
is never the one closed; when there is none to close, the new connection is refused. A few refused
connections (``MAX_REFUSED_ANSWERING``) may make one request each within ``REFUSED_SECONDS``:
the SOAP listener serves a cancel message on one (a cancel needs a connection of its own, so it
would otherwise be lost exactly when its caller is busiest) and answers anything else 503.

Every listener's accept loop reads a failed accept with ``accept_failed``: out of descriptors (or
memory), it pauses and tries again rather than spin on a listening socket that stays readable, or
stop accepting for good."""

import errno
import logging
import socket
import threading
import time

LOG = logging.getLogger("switchboard.server")

GONE, PAUSE, NEXT = "gone", "pause", "next"   # what an accept loop does after a failed accept
ACCEPT_PAUSE = 0.1   # seconds without accepting, when the process is out of descriptors
_OUT_OF_ROOM = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
_SOCKET_GONE = {errno.EBADF, errno.EINVAL, errno.ENOTSOCK}
_warned = [0.0]   # when out of room was last logged: at most once every 10 s


def accept_failed(error):
    """What an accept loop does after ``error``: GONE (the listening socket was closed: stop),
    PAUSE (out of descriptors or memory: accept nothing for ACCEPT_PAUSE seconds while the
    connections under way go on and close; logged at most every 10 s) or NEXT (that connection
    failed, as a caller's reset before the accept: take the next)."""
    if error.errno in _SOCKET_GONE:
        return GONE
    if error.errno in _OUT_OF_ROOM:
        now = time.monotonic()
        if now - _warned[0] >= 10:
            _warned[0] = now
            LOG.warning("a listener cannot accept connections (%s): it tries again every %.1f s; raise the "
                        "process's descriptor limit (ulimit -n) or lower max_connections", error, ACCEPT_PAUSE)
        return PAUSE
    return NEXT


class _Slot:
    __slots__ = ("sock", "host", "busy", "since")

    def __init__(self, sock, host):
        self.sock, self.host, self.busy, self.since = sock, host, False, time.monotonic()


MAX_REFUSED_ANSWERING = 16   # refused connections that may make their one request at a time (as Java's ConnectionShares)
REFUSED_SECONDS = 2.0        # how long such a connection has to make it


class ConnectionLimits:
    def __init__(self, max_connections, max_per_address):
        if max_connections < 1 or max_per_address < 1:
            raise ValueError("connection limits must be at least 1")
        self.max_connections, self.max_per_address = max_connections, max_per_address
        self._slots = {}
        self._per_host = {}
        self._lock = threading.Lock()
        self.refused = self.evicted = 0
        self._refused_answering = 0

    def admit(self, sock, host):
        """Whether the new connection may stay; at the cap, first closes the longest-stalled one."""
        with self._lock:
            if self._per_host.get(host, 0) >= self.max_per_address:
                victim = self._stalled_longest(lambda s: s.host == host)
            elif len(self._slots) >= self.max_connections:
                victim = self._stalled_longest(lambda s: True)
            else:
                victim = None
            full = victim is None and (self._per_host.get(host, 0) >= self.max_per_address
                                       or len(self._slots) >= self.max_connections)
            if full:
                self.refused += 1
                return False
            if victim is not None:
                self._forget(victim)
                self.evicted += 1
            self._slots[id(sock)] = _Slot(sock, host)
            self._per_host[host] = self._per_host.get(host, 0) + 1
        if victim is not None:
            try:   # wakes the victim's thread out of its read; that thread closes the socket
                victim.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        return True

    def _stalled_longest(self, which):
        stalled = [s for s in self._slots.values() if not s.busy and which(s)]
        return min(stalled, key=lambda s: s.since) if stalled else None

    def _forget(self, slot):
        del self._slots[id(slot.sock)]
        left = self._per_host[slot.host] - 1
        if left:
            self._per_host[slot.host] = left
        else:
            del self._per_host[slot.host]

    def claim_refused_answer(self):
        """A place for a refused connection to make its one request; False when they are all taken."""
        with self._lock:
            if self._refused_answering >= MAX_REFUSED_ANSWERING:
                return False
            self._refused_answering += 1
            return True

    def refused_answered(self):
        with self._lock:
            self._refused_answering -= 1

    def refused_answering(self):
        with self._lock:
            return self._refused_answering

    def release(self, sock):
        with self._lock:
            slot = self._slots.get(id(sock))
            if slot is not None and slot.sock is sock:
                self._forget(slot)

    def busy(self, sock, busy):
        """Marks a connection running an operation (never evicted) or waiting again (stalled from now)."""
        with self._lock:
            slot = self._slots.get(id(sock))
            if slot is not None and slot.sock is sock:
                slot.busy, slot.since = busy, time.monotonic()

    def count(self, host=None):
        with self._lock:
            return len(self._slots) if host is None else self._per_host.get(host, 0)
