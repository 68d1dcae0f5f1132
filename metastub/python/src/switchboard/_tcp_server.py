"""The tcp listener of a Python server: brpc's ``baidu_std`` frames (docs/tcp-wire.md) with the Java
server's codes and limits. A thread per connection reads frames (at most ``max_connections``, and
``max_connections_per_address`` from one address, through the same ConnectionLimits as SOAP); the
calls run on one bounded pool shared by all connections, a connection never holding more than half
of it; a call that finds no room is answered EOVERCROWDED at once, without running. A frame over
the limit is answered ELIMIT from its meta alone and its connection closed without reading the
message; a frame's bytes must arrive within ``request_seconds`` of its first, whatever size it
announces; a connection with no call under way is closed after ``idle_seconds``.

Beside its TCP port the listener takes the same connections on a Unix socket, as the Java tcp server
does (UnixListener): ``tcp.sock`` in a directory of its own that only this OS user may enter, named
in the endpoint with this host's id, so that clients on this host (Java's and Python's) take it; a
caller there is ``uid:N`` (``SO_PEERCRED``), and all such callers share one address for the
connection limits. Not with TLS, not where the platform has no Unix sockets, and not with
``SWITCHBOARD_TCP_UNIX=false``.

With TLS (``tcps://``) each connection's handshake runs on its own thread within
``HANDSHAKE_SECONDS``, under the connection limits like any connection; the caller is its client
certificate's principal (``MUTUAL_TLS``). The TLS connection runs over memory buffers
(``_tcp.TlsWire``): the reading thread and the threads writing answers never use OpenSSL's connection
at once, and a record half arrived never blocks the reader past its deadlines."""

import errno
import logging
import os
import select
import shutil
import socket
import stat
import struct
import threading
import sys
import tempfile
import time
from concurrent import futures

from . import _address, _limits, _peer, _tcp, _trace
from ._limits import ConnectionLimits
from .context import DEADLINE_EXCEEDED, ServerCallContext
from .errors import DeclaredFault, Draining, PermissionDenied, Refused

REQUEST_SECONDS = 30.0
HANDSHAKE_SECONDS = 10.0   # a TLS handshake's bound from the connection's accept, Netty's default on the Java server
UNIX_PEERS = "unix-socket"   # the one address every local process on the Unix socket shares, as in Java
UNIX_DIRECTORY_PREFIX = "sb-tcp-"
# the sweep of killed servers' socket directories, as the Java server's (StaleSocketDirectories):
STALE_SECONDS = 60.0   # a server makes its directory, binds (refusing until it listens), listens within moments
MAX_ENTRIES_READ = 4096   # of the parent, per start: a huge tmp dir does not slow a start
MAX_EXAMINED = 256   # directories per start; each costs a few system calls and a connect

LOG = logging.getLogger("switchboard.tcp")


class _Gone(Exception):
    """The connection ended (closed, stalled, or its framing cannot be trusted)."""


class TcpListener:
    def __init__(self, server, host, max_connections, max_connections_per_address, workers, idle_seconds,
                 max_frame_bytes=_tcp.MAX_FRAME_BYTES, request_seconds=REQUEST_SECONDS, unix=True, tls=None,
                 handshake_seconds=HANDSHAKE_SECONDS, advertise=None):
        """Listens on ``host``; its endpoint names ``advertise`` (``_address.endpoint_host``)."""
        self.server, self.idle_seconds, self.request_seconds = server, idle_seconds, request_seconds
        self.tls_contexts = tls.server_contexts() if tls is not None else None
        self.handshake_seconds = handshake_seconds
        # a caller that takes no byte of an answer for this long has its connection closed: one
        # that never reads would otherwise hold the worker writing it for good
        self.write_seconds = request_seconds
        self.slow_readers = 0   # connections closed for taking no answer in time
        self.lock = threading.Lock()
        self.max_frame_bytes = min(max_frame_bytes, server.max_message)
        self.limits = ConnectionLimits(max_connections, max_connections_per_address)
        self.pool = futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="switchboard-tcp-call")
        self.room = threading.BoundedSemaphore(workers)
        self.per_connection = max(1, workers // 2)
        self.by_service = {}
        for op in server.iface.operations.values():
            service, method = op.path[1:].rsplit("/", 1)
            self.by_service.setdefault(service, {})[method] = op
        self.sock = _address.listening_socket(host)
        self.address = "%s://%s/%s" % ("tcp" if tls is None else "tcps",
                                       _address.host_port(advertise or host, self.sock.getsockname()[1]),
                                       server.component)
        self.closed = False
        # over TLS, callers come over TCP only, where their certificates are checked (docs/tcp-wire.md)
        self.unix_path = self._open_unix() if unix and tls is None and _tcp.unix_enabled() \
            and hasattr(socket, "AF_UNIX") else None
        if self.unix_path is not None:
            self.address += "?" + _tcp.unix_query(self.unix_path)
            threading.Thread(target=self._accept, args=(self.unix_sock, True), name="switchboard-tcp-accept-unix",
                             daemon=True).start()
        threading.Thread(target=self._accept, args=(self.sock, False), name="switchboard-tcp-accept",
                         daemon=True).start()

    def _open_unix(self):
        """The Unix socket's path, listening; None (with a line on stderr, TCP still served) if none can be made."""
        self.unix_sock = None
        try:
            parent = os.environ.get("SWITCHBOARD_TCP_UNIX_DIRECTORY", tempfile.gettempdir())
            remove_stale_unix_directories(parent)
            self.unix_sock, self.unix_directory, path = listen_unix(parent, UNIX_DIRECTORY_PREFIX, _tcp.UNIX_FILE)
            return path
        except OSError as e:
            print("switchboard: tcp serves over TCP only, no Unix socket: %s" % e, file=sys.stderr, flush=True)
            return None

    def _accept(self, listening, unix):
        while not self.closed:
            try:
                conn, address = listening.accept()
            except OSError as e:
                what = _limits.accept_failed(e)
                if what == _limits.GONE or self.closed:
                    return
                if what == _limits.PAUSE:
                    time.sleep(_limits.ACCEPT_PAUSE)
                continue
            if not self.limits.admit(conn, UNIX_PEERS if unix else address[0]):
                conn.close()
                continue
            threading.Thread(target=self._connection, args=(conn, address, unix, time.monotonic()),
                             name="switchboard-tcp-connection", daemon=True).start()

    def _connection(self, conn, address, unix, accepted):
        connection = None
        early = b""   # application bytes that came with the TLS handshake's last flight
        try:
            if unix:
                wire, peer = _tcp.PlainWire(conn, True), _peer.from_unix_socket(conn, self.unix_path)
            elif self.tls_contexts is None:
                wire, peer = _tcp.PlainWire(conn, True), _peer.Peer(None, _peer.ANONYMOUS, _address.of_peer(address))
            else:
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)   # the handshake's flights too
                wire = _tcp.TlsWire(conn, self.tls_contexts.current(), write_seconds=self.write_seconds)
                try:
                    early = wire.handshake(accepted + self.handshake_seconds)
                except OSError as e:   # TimeoutError and ssl.SSLError among them
                    LOG.warning("tcp refused a connection from %s at TLS: %s", address[0], e)
                    return
                peer = _peer.from_der(wire.peer_certificate(), _address.of_peer(address), wire.ssl_object)
            connection = _Connection(self, conn, wire, peer)
            connection.buffer += early
            connection.serve()
        except (_Gone, OSError):
            pass
        finally:
            self.limits.release(conn)
            if connection is not None:
                connection.close()
            else:
                conn.close()

    def close(self):
        self.closed = True
        for listening in (self.sock, self.unix_sock if self.unix_path is not None else None):
            try:
                if listening is not None:
                    listening.close()
            except OSError:
                pass
        if self.unix_path is not None:
            shutil.rmtree(self.unix_directory, ignore_errors=True)   # the socket and its directory
        self.pool.shutdown(wait=False)


def listen_unix(parent, prefix, file):
    """A Unix socket listening at ``file`` in a new directory ``prefix*`` in ``parent`` that only
    this OS user may enter (clients take only a socket in such a directory, ``_tcp.ours``):
    (socket, directory, path). OSError, and nothing left behind, if it cannot be made."""
    directory = sock = None
    try:
        directory = tempfile.mkdtemp(prefix=prefix, dir=parent)
        os.chmod(directory, 0o700)   # mkdtemp's mode, said again
        path = os.path.join(directory, file)
        if len(path.encode("utf-8")) > 107:
            raise OSError("the path %s is over the 107 bytes a Unix socket's path may have; set "
                          "SWITCHBOARD_TCP_UNIX_DIRECTORY to a shorter directory" % path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(path)
        sock.listen(128)
        return sock, directory, path
    except OSError:
        if sock is not None:
            sock.close()
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)
        raise


def remove_stale_unix_directories(parent, prefix=UNIX_DIRECTORY_PREFIX, socket_file=_tcp.UNIX_FILE):
    """Removes the socket directories in ``parent`` of servers that died without closing (SIGKILL, a
    crash), which would otherwise stay for good; never fails. Only what is surely a dead server's
    goes, by the Java server's rule (docs/tcp-wire.md): an entry named ``sb-tcp-*`` (``prefix``) that
    is a directory as a server makes it (``_tcp.private_directory``), holding nothing or only a socket
    ``tcp.sock`` (``socket_file``) that refuses connections, the directory and the socket both modified over
    STALE_SECONDS ago. Read and removed through directory descriptors: no link is followed."""
    if not {os.open, os.stat, os.unlink, os.rmdir} <= os.supports_dir_fd or os.scandir not in os.supports_fd:
        return
    young_since = time.time() - STALE_SECONDS
    try:
        parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as e:
        LOG.debug("tcp leaves stale socket directories in %s: %s", parent, e)
        return
    try:
        examined = 0
        with os.scandir(parent_fd) as entries:
            for read, entry in enumerate(entries):
                if read >= MAX_ENTRIES_READ or examined >= MAX_EXAMINED:
                    break
                if not entry.name.startswith(prefix):
                    continue
                examined += 1
                try:
                    if _remove_if_stale(parent_fd, parent, entry.name, young_since, socket_file):
                        LOG.debug("tcp removed the socket directory %s of a server gone", os.path.join(parent, entry.name))
                except OSError as e:
                    LOG.debug("tcp leaves %s: %s", os.path.join(parent, entry.name), e)
    except OSError as e:
        LOG.debug("tcp leaves stale socket directories in %s: %s", parent, e)
    finally:
        os.close(parent_fd)


def _remove_if_stale(parent_fd, parent, name, young_since, socket_file):
    """Removes the entry ``name`` of the parent if it is a dead server's directory; says whether it did."""
    checked = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    if not _tcp.private_directory(checked) or checked.st_mtime > young_since:
        return False
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (checked.st_dev, checked.st_ino):
            return False   # replaced since it was checked
        held = os.listdir(fd)
        if held:
            if held != [socket_file]:
                return False
            sock = os.stat(socket_file, dir_fd=fd, follow_symlinks=False)
            if (not stat.S_ISSOCK(sock.st_mode) or sock.st_mtime > young_since
                    or not _nobody_listens(os.path.join(parent, name, socket_file))):
                return False
            os.unlink(socket_file, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)   # an empty directory only, never a link's target
    return True


def _nobody_listens(path):
    """Whether connecting to the socket at ``path`` is refused (ECONNREFUSED): nobody listens there.
    An accepted connection, or any other answer, means leave it."""
    return _tcp.connect_probe(path) == errno.ECONNREFUSED


class _Connection:
    def __init__(self, listener, sock, wire, peer):
        self.listener, self.sock, self.wire, self.peer = listener, sock, wire, peer
        if sock.family != getattr(socket, "AF_UNIX", None):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.poll = select.poll()
        self.poll.register(sock, select.POLLIN)
        self.write_lock = threading.Lock()
        self.lock = threading.Lock()
        self.running = {}   # correlation id -> its ServerCallContext
        self.quiet_since = time.monotonic()   # the end of the last frame read or answer written
        self.buffer = bytearray()
        self.started = None   # when the frame being read began, None before its first byte

    # -- reading -----------------------------------------------------------------------------------

    def serve(self):
        while True:
            # bytes left from the last read are the next frame's: it began when the last one ended
            self.started = time.monotonic() if self.buffer else None
            self._fill(_tcp.HEADER.size)
            magic, body, meta_size = _tcp.HEADER.unpack(bytes(self.buffer[:_tcp.HEADER.size]))
            if magic != _tcp.MAGIC or meta_size > body or meta_size > _tcp.MAX_META_BYTES:
                raise _Gone()   # not baidu_std, or framing that cannot be trusted
            self._fill(_tcp.HEADER.size + meta_size)
            try:
                meta = _tcp.read_meta(bytes(self.buffer[_tcp.HEADER.size:_tcp.HEADER.size + meta_size]))
            except ValueError:
                raise _Gone() from None
            if body - meta_size > self.listener.max_frame_bytes:
                # refused from its meta alone; the message is never read, so the connection ends
                self._write(_tcp.response_meta(meta.correlation_id, _tcp.LIMIT, "request of %d bytes to %s.%s is over "
                                               "the frame limit of %d bytes" % (body - meta_size, meta.service,
                                                                                  meta.method,
                                                                                  self.listener.max_frame_bytes),
                                               {_tcp.REFUSED: "size-limit", _tcp.CLOSING: "1"}))
                raise _Gone()
            self._fill(_tcp.HEADER.size + body)
            message = bytes(self.buffer[_tcp.HEADER.size + meta_size:_tcp.HEADER.size + body])
            del self.buffer[:_tcp.HEADER.size + body]
            self._frame(meta, message)
            with self.lock:
                idle = not self.running
                self.quiet_since = time.monotonic()
            if idle:   # refused or answered at once: waiting again, stalled from now
                self.listener.limits.busy(self.sock, False)

    def _fill(self, n):
        """Reads until the buffer holds ``n`` bytes. A frame begun must arrive whole within
        ``request_seconds`` of its first byte, whatever it announces; with nothing begun and no call
        under way, the connection may stay quiet for ``idle_seconds``."""
        while len(self.buffer) < n:
            if self.started is None:
                with self.lock:
                    busy, quiet_since = bool(self.running), self.quiet_since
                if busy:
                    wait = 1.0   # while calls run, look again each second
                else:
                    # idle from the last frame or answer, not from when this wait began: a call that
                    # just ended must not find its connection's quiet period already spent
                    wait = quiet_since + self.listener.idle_seconds - time.monotonic()
                    if wait <= 0:
                        raise _Gone()   # idle too long
            else:
                wait = self.started + self.listener.request_seconds - time.monotonic()
                if wait <= 0:
                    raise _Gone()   # a frame not whole in time
            if not self.poll.poll(wait * 1000):
                continue   # the top decides: busy still, idle too long, or the frame late
            chunk = self.wire.recv()
            if chunk is None:
                raise _Gone()
            if not chunk:
                continue   # a TLS record not whole yet: its bytes wait in the TLS buffers
            if self.started is None:
                self.started = time.monotonic()
            self.buffer += chunk

    # -- one frame -----------------------------------------------------------------------------------

    def _frame(self, meta, message):
        cid = meta.correlation_id
        if meta.service is None:
            return   # an answer sent to a server: nothing to do with it
        if _tcp.CANCEL in meta.user_fields:
            with self.lock:
                call = self.running.get(cid)
            if call is not None:
                call.cancel()   # its answer is dropped; a Python operation cannot be interrupted, only told
            return
        if meta.attachment_size:
            self._refuse(cid, _tcp.BAD_REQUEST, "attachments are not taken", "malformed", "RpcMeta.attachment_size")
            return
        if meta.compress_type and not _tcp.takes_compression(meta.compress_type):
            self._refuse(cid, _tcp.BAD_REQUEST, _tcp.SNAPPY_NEEDS if meta.compress_type == _tcp.SNAPPY else
                         "compress_type %d is not taken here (snappy, 1, gzip, 2, and zlib, 3, are)" % meta.compress_type,
                         "malformed", "RpcMeta.compress_type")
            return
        ops = self.listener.by_service.get(meta.service)
        if ops is None:
            self._refuse(cid, _tcp.NO_SERVICE, "no service %s here" % meta.service)
            return
        op = ops.get(meta.method)
        if op is None:
            self._refuse(cid, _tcp.NO_METHOD, "%s has no method %s" % (meta.service, meta.method))
            return
        server = self.listener.server
        if not server.serving:
            self._refuse(cid, _tcp.DRAINING, Draining.TEXT)
            return
        from .server import CALL_ID_RULE, well_formed_call_id

        if meta.call_id is not None and not well_formed_call_id(meta.call_id):
            self._refuse(cid, _tcp.BAD_REQUEST, "the request_id is malformed: " + CALL_ID_RULE, "malformed")
            return
        with self.lock:
            if cid in self.running:
                self._refuse(cid, _tcp.BAD_REQUEST, "correlation id %d is under way on this connection" % cid,
                             "malformed")
                return
            if len(self.running) >= self.listener.per_connection:
                full = True
            else:
                full = not self.listener.room.acquire(blocking=False)
            if not full:
                # the deadline counts from the frame's arrival, as the Java server counts it
                call = self.running[cid] = ServerCallContext(
                    meta.timeout_ms / 1000.0 if meta.timeout_ms else None,
                    trace=_trace.parse(meta.user_fields.get(_trace.TRACEPARENT), meta.user_fields.get(_trace.TRACESTATE)))
                self.listener.limits.busy(self.sock, True)   # running a call: never the stalled one to close
        if full:
            self._refuse(cid, _tcp.OVERCROWDED, "every call worker is busy; the call did not run")
            return
        try:
            self.listener.pool.submit(self._run, op, meta, message, call)
        except RuntimeError:   # the pool is shut down: the server is closing
            self._done(cid)
            self._refuse(cid, _tcp.DRAINING, Draining.TEXT)

    def _run(self, op, meta, message, call):
        cid = meta.correlation_id
        compression = meta.compress_type
        server = self.listener.server
        try:
            try:
                caller = server.admit(self.peer,
                                      "Bearer " + meta.token if meta.token else None, op)
                if compression:   # here, on a pool thread: what inflating costs is not told by the size on the wire
                    message = _tcp.inflate(compression, message, self.listener.max_frame_bytes)
                try:
                    request = op.request.FromString(message)
                except Exception as e:
                    raise Refused("malformed", "the %s request cannot be read: %s" % (op.name, e)) from None
                answer = server.runner.run("tcp", op, request, meta.call_id, caller, call)
                data = self._compressed(answer.SerializeToString(), compression)
                if call.expired():   # past its deadline a call fails, as the caller's own timer says
                    reply = (self._timed_out(op, meta), b"")
                elif len(data) > self.listener.max_frame_bytes:
                    reply = (_tcp.response_meta(cid, _tcp.ANSWER_TOO_LARGE, "the answer of %d bytes is over the frame "
                                                "limit; the operation ran" % len(data)), b"")
                else:
                    reply = (_tcp.response_meta(cid, compress_type=compression), data)
            except DeclaredFault as f:
                reply = (_tcp.response_meta(cid, _tcp.DECLARED_FAULT, str(f), compress_type=compression),
                         self._compressed(f.message.SerializeToString(), compression))
            except PermissionDenied as denied:
                user = {_tcp.REFUSED: denied.reason}
                if denied.path:
                    user[_tcp.DENIED_PATH] = denied.path
                reply = (_tcp.response_meta(cid, _tcp.AUTH, denied.text, user), b"")
            except Draining:
                reply = (_tcp.response_meta(cid, _tcp.DRAINING, Draining.TEXT), b"")
            except Refused as r:
                if r.reason == DEADLINE_EXCEEDED:
                    reply = (self._timed_out(op, meta), b"")
                else:
                    user = {_tcp.REFUSED: r.reason}
                    if r.field:
                        user[_tcp.REFUSED_FIELD] = r.field
                    code = _tcp.LIMIT if r.reason == "size-limit" else _tcp.BAD_REQUEST
                    reply = (_tcp.response_meta(cid, code, r.text, user), b"")
            except Exception as e:
                reply = (_tcp.response_meta(cid, _tcp.INTERNAL, str(e) or type(e).__name__,
                                            {_tcp.ERROR_TYPE: type(e).__name__}), b"")
        finally:
            cancelled = self._done(cid)
        if not cancelled:
            try:
                self._write(*reply)
            except OSError:
                pass   # the caller went away
            self.quiet_since = time.monotonic()   # one assignment: the reader takes it whole, with or without the lock

    @staticmethod
    def _timed_out(op, meta):
        return _tcp.response_meta(meta.correlation_id, _tcp.TIMED_OUT, "%s: its timeout of %d ms passed on the server"
                                  % (op.name, meta.timeout_ms))

    def _done(self, cid):
        """Ends the call's part on this connection; whether its caller cancelled it (its answer is dropped)."""
        with self.lock:
            call = self.running.pop(cid, None)
            idle = not self.running
            self.quiet_since = time.monotonic()
        self.listener.room.release()
        if idle:
            self.listener.limits.busy(self.sock, False)
        if call is None:
            return False
        call.end()
        return call.cancelled_by_caller

    def _refuse(self, cid, code, text, reason=None, field=None):
        user = {_tcp.REFUSED: reason} if reason else {}
        if field:
            user[_tcp.REFUSED_FIELD] = field
        self._write(_tcp.response_meta(cid, code, text, user or None))

    @staticmethod
    def _compressed(data, compression):
        return _tcp.deflate(compression, data) if compression else data

    def _write(self, meta, message=b""):
        with self.write_lock:
            try:
                # written from the pool's threads, none waiting for room longer than the write limit
                self.wire.sendall(_tcp.frame(meta, message), self.listener.write_seconds)
            except OSError as e:
                # half a frame may be out: nothing more can be written after it, so the connection
                # ends here, and its reader with it
                if isinstance(e, socket.timeout):
                    with self.listener.lock:
                        self.listener.slow_readers += 1
                    LOG.warning("tcp closed a connection from %s that took no byte of an answer for %s s",
                                self.peer.remote_address, self.listener.write_seconds)
                try:
                    self.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                raise

    def close(self):
        with self.lock:
            calls = list(self.running.values())
        for call in calls:
            call.cancel()   # its caller went away: the calls the operation makes are cancelled in turn
        try:
            self.sock.close()
        except OSError:
            pass
