"""The two protocols a Python caller speaks, each as ``call(operation, request message, call id,
timeout) -> response message``, raising the errors of ``switchboard.errors``: gRPC (grpcio, generic
methods on the .proto's paths, streamed messages as parts whose protobuf merge is the message) and
SOAP (requests and lxml, in the wire form of ``_soap``)."""

import threading
from urllib.parse import urlparse

from google.protobuf.descriptor import FieldDescriptor as F

from . import _address, _soap, _tcp
from ._wire import read_varint, varint
from ._token import BearerToken, PlainTextToken, requests_auth
from .errors import Draining, PermissionDenied, Refused, RemoteError, TransportError

CANCEL_HEADER = "Switchboard-Cancel"   # a SOAP cancel message's header, as SoapCalls names it
RUNNING_ONLY_HEADER = "Switchboard-Cancel-Running-Only"   # with it, a cancel that finds no running call is not kept
BUSY_HEADER = "Switchboard-Busy"   # on a 503: the server's connection limits refused the request, which did not run
DRAINING_REASON = "draining"   # a SOAP refusal's reason, as the Java servers send it (DrainingException.REASON)
GRPCIO_CONCURRENT_CALL_LIMIT = "Concurrent RPC limit exceeded!"   # grpcio's server over maximum_concurrent_rpcs
PART_BYTES = 1 << 20
FIXED_WIDTH = {F.TYPE_DOUBLE: 8, F.TYPE_FLOAT: 4, F.TYPE_SFIXED32: 4, F.TYPE_SFIXED64: 8}
MAX_MESSAGE = 256 << 20
DETAILS_KEY = "grpc-status-details-bin"


def parts(message, part_bytes=PART_BYTES):
    """The message as serialized parts whose protobuf merge is the message: the singular fields
    first, then each repeated field cut into slices (a packed array's slice is a packed field of
    its own, which protobuf appends on merge). Packed fixed-width numbers are cut from the bytes of
    one serialization, never turned into Python numbers."""
    if message.ByteSize() <= part_bytes:
        return [message.SerializeToString()]
    first = type(message)()
    first.CopyFrom(message)
    repeated = [f for f in message.DESCRIPTOR.fields if f.is_repeated]
    for f in repeated:
        first.ClearField(f.name)
    head = first.SerializeToString()
    out = [head] if head else []   # no singular field set: the repeated fields' parts alone
    for f in repeated:
        values = getattr(message, f.name)
        n = len(values)
        if not n:
            continue
        width = FIXED_WIDTH.get(f.type) if f.message_type is None else None
        if width:
            only = type(message)()
            getattr(only, f.name).MergeFrom(values)
            data = only.SerializeToString()
            _, i = read_varint(data, 0)
            length, i = read_varint(data, i)
            raw, tag = memoryview(data)[i:i + length], varint(f.number << 3 | 2)
            step = max(width, part_bytes // width * width)
            out.extend(tag + varint(len(raw[j:j + step])) + raw[j:j + step].tobytes() for j in range(0, length, step))
            continue
        whole = type(message)()
        getattr(whole, f.name).MergeFrom(values)
        step = max(1, int(n * part_bytes / max(1, whole.ByteSize())))
        for i in range(0, n, step):
            part = type(message)()
            getattr(part, f.name).MergeFrom(values[i:i + step])
            out.append(part.SerializeToString())
    return out


class GrpcTransport:
    """gRPC calls to one endpoint. On the server's host, a plain-text endpoint that names the
    server's Unix socket (``?unix=PATH&host=ID``, a Java server's) is called over that socket when
    it is this user's and answers, else over TCP, as the Java client does; ``via`` says which
    (``unix`` or ``tcp``)."""

    protocol = "grpc"

    def __init__(self, iface, address, tls=None, token=None, unix=True):
        import grpc

        self.iface, self.address, self.token = iface, address, token
        url = urlparse(address)
        if url.scheme not in ("grpc", "grpcs"):
            raise ValueError("not a grpc:// or grpcs:// address: %s" % address)
        options = [("grpc.max_receive_message_length", MAX_MESSAGE), ("grpc.max_send_message_length", MAX_MESSAGE)]
        target = _address.host_port(url.hostname, url.port)
        socket_path = None if url.scheme == "grpcs" or not unix else _tcp.same_host_socket(
            address, "grpc", _tcp.GRPC_UNIX_FILE)
        # one connect first: a socket file whose server is gone would fail every call, where TCP may answer
        self.via = "unix" if socket_path is not None and _tcp.listens(socket_path) else "tcp"
        if self.via == "unix":
            target = "unix:" + socket_path
        if url.scheme == "grpcs" and tls is None:
            raise ValueError("%s needs TLS: connect(..., tls=switchboard.Tls(...))" % address)
        self._tls = tls if url.scheme == "grpcs" else None
        self._target, self._options = target, options
        self._generation = None
        self.channel = self._new_channel()
        self._retired = []   # channels of stores read before: calls under way end there
        self._methods = {}
        self._lock = threading.Lock()

    def _new_channel(self):
        import grpc

        if self._tls is None:
            return grpc.insecure_channel(self._target, options=self._options)
        # the generation first: stores read again meanwhile make the next call renew once more, never miss it
        self._generation = self._tls.look()
        return grpc.secure_channel(self._target, self._tls.grpc_credentials(), options=self._options)

    def method(self, op):
        if self._tls is not None and self._tls.look() != self._generation:
            self._renew()
        m = self._methods.get(op.name)
        if m is None:
            with self._lock:
                if op.streams:
                    m = self.channel.stream_stream(op.path, request_serializer=None, response_deserializer=None)
                else:
                    m = self.channel.unary_unary(op.path, request_serializer=None, response_deserializer=None)
                self._methods[op.name] = m
        return m

    @staticmethod
    def _metadata(call_id, trace):
        """The call id and the trace context (W3C names, as the Java transport sends them)."""
        metadata = [("sb-call-id", call_id)] if call_id else []
        if trace is not None:
            metadata.extend(trace.items())
        return metadata

    def call(self, op, request, call_id, timeout, on_cancel=None, trace=None):
        """The call, blocking; ``on_cancel`` (if given) is handed the gRPC call's cancel once it is under way."""
        import grpc

        metadata = self._metadata(call_id, trace)
        if self.token is not None:
            metadata.append(("authorization", _token_header(self.token, self.address, self.protocol,
                                                            self.via == "unix")))
        method = self.method(op)
        try:
            if op.streams:
                sent = parts(request)
                metadata.append(("sb-size", str(request.ByteSize())))
                received = bytearray()   # the parts in one buffer, which numpy arrays may then share
                responses = method(iter(sent), timeout=timeout, metadata=metadata)
                if on_cancel is not None:
                    on_cancel(responses.cancel)
                for part in responses:
                    received += part
            elif on_cancel is not None:
                call = method.future(request.SerializeToString(), timeout=timeout, metadata=metadata)
                on_cancel(call.cancel)
                received = call.result()
            else:
                received = method(request.SerializeToString(), timeout=timeout, metadata=metadata)
        except grpc.RpcError as e:
            raise self.error(op, e) from None
        return op.response.FromString(received), received

    def call_async(self, op, request, call_id, timeout, trace=None):
        """A unary call started with grpcio's ``future()``: a concurrent Future of ``(response, raw
        bytes)`` that grpcio's threads settle, no thread of ours waiting; None for a streamed method
        (its parts are read by a thread: the caller runs it as a blocking call)."""
        import concurrent.futures
        import grpc

        if op.streams:
            return None
        metadata = self._metadata(call_id, trace)
        if self.token is not None:
            metadata.append(("authorization", _token_header(self.token, self.address, self.protocol,
                                                            self.via == "unix")))
        future = concurrent.futures.Future()

        def done(call):
            if future.cancelled():
                return   # its caller cancelled it, and with it the call on the wire
            try:
                received = call.result()
                future.set_result((op.response.FromString(received), received))
            except grpc.RpcError as e:
                future.set_exception(self.error(op, e))
            except BaseException as e:
                future.set_exception(e)

        call = self.method(op).future(request.SerializeToString(), timeout=timeout, metadata=metadata)
        call.add_done_callback(done)
        # a future its caller cancels cancels the gRPC call: the server's operation is told (isCancelled)
        future.add_done_callback(lambda f: call.cancel() if f.cancelled() else None)
        return future

    def error(self, op, e):
        import grpc

        code = e.code() if hasattr(e, "code") else grpc.StatusCode.UNKNOWN
        details = (e.details() if hasattr(e, "details") else str(e)) or ""
        trailers = dict((k, v) for k, v in (e.trailing_metadata() or ())) if hasattr(e, "trailing_metadata") else {}
        if code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED):
            return PermissionDenied(details, PermissionDenied.DENIED if code == grpc.StatusCode.PERMISSION_DENIED
                                    else PermissionDenied.UNAUTHENTICATED, op.path)
        if code == grpc.StatusCode.FAILED_PRECONDITION and DETAILS_KEY in trailers and op.fault is not None:
            status = self.iface.status.FromString(trailers[DETAILS_KEY])
            for detail in status.details:
                if detail.type_url.endswith("/" + op.fault.DESCRIPTOR.full_name):
                    return FaultMessage(op.fault.FromString(detail.value), status.message)
        if "sb-refused" in trailers:
            return Refused(trailers["sb-refused"], details, trailers.get("sb-refused-field"))
        if "sb-draining" in trailers:
            return Draining(self.protocol, "%s at %s: %s" % (op.name, self.address, details))
        if "sb-busy" in trailers or (code == grpc.StatusCode.RESOURCE_EXHAUSTED and details == GRPCIO_CONCURRENT_CALL_LIMIT):
            # refused before it ran: a Java server's busy answer, or grpcio's over maximum_concurrent_rpcs
            return TransportError(self.protocol, TransportError.NOT_DELIVERED, "%s at %s: server busy: %s"
                                  % (op.name, self.address, details))
        if code == grpc.StatusCode.UNKNOWN or code == grpc.StatusCode.UNIMPLEMENTED:
            if code == grpc.StatusCode.UNIMPLEMENTED or "sb-error-type" in trailers:
                return RemoteError(details, trailers.get("sb-error-type"))
        if code == grpc.StatusCode.UNAVAILABLE and _never_connected(details):
            return TransportError(self.protocol, TransportError.NOT_DELIVERED, details)
        if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED):
            return Refused("malformed" if code == grpc.StatusCode.INVALID_ARGUMENT else "size-limit", details)
        return TransportError(self.protocol, TransportError.MAY_HAVE_RUN, "%s: %s" % (code.name, details))

    def _renew(self):
        """A channel with the stores read again (a renewed certificate, a replaced trust store) for
        the calls from now on; the last one stays open for those under way, idle once they end
        (grpcio drops an idle connection), and closes with the transport."""
        with self._lock:
            if self._tls.generation == self._generation:
                return
            self._retired.append(self.channel)
            self.channel, self._methods = self._new_channel(), {}

    def close(self):
        for channel in [self.channel] + self._retired:
            channel.close()


def _root_cause(error):
    """The first error of the chain an HTTP client wraps (requests, urllib3), looked through a few deep."""
    seen = 0
    while seen < 8:
        inner = getattr(error, "reason", None)   # urllib3's, where it is an error (elsewhere a string)
        if not isinstance(inner, BaseException):
            inner = error.__cause__ or error.__context__
        if inner is None and error.args and isinstance(error.args[0], BaseException):
            inner = error.args[0]
        if inner is None or inner is error:
            return error
        error, seen = inner, seen + 1
    return error


def _never_connected(details):
    text = details.lower()
    return any(s in text for s in ("connection refused", "failed to connect", "connect failed", "no route to host",
                                   "name resolution", "dns resolution", "unreachable", "connection reset by peer"
                                   " (before the request"))


class FaultMessage(Exception):
    """A declared fault as its message, before it becomes the component's typed exception."""

    def __init__(self, message, text):
        super().__init__(text)
        self.message, self.text = message, text


class SoapTransport:
    protocol = "soap"

    def __init__(self, iface, codec, address, tls=None, timeout=None, token=None):
        import requests

        self.iface, self.codec, self.address, self.token = iface, codec, address, token
        self.tls = tls
        self.session = requests.Session()
        if tls is not None:
            tls.configure(self.session)
        elif address.startswith("https://"):
            raise ValueError("%s needs TLS: connect(..., tls=switchboard.Tls(...))" % address)

    def call(self, op, request, call_id, timeout, on_cancel=None, trace=None):
        """The call, blocking; ``on_cancel`` (if given) is handed what cancels it on the server: a
        cancel message naming the call id, as the Java client sends (SOAP itself has none)."""
        import requests
        from lxml import etree

        if on_cancel is not None and call_id:
            on_cancel(lambda: self._send_cancel(call_id))
        env, body = _soap.envelope(_soap.SOAP11, call_id, timeout, trace)
        wrapper = etree.SubElement(body, self.codec.q(op.name), nsmap={"m": self.codec.ns})
        self.codec.write(request, wrapper)
        data = _soap.to_bytes(env)
        headers = {"Content-Type": "text/xml; charset=UTF-8", "SOAPAction": '"%s/%s"' % (self.codec.ns, op.name)}
        if self.token is not None:
            headers["Authorization"] = _token_header(self.token, self.address, self.protocol)
        try:
            r = self.session.post(self.address, data=data, headers=headers, timeout=(min(timeout or 5, 5), timeout))
        except requests.exceptions.ConnectTimeout as e:
            raise TransportError(self.protocol, TransportError.NOT_DELIVERED, "cannot connect: %s" % e) from None
        except requests.exceptions.ConnectionError as e:
            text = str(e)
            never = ("NewConnectionError" in text or "Connection refused" in text or "Failed to establish" in text
                     or _tcp.refused_handshake(_root_cause(e)))
            raise TransportError(self.protocol, TransportError.NOT_DELIVERED if never else TransportError.MAY_HAVE_RUN,
                                 text) from None
        except requests.exceptions.RequestException as e:
            raise TransportError(self.protocol, TransportError.MAY_HAVE_RUN, str(e)) from None
        if r.status_code == 503 and BUSY_HEADER in r.headers:
            raise TransportError(self.protocol, TransportError.NOT_DELIVERED, "%s at %s: server busy (HTTP 503, every "
                                 "connection its limits allow this address is working); the call did not run"
                                 % (op.name, self.address))
        if op.one_way and r.status_code in (200, 202) and not r.content.strip():
            return op.response(), None
        if r.status_code in (401, 403) and b"Envelope" not in r.content[:512]:
            raise PermissionDenied("HTTP %d from %s" % (r.status_code, self.address),
                                   PermissionDenied.UNAUTHENTICATED if r.status_code == 401 else PermissionDenied.DENIED,
                                   op.path)
        if r.status_code == 413 and b"Envelope" not in r.content[:512]:
            raise Refused("size-limit", "the server refused the request as too large (HTTP 413)")
        try:
            doc = _soap.parse_document(r.content)
        except Refused:
            raise TransportError(self.protocol, TransportError.MAY_HAVE_RUN,
                                 "HTTP %d with a body that is not XML: %r" % (r.status_code, r.content[:200])) from None
        soap_ns = doc.tag[1:].split("}")[0] if doc.tag.startswith("{") else ""
        answer = doc.find("{%s}Body" % soap_ns)
        if answer is None or len(answer) != 1:
            raise TransportError(self.protocol, TransportError.MAY_HAVE_RUN, "HTTP %d without a SOAP body" % r.status_code)
        answer = answer[0]
        if answer.tag == "{%s}Fault" % soap_ns:
            raise self.fault(op, answer, soap_ns) from None
        if answer.tag != self.codec.q(op.name + "Response"):
            raise Refused("malformed", "the answer is %s, not %sResponse" % (answer.tag, op.name))
        return self.codec.read(op.response, answer), None

    def _send_cancel(self, call_id):
        """POSTs the cancel message (the ``Switchboard-Cancel`` header, no body) on a thread of its
        own, under the call's own credentials: a server cancels only its caller's call. It goes over
        a session of its own: the transport's is busy with the call, and a requests session is not
        made to be used from two threads at once."""
        headers = {CANCEL_HEADER: call_id}
        if self.token is not None:
            headers["Authorization"] = _token_header(self.token, self.address, self.protocol)

        def send():
            with self._cancel_session() as session:
                try:
                    session.post(self.address, data=b"", headers=headers, timeout=5).close()
                except Exception:   # the server is gone: nothing runs there to cancel
                    pass
        threading.Thread(target=send, name="switchboard-soap-cancel", daemon=True).start()

    def _cancel_session(self):
        import requests

        session = requests.Session()
        if self.tls is not None:
            self.tls.configure(session)
        return session

    def fault(self, op, fault, soap_ns):
        code, text, detail = _soap.fault_parts(fault, soap_ns)
        denied = _soap.permission_denied(fault, soap_ns, detail)
        if denied is not None:
            return PermissionDenied(text, denied, op.path)
        if detail is not None:
            refused = detail.find("{%s}refused" % _soap.SB_SOAP)
            if refused is not None:
                if refused.get("reason") == DRAINING_REASON:
                    return Draining(self.protocol, "%s at %s: %s" % (op.name, self.address, text))
                return Refused(refused.get("reason") or "malformed", text, refused.get("field"))
            if op.fault is not None:
                element = detail.find(self.codec.q(op.fault.DESCRIPTOR.name))
                if element is not None:
                    return FaultMessage(self.codec.read(op.fault, element), text)
        if code in ("Client", "Sender"):
            return Refused("malformed", text)
        return RemoteError(text, _error_type(detail))

    def close(self):
        self.session.close()


def _token_header(token, address, protocol, on_this_host=False):
    """The Authorization header's value, or a not-delivered failure where the token must not travel
    (``on_this_host``: over a Unix socket, which does not leave the host)."""
    if not on_this_host and not BearerToken.may_travel_to(address):
        raise TransportError(protocol, TransportError.NOT_DELIVERED, str(PlainTextToken(address)))
    return token.header()


def _error_type(detail):
    if detail is None:
        return None
    for el in detail.iter():
        if isinstance(el.tag, str) and el.tag.endswith("}error") and el.get("type"):
            return el.get("type")
    return None
