"""The Python server's gRPC listener, held to the fair shares of its SOAP and tcp listeners
(``ConnectionLimits``): connections per remote address and in all are capped, a new connection over
its address's share displaces that address's connection stalled longest (at the server's cap, the
one stalled longest of all), and a connection running an operation is never the one closed.

grpcio has no hook where it accepts or closes a connection, so the listening socket is this
module's. It admits each connection within the shares and relays its bytes, TLS records included,
to grpcio, which listens on a Unix socket in a private directory (mode 0700: no other user's process
gets past the shares through it). Each relayed connection comes from a socket bound to a name of its
own there, which grpcio gives as the call's peer: that is how a call learns its caller's address
and marks its connection busy while it runs. One thread relays every connection and never blocks
on one: a side that takes no more bytes stops the reads from the other, and a caller that takes
nothing of what waits for it for ``UNTAKEN_SECONDS`` (the Java servers' request timeout) is closed.

With ``unix=True`` it listens on a Unix socket for this host's clients too (``unix_path``: a
``grpc.sock`` in a directory of its own, mode 0700, as the Java servers' and the tcp listener's),
relayed the same way: a caller there is the uid the kernel names (``SO_PEERCRED``), which grpcio
could not tell, and every process on it shares one address's share."""

import contextlib
import itertools
import logging
import os
import selectors
import shutil
import socket
import sys
import tempfile
import threading
import time

from . import _address, _limits, _peer

LOG = logging.getLogger("switchboard.grpc")

DIRECTORY_PREFIX = "sb-grpc-"
SOCKET_FILE = "grpc.sock"
CHUNK = 64 << 10   # the most read from one side at a time, and held for a side that takes nothing
UNTAKEN_SECONDS = 30.0   # a caller that takes no byte of what grpcio sends for this long is closed


def available():
    """Whether the listener can be used here: it needs Unix sockets."""
    return hasattr(socket, "AF_UNIX")


class _Pipe:
    """One caller's connection and grpcio's end of it, with the bytes each side has not taken yet."""

    __slots__ = ("outer", "inner", "address", "unix_peer", "name", "to_inner", "to_outer", "calls", "closed",
                 "untaken_since")

    def __init__(self, outer, inner, address, name, unix_peer=None):
        """``unix_peer``: who the caller on the Unix socket is (``_peer.from_unix_socket``); None over TCP."""
        self.outer, self.inner, self.address, self.name = outer, inner, address, name
        self.unix_peer = unix_peer
        self.to_inner = self.to_outer = b""
        self.calls = 0
        self.closed = False
        self.untaken_since = None   # since when the caller has taken none of the bytes waiting for it


class GrpcListener:
    """Listens on ``host`` (an ephemeral port, ``port``) and relays what it admits to ``target``,
    where grpcio is to listen; ``start()`` once grpcio does."""

    def __init__(self, host, limits, unix=False):
        from ._tcp_server import remove_stale_unix_directories

        self.limits = limits
        parent = os.environ.get("SWITCHBOARD_TCP_UNIX_DIRECTORY", tempfile.gettempdir())
        remove_stale_unix_directories(parent, DIRECTORY_PREFIX, SOCKET_FILE)
        self.directory = tempfile.mkdtemp(prefix=DIRECTORY_PREFIX, dir=parent)
        try:
            os.chmod(self.directory, 0o700)   # mkdtemp's mode, said again: the shares hold only outside it
            self.path = os.path.join(self.directory, SOCKET_FILE)
            if len(self.path.encode("utf-8")) > 100:   # 107 at most, and the relay's own names beside it
                raise OSError("the path %s is too long for a Unix socket; set SWITCHBOARD_TCP_UNIX_DIRECTORY to a "
                              "shorter directory" % self.path)
            self.sock = _address.listening_socket(host)
        except BaseException:
            shutil.rmtree(self.directory, ignore_errors=True)
            raise
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]
        self.unix_sock = self.unix_directory = self.unix_path = None
        if unix:
            self._open_unix(parent)
        self._pipes = {}   # the name grpcio gives as a call's peer -> its _Pipe; read by the calls' threads
        self._lock = threading.Lock()
        self._names = itertools.count(1)
        self._selector = selectors.DefaultSelector()
        self._wake_read, self._wake_write = socket.socketpair()
        self._closed = False
        self._accepting_again = None   # when to accept again after running out of descriptors
        self._untaken = set()   # pipes whose caller has bytes waiting
        self.untaken_seconds = UNTAKEN_SECONDS
        self.untaken_closed = 0   # connections closed for taking nothing
        self._thread = threading.Thread(target=self._run, name="switchboard-grpc-listener", daemon=True)

    def _open_unix(self, parent):
        """Listens on ``grpc.sock`` in a directory of its own; with a line on stderr and TCP only if it cannot."""
        from ._tcp_server import listen_unix

        try:
            self.unix_sock, self.unix_directory, self.unix_path = listen_unix(parent, DIRECTORY_PREFIX, SOCKET_FILE)
            self.unix_sock.setblocking(False)
        except OSError as e:
            print("switchboard: gRPC serves over TCP only, no Unix socket: %s" % e, file=sys.stderr, flush=True)

    def _listening(self):
        return [s for s in (self.sock, self.unix_sock) if s is not None]

    @property
    def target(self):
        """Where grpcio listens."""
        return "unix:" + self.path

    def start(self):
        self._thread.start()

    def close(self):
        """Stops listening and ends every relayed connection; grpcio is stopped first, so that its
        goodbyes reach the callers."""
        if self._closed:
            return
        self._closed = True
        if self._thread.ident is None:   # never started: nothing relays, nothing to stop
            for s in self._listening() + [self._wake_read, self._wake_write]:
                s.close()
        else:
            try:
                self._wake_write.send(b"x")
            except OSError:
                pass
            if self._thread is not threading.current_thread():
                self._thread.join(10)
        shutil.rmtree(self.directory, ignore_errors=True)
        if self.unix_directory is not None:
            shutil.rmtree(self.unix_directory, ignore_errors=True)

    def pipes(self):
        with self._lock:
            return len(self._pipes)

    def untaken_waiting(self):
        """How many connections have bytes waiting that their caller has not taken."""
        return len(self._untaken)

    # -- what a call asks ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def running(self, peer):
        """Marks the connection of the call whose grpcio peer is ``peer`` busy while the block runs
        (never the one closed to make room); gives its ``_Pipe`` (the caller's ``address``,
        ``host:port`` or the Unix socket's path, and on the Unix socket its ``unix_peer``), or None
        if the call did not come through this listener."""
        pipe = self._pipe(peer)
        if pipe is None:
            yield None
            return
        self._count(pipe, 1)
        try:
            yield pipe
        finally:
            self._count(pipe, -1)

    def _pipe(self, peer):
        if not peer.startswith("unix:"):
            return None
        with self._lock:
            return self._pipes.get(peer[len("unix:"):])

    def _count(self, pipe, change):
        with self._lock:   # under the lock, so that two calls' marks reach the limits in their order
            pipe.calls += change
            self.limits.busy(pipe.outer, pipe.calls > 0)

    # -- the relay -----------------------------------------------------------------------------------

    def _run(self):
        selector = self._selector
        for listening in self._listening():
            selector.register(listening, selectors.EVENT_READ, None)
        selector.register(self._wake_read, selectors.EVENT_READ, None)
        try:
            while not self._closed:
                timeout = None
                if self._accepting_again is not None:
                    timeout = self._accepting_again - time.monotonic()
                    if timeout <= 0:
                        for listening in self._listening():
                            selector.register(listening, selectors.EVENT_READ, None)
                        self._accepting_again = timeout = None
                if self._untaken:
                    self._close_untaken()
                    timeout = 1.0 if timeout is None else min(timeout, 1.0)
                for key, events in selector.select(timeout):
                    if key.fileobj is self.sock or key.fileobj is self.unix_sock:
                        self._accept(key.fileobj)
                    elif key.fileobj is self._wake_read:
                        self._wake_read.recv(64)
                    elif not key.data.closed:
                        self._move(key.data, key.fileobj, events)
        except Exception:   # the relay must not die quietly: every gRPC caller would hang
            LOG.exception("the gRPC listener stopped")
        finally:
            with self._lock:
                pipes = list(self._pipes.values())
            for pipe in pipes:
                self._close(pipe)
            for s in self._listening() + [self._wake_read, self._wake_write]:
                s.close()
            selector.close()

    def _accept(self, listening):
        from ._tcp_server import UNIX_PEERS

        unix = listening is self.unix_sock
        while True:
            try:
                outer, address = listening.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                what = _limits.accept_failed(e)
                if what == _limits.PAUSE and self._accepting_again is None:
                    # the connections under way go on; both listeners accept again a little later
                    for s in self._listening():
                        self._selector.unregister(s)
                    self._accepting_again = time.monotonic() + _limits.ACCEPT_PAUSE
                if what != _limits.NEXT:
                    return
                continue
            # every local process counts as one address: none can claim an address of its own
            if not self.limits.admit(outer, UNIX_PEERS if unix else address[0]):
                outer.close()   # the caller sees its connection end before a byte: the call did not run
                continue
            name = os.path.join(self.directory, "c%x" % next(self._names))
            inner = None
            try:
                inner = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                outer.setblocking(False)
                if not unix:
                    outer.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                inner.setblocking(False)
                inner.bind(name)
                try:
                    inner.connect(self.path)
                finally:
                    os.unlink(name)   # the socket keeps the name grpcio reads; the directory keeps nothing
            except OSError as e:   # grpcio stopped, its backlog is full, or no descriptor is left
                LOG.warning("the gRPC listener could not pass on a connection from %s: %s",
                            self.unix_path if unix else address[0], e)
                if inner is not None:
                    inner.close()
                self.limits.release(outer)
                outer.close()
                continue
            if unix:
                pipe = _Pipe(outer, inner, self.unix_path, name, _peer.from_unix_socket(outer, self.unix_path))
            else:
                pipe = _Pipe(outer, inner, _address.of_peer(address), name)
            with self._lock:
                self._pipes[name] = pipe
            self._interest(pipe)

    def _close_untaken(self):
        """Closes the connections of callers that took nothing of what waits for them for
        ``untaken_seconds``: one that never reads would otherwise hold its answers in grpcio for good."""
        now = time.monotonic()
        for pipe in [p for p in self._untaken if now - p.untaken_since >= self.untaken_seconds]:
            LOG.warning("gRPC closed the connection of %s: it took nothing sent to it for %.0f s", pipe.address,
                        self.untaken_seconds)
            self.untaken_closed += 1
            self._close(pipe)

    def _move(self, pipe, sock, events):
        outer = sock is pipe.outer
        try:
            if events & selectors.EVENT_WRITE:
                if outer:
                    taken = sock.send(pipe.to_outer)
                    pipe.to_outer = pipe.to_outer[taken:]
                    if taken:
                        pipe.untaken_since = time.monotonic()
                else:
                    pipe.to_inner = pipe.to_inner[sock.send(pipe.to_inner):]
            if events & selectors.EVENT_READ:
                data = sock.recv(CHUNK)
                if not data:   # one side is done (an evicted caller's connection among them)
                    self._close(pipe)
                    return
                other = pipe.inner if outer else pipe.outer
                try:
                    sent = other.send(data)
                except (BlockingIOError, InterruptedError):
                    sent = 0
                if outer:
                    pipe.to_inner = memoryview(data)[sent:]
                else:
                    pipe.to_outer = memoryview(data)[sent:]
                    pipe.untaken_since = time.monotonic()
            self._interest(pipe)
        except (BlockingIOError, InterruptedError):
            self._interest(pipe)
        except OSError:
            self._close(pipe)

    def _interest(self, pipe):
        """Reads a side only while the other has taken everything read from it before; writes a side
        that has bytes waiting."""
        self._want(pipe.outer, pipe, (0 if pipe.to_inner else selectors.EVENT_READ)
                   | (selectors.EVENT_WRITE if pipe.to_outer else 0))
        self._want(pipe.inner, pipe, (0 if pipe.to_outer else selectors.EVENT_READ)
                   | (selectors.EVENT_WRITE if pipe.to_inner else 0))
        if pipe.to_outer:
            self._untaken.add(pipe)
        else:
            self._untaken.discard(pipe)

    def _want(self, sock, pipe, events):
        try:
            key = self._selector.get_key(sock)
        except KeyError:
            key = None
        if not events:
            if key is not None:
                self._selector.unregister(sock)
        elif key is None:
            self._selector.register(sock, events, pipe)
        elif key.events != events:
            self._selector.modify(sock, events, pipe)

    def _close(self, pipe):
        if pipe.closed:
            return
        pipe.closed = True
        self._untaken.discard(pipe)
        with self._lock:
            self._pipes.pop(pipe.name, None)
        for sock in (pipe.outer, pipe.inner):
            try:
                self._selector.unregister(sock)
            except (KeyError, ValueError):
                pass
            sock.close()
        self.limits.release(pipe.outer)


def start_failed(e):
    print("switchboard: gRPC serves without its per-address connection share: %s" % e, file=sys.stderr, flush=True)
