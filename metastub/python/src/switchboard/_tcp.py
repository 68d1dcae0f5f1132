"""The lean ``tcp`` protocol: Apache brpc's ``baidu_std`` frames on a plain socket (docs/tcp-wire.md).

A frame is ``PRPC``, the body's size and the meta's size (big-endian 32-bit), the ``RpcMeta`` and the
message, which is the operation's protobuf request or response exactly as gRPC carries it. The
client keeps one connection per server address, shared by every call to it; a blocking caller
writes its own frame and reads the connection itself until its answer is in (handing other calls'
answers to their callers), as the Java client does, so a call wakes no thread but its own. On the
server's host, an endpoint naming a Unix socket that is the server's as the Java server makes it
(``tcp.sock`` in a directory of this OS user's with mode 0700) is reached through that socket.
A ``tcps://`` endpoint is called over TLS through ``TlsWire`` (memory buffers, which the Python
server uses too): its readers and writers never use OpenSSL's connection at once."""

import concurrent.futures
import errno
import hashlib
import os
import select
import socket
import ssl
import stat
import struct
import threading
import time
import zlib
from urllib.parse import parse_qsl, quote, urlparse

from ._wire import read_varint, varint
from .errors import Draining, PermissionDenied, Refused, RemoteError, TransportError

MAGIC = b"PRPC"
HEADER = struct.Struct(">4sII")
MAX_FRAME_BYTES = 4 << 20          # a message in a frame, as the Java side's TcpLimits
POLICY_MAX_BYTES = 2 << 20         # calls a policy sends over tcp on its own
MAX_META_BYTES = 64 << 10
MAX_USER_FIELDS = 64
IDLE_REPLACE_SECONDS = 30.0        # a connection unused this long is replaced, not written into
IDLE_LOOK_SECONDS = 1.0            # one unused this long is looked at first: did the server end it?
CANCEL_WRITE_SECONDS = 5.0         # a cancel frame not taken by then ends its connection
UNIX_FILE = "tcp.sock"
GRPC_UNIX_FILE = "grpc.sock"   # a Java gRPC server's socket (UnixSockets.GRPC)

# error codes (brpc's numbers below 3000, Switchboard's above)
NO_SERVICE, NO_METHOD, BAD_REQUEST, AUTH = 1001, 1002, 1003, 1004
TIMED_OUT, OVERCROWDED, INTERNAL, LIMIT = 1008, 1011, 2001, 2004
DECLARED_FAULT, DRAINING, ANSWER_TOO_LARGE = 3001, 3002, 3003
REFUSED, REFUSED_FIELD, DENIED_PATH, ERROR_TYPE, CANCEL = (
    "sb-refused", "sb-refused-field", "sb-denied-path", "sb-error-type", "sb-cancel")
CLOSING = "sb-closing"   # on an answer after which the server closes the connection

# RpcMeta.compress_type, brpc's numbers: 1 snappy (raw, as brpc writes it; Python's standard
# library has none, so it is taken with the cramjam package: pip install switchboard[snappy]),
# 2 gzip, 3 zlib; an answer comes in its request's
SNAPPY, GZIP, ZLIB = 1, 2, 3
_COMPRESSIONS = {GZIP: ("gzip", 16 + zlib.MAX_WBITS), ZLIB: ("zlib", zlib.MAX_WBITS)}
SNAPPY_NEEDS = "snappy (1) needs the cramjam package: pip install switchboard[snappy]"
_NOT_LOADED = object()
_cramjam = _NOT_LOADED


def _snappy():
    """cramjam's snappy, or None when the package is not installed (looked for once)."""
    global _cramjam
    if _cramjam is _NOT_LOADED:
        try:
            import cramjam
            _cramjam = cramjam.snappy
        except ImportError:
            _cramjam = None
    return _cramjam


def takes_compression(compress_type):
    return compress_type in _COMPRESSIONS or (compress_type == SNAPPY and _snappy() is not None)


def inflate(compress_type, data, limit):
    """The message ``data`` holds in ``compress_type``, inflated to at most ``limit`` bytes (never
    more in memory, however small ``data`` is): ``Refused`` ``size-limit`` past it, ``malformed``
    when ``data`` is not whole data of that compression."""
    if compress_type == SNAPPY:
        return _unsnappy(data, limit)
    name, wbits = _COMPRESSIONS[compress_type]
    d = zlib.decompressobj(wbits)
    try:
        out = d.decompress(data, limit + 1)
    except zlib.error as e:
        raise Refused("malformed", "the message is not %s data: %s" % (name, e)) from None
    if len(out) > limit:
        raise Refused("size-limit", "the message inflates past the limit of %d bytes" % limit)
    if not d.eof or d.unused_data:
        raise Refused("malformed", "the message is not whole %s data" % name)
    return out


def _unsnappy(data, limit):
    """Raw snappy: its preamble, a varint, declares the inflated length, which is checked against
    ``limit`` before anything is inflated (as the Java server's FrameCompression does)."""
    try:
        declared, _ = read_varint(data, 0)
    except ValueError:
        raise Refused("malformed", "the message is not snappy data: no length before it") from None
    if declared > limit:
        raise Refused("size-limit", "the message inflates past the limit of %d bytes" % limit)
    try:
        out = bytes(_snappy().decompress_raw(data))
    except Exception as e:   # cramjam's DecompressionError
        raise Refused("malformed", "the message is not snappy data: %s" % e) from None
    if len(out) != declared:
        raise Refused("malformed", "the message is not whole snappy data")
    return out


def deflate(compress_type, data):
    if compress_type == SNAPPY:
        return bytes(_snappy().compress_raw(data))
    c = zlib.compressobj(wbits=_COMPRESSIONS[compress_type][1])
    return c.compress(data) + c.flush()


# -- RpcMeta -------------------------------------------------------------------------------------

def _string(number, s):
    data = s.encode("utf-8") if isinstance(s, str) else s
    return varint(number << 3 | 2) + varint(len(data)) + data


def _int(number, n):
    return varint(number << 3) + varint(n & 0xFFFFFFFFFFFFFFFF)


def names(service, method):
    """A request's ``service_name`` and ``method_name``, encoded once per operation."""
    return _string(1, service) + _string(2, method)


def request_meta(names_bytes, correlation_id, call_id=None, timeout_ms=0, user_fields=None, token=None):
    inner = names_bytes
    if call_id:
        inner += _string(7, call_id)
    if timeout_ms:
        inner += _int(8, timeout_ms)
    meta = varint(1 << 3 | 2) + varint(len(inner)) + inner + _int(4, correlation_id)
    if token is not None:
        meta += _string(7, token)
    return meta + _user_fields(user_fields)


def response_meta(correlation_id, error_code=0, error_text=None, user_fields=None, compress_type=0):
    inner = (_int(1, error_code) if error_code else b"") + (_string(2, error_text) if error_text is not None else b"")
    return (varint(2 << 3 | 2) + varint(len(inner)) + inner + (_int(3, compress_type) if compress_type else b"")
            + _int(4, correlation_id) + _user_fields(user_fields))


def _user_fields(fields):
    out = b""
    for k, v in (fields or {}).items():
        entry = _string(1, k) + _string(2, v)
        out += varint(9 << 3 | 2) + varint(len(entry)) + entry
    return out


def frame(meta, message=b""):
    return HEADER.pack(MAGIC, len(meta) + len(message), len(meta)) + meta + message


class Meta:
    """The fields of a read ``RpcMeta`` Switchboard uses; ``service`` is None in an answer."""

    __slots__ = ("service", "method", "call_id", "timeout_ms", "error_code", "error_text", "correlation_id",
                 "compress_type", "attachment_size", "token", "user_fields")

    def __init__(self):
        self.service = self.method = self.call_id = self.error_text = self.token = None
        self.timeout_ms = self.error_code = self.correlation_id = self.compress_type = self.attachment_size = 0
        self.user_fields = {}

    def user(self, key):
        return self.user_fields.get(key)


def _fields(data, start, end):
    """(field number, wire type, value) of each field in ``data[start:end]``; ValueError if broken."""
    i = start
    while i < end:
        tag, i = read_varint(data, i)
        number, kind = tag >> 3, tag & 7
        if kind == 0:
            value, i = read_varint(data, i)
        elif kind == 2:
            n, i = read_varint(data, i)
            if i + n > end:
                raise ValueError("a field runs past its message")
            value = (i, i + n)
            i += n
        elif kind == 1:
            value, i = None, i + 8
        elif kind == 5:
            value, i = None, i + 4
        else:
            raise ValueError("wire type %d" % kind)
        if i > end:
            raise ValueError("a field runs past its message")
        yield number, kind, value


def _text(data, span):
    return bytes(data[span[0]:span[1]]).decode("utf-8")


def read_meta(data):
    """The meta of ``data`` (bytes); ValueError when it is malformed."""
    m = Meta()
    request = False
    for number, kind, value in _fields(data, 0, len(data)):
        if number == 1 and kind == 2:
            request = True
            for n, k, v in _fields(data, *value):
                if n == 1 and k == 2:
                    m.service = _text(data, v)
                elif n == 2 and k == 2:
                    m.method = _text(data, v)
                elif n == 7 and k == 2:
                    m.call_id = _text(data, v)
                elif n == 8 and k == 0:
                    m.timeout_ms = v & 0xFFFFFFFF
        elif number == 2 and kind == 2:
            for n, k, v in _fields(data, *value):
                if n == 1 and k == 0:
                    m.error_code = v - (1 << 64) if v >= 1 << 63 else v
                elif n == 2 and k == 2:
                    m.error_text = _text(data, v)
        elif number == 3 and kind == 0:
            m.compress_type = value
        elif number == 4 and kind == 0:
            m.correlation_id = value
        elif number == 5 and kind == 0:
            m.attachment_size = value
        elif number == 7 and kind == 2:
            m.token = _text(data, value)
        elif number == 9 and kind == 2:
            key = val = ""
            for n, k, v in _fields(data, *value):
                if n == 1 and k == 2:
                    key = _text(data, v)
                elif n == 2 and k == 2:
                    val = _text(data, v)
            m.user_fields[key] = val
            if len(m.user_fields) > MAX_USER_FIELDS:
                raise ValueError("more than %d user fields" % MAX_USER_FIELDS)
    if request and (m.service is None or m.method is None):
        raise ValueError("a request needs its service_name and method_name")
    if not request:
        m.service = m.method = None
        m.token = None
    return m


# -- the same host --------------------------------------------------------------------------------

def _read(path):
    try:
        with open(path, encoding="ascii") as f:
            return f.read().strip()
    except (OSError, ValueError):
        return ""


def host_id():
    """This host as the Java server's endpoints name it: the first 16 hex digits of the SHA-256 of
    the machine id, the boot id and the kernel's host name (UnixSockets.hostId)."""
    host_name = _read("/proc/sys/kernel/hostname") or socket.gethostname()
    what = "%s\n%s\n%s" % (_read("/etc/machine-id"), _read("/proc/sys/kernel/random/boot_id"), host_name)
    return hashlib.sha256(what.encode("utf-8")).hexdigest()[:16]


HOST_ID = host_id()


def unix_enabled(protocol="tcp"):
    """Whether a client takes a server's Unix socket for ``protocol``: yes unless
    ``SWITCHBOARD_TCP_UNIX`` (or ``SWITCHBOARD_GRPC_UNIX``) is ``false``, as Java's
    ``-Dswitchboard.tcp.unix`` and ``-Dswitchboard.grpc.unix``."""
    return os.environ.get("SWITCHBOARD_%s_UNIX" % protocol.upper(), "true").strip().lower() != "false"


def unix_query(path):
    """The endpoint's query naming a server's Unix socket on this host, as UnixSockets.query
    writes it (the path's bytes outside ``A-Za-z0-9-._~/`` percent-encoded)."""
    return "unix=%s&host=%s" % (quote(path, safe="/-._~"), HOST_ID)


def ours(path, file=UNIX_FILE):
    """Whether ``path`` is a server's socket as the Java server makes it: a socket named ``file``
    (``tcp.sock``, ``grpc.sock``) in a directory owned by this OS user that only it may enter
    (0700), so that an entry cannot send this client to another socket on its host (a daemon's,
    another user's)."""
    try:
        return (os.path.basename(path) == file and stat.S_ISSOCK(os.lstat(path).st_mode)
                and private_directory(os.lstat(os.path.dirname(path))))
    except OSError:
        return False


def private_directory(st):
    """Whether ``st``, a directory's status read without following links, is that of a directory as
    a server makes one for its socket: this OS user's, and only it may enter (0700)."""
    return stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.getuid()


def same_host_socket(address, protocol="tcp", file=UNIX_FILE):
    """The Unix socket a client on this host reaches the endpoint's server at, or None (then TCP):
    the endpoint names a socket and this host, and the socket is the server's (``ours``)."""
    query = urlparse(address).query
    if not query or not unix_enabled(protocol) or not hasattr(socket, "AF_UNIX"):
        return None
    params = dict(parse_qsl(query))
    path, host = params.get("unix"), params.get("host")
    if not path or host != HOST_ID or not os.path.isabs(path) or len(path.encode("utf-8")) > 107:
        return None
    return path if ours(path, file) else None


def connect_probe(path):
    """The errno of one connect to the Unix socket at ``path``, closed at once (0: accepted). It
    does not block: a Unix socket answers at once, a full backlog with EAGAIN; a socket file whose
    server is gone refuses (ECONNREFUSED)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.setblocking(False)
        return probe.connect_ex(path)
    except OSError as e:   # a path no socket address holds, say
        return e.errno or -1
    finally:
        probe.close()


def listens(path):
    """Whether a server listens on the Unix socket at ``path``: it accepted, or its backlog is full."""
    return connect_probe(path) in (0, errno.EAGAIN, errno.EINPROGRESS)


# -- the connection -------------------------------------------------------------------------------

class _Call:
    """One call on a connection: settled with the answer's meta and data, or an error. An async
    call has ``settled``, called once with the call when it is, and a deadline."""

    __slots__ = ("id", "meta", "data", "error", "done", "settled", "deadline")

    def __init__(self, correlation_id, settled=None, deadline=None):
        self.id, self.meta, self.data, self.error, self.done = correlation_id, None, None, None, False
        self.settled, self.deadline = settled, deadline


# The alerts of a refused TLS handshake (RFC 8446 section 6.2), as OpenSSL names them, in lower case:
# as the Java clients' TlsRefusals, a call whose connection ended in one never reached an operation.
_HANDSHAKE_ALERTS = ("bad_certificate", "certificate_required", "unknown_ca", "certificate_unknown",
                     "certificate_revoked", "certificate_expired", "unsupported_certificate", "handshake_failure",
                     "access_denied")


def refused_handshake(error):
    """Whether ``error`` is the server refusing this client's TLS handshake (under TLS 1.3 a client
    learns of it only when it reads, after it sent its request, which the server never read)."""
    if isinstance(error, ssl.SSLCertVerificationError):
        return True   # this client refused the server's certificate: nothing was sent
    text = str(error).lower()
    return isinstance(error, ssl.SSLError) and "alert" in text and any(a in text for a in _HANDSHAKE_ALERTS)


def send_all(sock, data, seconds, stalled_limit):
    """Writes ``data`` whole on a blocking socket, waiting for room at most ``seconds``: over the
    whole write, or (``stalled_limit``) since the last bytes it took, so that a server's answer to a
    slow but reading caller goes on. Raises ``socket.timeout`` past it. The socket stays blocking:
    with a Python timeout on it, every read would poll again after the caller's own poll."""
    view = memoryview(data)
    deadline = time.monotonic() + seconds
    poller = None
    while view:
        try:
            view = view[sock.send(view, socket.MSG_DONTWAIT):]
            if stalled_limit:
                deadline = time.monotonic() + seconds
            continue
        except BlockingIOError:
            pass
        if poller is None:
            poller = select.poll()
            poller.register(sock, select.POLLOUT)
        left = deadline - time.monotonic()
        if left <= 0 or not poller.poll(left * 1000):
            raise socket.timeout("no room to write for %.3g s" % seconds)


class PlainWire:
    """A connection's bytes as they are on the socket; ``stalled_limit``: see ``send_all``."""

    def __init__(self, sock, stalled_limit=False):
        self.sock, self.stalled_limit = sock, stalled_limit
        sock.settimeout(None)   # blocking: reads come after a poll, writes wait in send_all

    def recv(self, wanted=65536):
        """What arrived (after a poll said something did), up to ``wanted`` bytes or 64 KiB if
        more; None at the end of the stream."""
        return self.sock.recv(max(65536, wanted)) or None

    def sendall(self, data, seconds):
        send_all(self.sock, data, seconds, self.stalled_limit)


class TlsWire:
    """A TLS connection over memory buffers, a client's or a server's: bytes read from the socket
    are handed to OpenSSL and the application bytes they complete taken out; what OpenSSL writes is
    sent in the order it was made. One lock guards the TLS object and its buffers, another the
    socket's writes (taken first), so the reading thread and the writing threads never use the TLS
    object at once (OpenSSL does not allow it: an ``ssl.SSLSocket`` read on one thread and written
    on another can corrupt its state), and a read never blocks on a record half arrived: the
    caller's poll keeps its deadlines."""

    def __init__(self, sock, context, server_hostname=None, write_seconds=30.0):
        """A server's side without ``server_hostname`` (its writes bounded by how long they stall,
        ``send_all``), else a client's, checking that name. ``write_seconds`` bounds the writes
        OpenSSL makes of its own (an alert, a key update's answer)."""
        self.sock = sock
        sock.settimeout(None)   # blocking: reads come after a poll, writes wait in send_all
        self.stalled_limit = server_hostname is None
        self.write_seconds = write_seconds
        self._in, self._out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._in, self._out, server_side=server_hostname is None,
                                     server_hostname=server_hostname)
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._ended = False

    def handshake(self, deadline):
        """Runs the handshake and gives the application bytes that came with its last flight (a
        TLS 1.3 client may send its first frame with its Finished); raises OSError (an
        ``ssl.SSLError`` among them) when it fails, the peer closes, or it is not done by
        ``deadline`` (monotonic)."""
        poll = select.poll()
        poll.register(self.sock, select.POLLIN)
        while True:
            with self._send_lock:
                with self._lock:
                    try:
                        self._tls.do_handshake()
                        done = True
                    except ssl.SSLWantReadError:
                        done = False
                    except ssl.SSLError:
                        alert = self._out.read()   # the alert tells the peer why, best effort
                        if alert:
                            try:
                                send_all(self.sock, alert, self.write_seconds, self.stalled_limit)
                            except OSError:
                                pass
                        raise
                    out = self._out.read()
                if out:
                    send_all(self.sock, out, max(deadline - time.monotonic(), 0.001), False)
            if done:
                return self._read_all()[0]
            left = deadline - time.monotonic()
            if left <= 0 or not poll.poll(left * 1000):
                raise TimeoutError("the TLS handshake did not end in time")
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("the peer closed the connection during the TLS handshake")
            with self._lock:
                self._in.write(data)

    def peer_certificate(self):
        """The peer's certificate (DER), verified by the handshake; None if it sent none."""
        return self._tls.getpeercert(binary_form=True)

    @property
    def ssl_object(self):
        """The connection's ``ssl.SSLObject``, for what else its handshake showed (the peer's chain)."""
        return self._tls

    def recv(self, wanted=65536):
        """The application bytes that what arrived completes (b"" while a record is half here, or
        held only a handshake message such as a TLS 1.3 session ticket); None at the end of the
        stream (the socket's, or the peer's close_notify). Reads up to ``wanted`` bytes of records,
        or 64 KiB if more."""
        if self._ended:
            return None
        data = self.sock.recv(max(65536, wanted))
        with self._lock:
            if data:
                self._in.write(data)
            else:
                self._in.write_eof()
        got, ended = self._read_all()
        self._ended = ended or not data
        if got:
            return got   # what came before the end is read; the next call says it ended
        return None if self._ended else b""

    def _read_all(self):
        """Every application byte the records held complete make, and whether the stream ended."""
        chunks = []
        ended = False
        with self._lock:
            try:
                while True:
                    chunk = self._tls.read(65536)
                    if not chunk:
                        ended = True
                        break
                    chunks.append(chunk)
            except ssl.SSLWantReadError:
                pass
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                ended = True
            made = self._out.pending   # what reading made OpenSSL write (a key update's answer, say)
        if made:
            with self._send_lock:
                with self._lock:
                    out = self._out.read()
                send_all(self.sock, out, self.write_seconds, self.stalled_limit)
        return b"".join(chunks), ended

    def sendall(self, data, seconds):
        with self._send_lock:
            with self._lock:
                self._tls.write(data)
                out = self._out.read()
            send_all(self.sock, out, seconds, self.stalled_limit)


class Connection:
    """One socket to a server, shared by every call to it. Frames are written whole under a lock;
    the first caller waiting for an answer reads the socket (the leader) until its own answer is in,
    settling the others' on the way; when it leaves, a waiting caller takes over. Async calls wait
    on no thread: while any is open, one reader thread of the connection's is the leader when no
    blocking caller is, and settles them by correlation id (and at their deadlines)."""

    def __init__(self, sock, via, max_frame_bytes=MAX_FRAME_BYTES, wire=None, early=b""):
        """``wire``: how bytes cross ``sock`` (a ``TlsWire`` after its handshake; by default as they
        are); ``early``: application bytes its handshake already read."""
        self.sock, self.via, self.max_frame_bytes = sock, via, max_frame_bytes
        self.wire = wire or PlainWire(sock)
        self.poll = select.poll()
        self.poll.register(sock, select.POLLIN)
        self.lock = threading.Lock()
        self.write_lock = threading.Lock()
        self.answered = threading.Condition(self.lock)
        self.calls = {}
        self.next_id = 0
        self.reading = False
        self.async_open = 0          # async calls not yet settled
        self.reader = None           # the reader thread while async calls are open
        self.closed = None
        self.handshake_refused = self.answered_once = False
        self.buffer = bytearray(early)
        self.last_used = time.monotonic()

    def ended_while_idle(self):
        """Whether the server ended this connection while no call was on it (an idle limit under the
        client's ``IDLE_REPLACE_SECONDS``, a restart): what is there is read without waiting, and an
        end of stream or an error means it did. A TLS handshake message (a session ticket) is taken;
        application bytes are kept for the next reader."""
        with self.lock:
            if self.calls or self.reading or self.closed is not None:
                return False
            try:
                if not self.poll.poll(0):
                    return False
                chunk = self.wire.recv()
            except OSError:
                return True
            if chunk is None:
                return True
            self.buffer += chunk
            return False

    def open(self, settled=None, deadline=None):
        """A new call; with ``settled``, an async one, which ``start_reader`` then has read."""
        with self.lock:
            if self.closed is not None:
                raise TransportError("tcp", TransportError.NOT_DELIVERED, "connection closed: %s" % self.closed)
            self.next_id += 1
            call = self.calls[self.next_id] = _Call(self.next_id, settled, deadline)
            if settled is not None:
                self.async_open += 1
            return call

    def start_reader(self, expired):
        """Makes sure the reader thread runs while async calls are open; ``expired(call)`` is told
        of each async call whose deadline passed (forgotten already)."""
        with self.lock:
            if self.reader is not None or not self.async_open:
                return
            self.reader = threading.Thread(target=self._read_for_async, args=(expired,), daemon=True,
                                           name="switchboard-tcp-reader")
            self.reader.start()

    def _read_for_async(self, expired):
        while True:
            with self.lock:
                if not self.async_open or self.closed is not None:
                    self.reader = None
                    self.answered.notify_all()
                    return
                now = time.monotonic()
                nearest = min((c.deadline for c in self.calls.values() if c.settled is not None), default=now + 1)
                lead = not self.reading
                if lead:
                    self.reading = True
                else:   # a blocking caller leads, settling these too; wake at the nearest deadline
                    self.answered.wait(max(0.0, min(1.0, nearest - now)))
            if lead:
                try:
                    self._read_one(max(0.001, min(1.0, nearest - time.monotonic())))
                except (TimeoutError, _Closed):
                    pass
                finally:
                    with self.lock:
                        self.reading = False
                        self.answered.notify_all()
            self._expire(expired)

    def _expire(self, expired):
        now = time.monotonic()
        with self.lock:
            late = [c for c in self.calls.values() if c.settled is not None and c.deadline <= now]
            for c in late:
                del self.calls[c.id]
                self.async_open -= 1
        for c in late:
            expired(c)

    def _settle(self, call):
        """Tells an async call's owner it is settled (outside the lock)."""
        if call.settled is not None:
            call.settled(call)

    def send(self, data, timeout):
        """Writes a frame within ``timeout`` seconds; a failure means the server did not get it
        whole: not delivered. A server that takes none of it in time (it stopped reading) fails
        the call then, not never; the connection, half a frame written, is closed."""
        self.last_used = time.monotonic()
        with self.write_lock:
            try:
                self.wire.sendall(data, timeout)
            except OSError as e:
                why = "the server took no bytes of it for %.3g s" % timeout if isinstance(e, socket.timeout) else e
                self.close("write failed: %s" % why)
                raise TransportError("tcp", TransportError.NOT_DELIVERED, "the request could not be written: %s" % why) \
                    from None

    def forget(self, call):
        with self.lock:
            gone = self.calls.pop(call.id, None) is not None
            if gone and call.settled is not None:
                self.async_open -= 1
            return gone

    def await_answer(self, call, deadline):
        """Waits for ``call``'s answer, reading the socket itself when nobody else does. Raises
        TimeoutError at the deadline; a closed connection settles the call with its error."""
        with self.lock:
            while not call.done:
                if not self.reading:
                    self.reading = True
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError()
                self.answered.wait(remaining)
            else:
                return
        try:
            while True:
                with self.lock:
                    if call.done:
                        return
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError()
                self._read_one(remaining)
        finally:
            with self.lock:
                self.reading = False
                self.answered.notify_all()   # a waiting caller reads next

    def _read_one(self, timeout):
        header = self._fill(HEADER.size, timeout)
        magic, body, meta_size = HEADER.unpack(bytes(header))
        if magic != MAGIC or meta_size > body or meta_size > MAX_META_BYTES:
            self.close("the server sent bytes that are not a baidu_std frame")
            return
        if body - meta_size > self.max_frame_bytes + MAX_META_BYTES:
            self.close("an answer of %d bytes, over the frame limit" % body)
            return
        data = self._fill(HEADER.size + body, timeout)
        del self.buffer[:HEADER.size + body]
        try:
            meta = read_meta(memoryview(data)[HEADER.size:HEADER.size + meta_size])
        except ValueError as e:
            self.close("an answer that cannot be read: %s" % e)
            return
        self.answered_once = True   # a failure after an answer cannot be the handshake's refusal
        with self.lock:
            call = self.calls.pop(meta.correlation_id, None)
            if call is not None:
                call.meta, call.data, call.done = meta, data[HEADER.size + meta_size:], True
                if call.settled is not None:
                    self.async_open -= 1
                self.answered.notify_all()
        if call is not None:
            self._settle(call)

    def _fill(self, n, timeout):
        """The buffer once it holds ``n`` bytes (a copy of them); what was read stays buffered
        across a timeout, so the next reader continues the frame."""
        deadline = time.monotonic() + timeout
        while len(self.buffer) < n:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError()
            # the socket stays blocking (writers share it); the wait for an answer is the poll's
            if not self.poll.poll(remaining * 1000):
                raise TimeoutError()
            try:
                chunk = self.wire.recv(n - len(self.buffer))
            except OSError as e:
                if not self.answered_once and refused_handshake(e):
                    self.close("the server refused this client's TLS handshake: %s" % e, handshake_refused=True)
                else:
                    self.close("read failed: %s" % e)
                raise _Closed() from None
            if chunk is None:
                self.close("the server closed the connection")
                raise _Closed()
            self.buffer += chunk   # nothing, when what came completes no TLS record
        return bytes(self.buffer[:n])

    def close(self, why="closed", handshake_refused=False):
        """Ends the connection; its calls under way fail as may-have-run, or as not delivered if the
        server refused the TLS handshake (``handshake_refused``)."""
        with self.lock:
            if self.closed is None:
                self.closed = why
                self.handshake_refused = handshake_refused
            pending, self.calls = list(self.calls.values()), {}
            for call in pending:
                call.error, call.done = why, True
            self.async_open = 0
            self.answered.notify_all()
        try:
            self.sock.close()
        except OSError:
            pass
        for call in pending:
            self._settle(call)


class _Closed(Exception):
    pass


class TcpTransport:
    """``call(operation, request message, call id, timeout) -> (response, raw bytes)`` over tcp, or
    over the Unix socket on the server's host. ``via`` says which a call took (``tcp`` or ``unix``)."""

    protocol = "tcp"

    def __init__(self, iface, address, tls=None, token=None, connect_timeout=5.0, unix=True):
        url = urlparse(address)
        if url.scheme not in ("tcp", "tcps"):
            raise ValueError("not a tcp:// or tcps:// address: %s" % address)
        if url.scheme == "tcps" and tls is None:
            raise ValueError("%s needs TLS: connect(..., tls=switchboard.Tls(...))" % address)
        self.iface, self.address, self.token, self.tls = iface, address, token, tls
        self.host, self.port, self.secure = url.hostname, url.port, url.scheme == "tcps"
        self.unix = None if self.secure or not unix else same_host_socket(address)
        self.connect_timeout = connect_timeout
        self._names = {}
        self._connection = None
        self._lock = threading.Lock()

    @property
    def via(self):
        c = self._connection
        return c.via if c is not None else ("unix" if self.unix else "tcp")

    def connection(self):
        c = self._connection
        if c is not None and c.closed is None \
                and time.monotonic() - c.last_used < min(IDLE_LOOK_SECONDS, IDLE_REPLACE_SECONDS):
            return c
        with self._lock:
            c = self._connection
            if c is not None and c.closed is None and time.monotonic() - c.last_used >= IDLE_REPLACE_SECONDS:
                with c.lock:
                    idle = not c.calls
                if idle:   # the server may be closing it at its idle limit: a fresh one, not a write into it
                    c.close("replaced after %d s unused" % IDLE_REPLACE_SECONDS)
            elif c is not None and c.closed is None and c.ended_while_idle():
                c.close("ended by the server while unused")   # a fresh one: a write into it would be lost
            if c is None or c.closed is not None:
                c = self._connection = self._connect()
            return c

    def _connect(self):
        if self.unix is not None:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.settimeout(self.connect_timeout)
                s.connect(self.unix)
                return Connection(s, "unix")
            except OSError:   # a stale file of a server gone: TCP, as the Java client does
                s.close()
                self.unix = None
        try:
            s = socket.create_connection((self.host, self.port), timeout=self.connect_timeout)
        except OSError as e:
            raise TransportError("tcp", TransportError.NOT_DELIVERED, "cannot connect to %s: %s" % (self.address, e)) \
                from None
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.secure:
            try:
                # the handshake waits in its own poll, until the connect timeout
                wire = TlsWire(s, self.tls.client_ssl_context(), server_hostname=self.host,
                               write_seconds=self.connect_timeout)
                early = wire.handshake(time.monotonic() + self.connect_timeout)
            except (OSError, ValueError) as e:
                s.close()
                raise TransportError("tcp", TransportError.NOT_DELIVERED, "TLS handshake with %s failed: %s"
                                     % (self.address, e)) from None
            return Connection(s, "tcp", wire=wire, early=early)
        return Connection(s, "tcp")

    def _op_names(self, op):
        n = self._names.get(op.name)
        if n is None:
            service, method = op.path[1:].rsplit("/", 1)
            n = self._names[op.name] = names(service, method)
        return n

    def _message(self, op, request):
        message = request.SerializeToString()
        if len(message) > MAX_FRAME_BYTES:
            raise Refused("size-limit", "%s: the request of %d bytes is over the tcp frame limit of %d bytes; nothing "
                          "was sent (larger messages go over grpc)" % (op.name, len(message), MAX_FRAME_BYTES))
        return message

    def _send(self, connection, op, request, call, call_id, timeout, message, trace):
        try:
            token = None if self.token is None else self._token(connection)
            meta = request_meta(self._op_names(op), call.id, call_id, max(1, min(int(timeout * 1000), 2 ** 31 - 1)),
                                None if trace is None else dict(trace.items()), token)
            connection.send(frame(meta, message), timeout)
        except TransportError:
            connection.forget(call)
            raise

    def _late(self, op, timeout):
        return TransportError(self.protocol, TransportError.MAY_HAVE_RUN, "%s at %s exceeded its deadline: no "
                              "answer within %d ms" % (op.name, self.address, timeout * 1000))

    def call(self, op, request, call_id, timeout, on_cancel=None, trace=None):
        if on_cancel is not None:   # cancellable: the async form, whose cancel sends the cancel frame
            future = self.call_async(op, request, call_id, timeout, trace)
            on_cancel(future.cancel)
            return future.result()
        message = self._message(op, request)
        timeout = 60.0 if timeout is None else timeout
        deadline = time.monotonic() + timeout
        connection = self.connection()
        call = connection.open()
        self._send(connection, op, request, call, call_id, timeout, message, trace)
        try:
            connection.await_answer(call, deadline)
        except TimeoutError:
            self._cancel(connection, call, op)
            raise self._late(op, timeout) from None
        except _Closed:
            pass
        except BaseException:   # interrupted (KeyboardInterrupt): the server stops the call too
            self._cancel(connection, call, op)
            raise
        return self._outcome(op, connection, call)

    def call_async(self, op, request, call_id, timeout, trace=None):
        """Starts the call and returns a concurrent Future of ``(response, raw bytes)``, settled by
        the connection's reader (or a blocking caller reading for all): no thread waits for it. At
        its deadline a cancel frame is sent and it fails as may-have-run, as a blocking call; a
        future cancelled by its caller sends the cancel frame too, and its answer, if it still
        comes, is dropped."""
        message = self._message(op, request)
        timeout = 60.0 if timeout is None else timeout
        connection = self.connection()
        future = concurrent.futures.Future()

        def settle(outcome):
            try:
                outcome()
            except concurrent.futures.InvalidStateError:
                pass   # cancelled by its caller meanwhile: nobody waits for the outcome

        def settled(call):
            def outcome():
                try:
                    result = self._outcome(op, connection, call)
                except BaseException as e:   # a declared fault (FaultMessage) or a mapped error
                    future.set_exception(e)
                    return
                future.set_result(result)
            settle(outcome)

        def expired(call):
            self._send_cancel(connection, call, op)
            settle(lambda: future.set_exception(self._late(op, timeout)))

        call = connection.open(settled, time.monotonic() + timeout)
        self._send(connection, op, request, call, call_id, timeout, message, trace)
        future.add_done_callback(lambda f: self._cancel(connection, call, op) if f.cancelled() else None)
        connection.start_reader(expired)
        return future

    def _outcome(self, op, connection, call):
        if call.meta is None:
            delivery = TransportError.NOT_DELIVERED if connection.handshake_refused else TransportError.MAY_HAVE_RUN
            raise TransportError(self.protocol, delivery, "%s at %s: %s before the answer" % (
                op.name, self.address, call.error or connection.closed or "connection closed"))
        return self.answer(op, call.meta, call.data)

    def _token(self, connection):
        """The token for ``authentication_data``: over TLS, the Unix socket (the kernel's, this
        host's) or to a loopback address only, as for the other protocols."""
        from ._token import BearerToken, PlainTextToken

        if not (self.secure or connection.via == "unix" or BearerToken.may_travel_to(
                self.address.replace("tcp://", "grpc://", 1))):
            raise TransportError(self.protocol, TransportError.NOT_DELIVERED, str(PlainTextToken(self.address)))
        return self.token.value()

    def _cancel(self, connection, call, op):
        if connection.forget(call):
            self._send_cancel(connection, call, op)

    def _send_cancel(self, connection, call, op):
        if connection.closed is None:
            try:
                with connection.write_lock:
                    connection.wire.sendall(frame(request_meta(self._op_names(op), call.id, user_fields={CANCEL: "1"})),
                                            CANCEL_WRITE_SECONDS)
            except OSError:
                connection.close("cancel could not be written")

    def answer(self, op, meta, data):
        """The answer's frame as the call's outcome, the errors mapped as the Java client's (TcpErrors)."""
        from ._transport import FaultMessage

        code = meta.error_code
        if code == 0:
            if op.one_way:
                return op.response(), None
            try:
                return op.response.FromString(data), data
            except Exception as e:
                raise TransportError(self.protocol, TransportError.MAY_HAVE_RUN, "unreadable answer to %s from %s: %s"
                                     % (op.name, self.address, e)) from None
        if code == DECLARED_FAULT and op.fault is not None:
            raise FaultMessage(op.fault.FromString(data), meta.error_text or "")
        text = meta.error_text or "error %d" % code
        refused = meta.user(REFUSED)
        if code == AUTH:
            raise PermissionDenied(text, PermissionDenied.UNAUTHENTICATED if refused == PermissionDenied.UNAUTHENTICATED
                                   else PermissionDenied.DENIED, meta.user(DENIED_PATH) or op.path)
        if refused is not None:
            raise Refused(refused, text, meta.user(REFUSED_FIELD))
        what = "%s at %s" % (op.name, self.address)
        if code == BAD_REQUEST:
            raise Refused("malformed", text)
        if code == LIMIT:
            raise Refused("size-limit", text)
        if code == INTERNAL:
            raise RemoteError(text, meta.user(ERROR_TYPE))
        if code == DRAINING:
            raise Draining(self.protocol, "%s: %s" % (what, text))
        if code in (NO_SERVICE, NO_METHOD, OVERCROWDED):
            raise TransportError(self.protocol, TransportError.NOT_DELIVERED, "%s: %s" % (what, text))
        if code in (ANSWER_TOO_LARGE, TIMED_OUT):
            raise TransportError(self.protocol, TransportError.MAY_HAVE_RUN, "%s: %s" % (what, text))
        raise RemoteError("%s failed with error %d: %s" % (what, code, text))

    def close(self):
        c = self._connection
        if c is not None:
            c.close("transport closed")
