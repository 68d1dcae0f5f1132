#!/usr/bin/env python3
"""The echo component written in Python: serves the Echo interface over gRPC and SOAP and binds
itself in a Switchboard registry, knowing nothing of the Java side but three documents.

- The interface: ``echo.xsd`` (sent to the registry as the entry's interface schema), and what the
  interface compiler derives from it: the typed ``Echo.proto`` (every value an ordinary protobuf
  message; the service's messages and servicer are generated from it at run time with grpc_tools,
  and it goes into the entry, so that any gRPC client is built from the entry alone) and
  ``Echo.wsdl`` (served at ``<soap endpoint>?wsdl``; its schema is the SOAP wire form).
- The registry: only its address. The registry client is built by zeep from ``<registry>?wsdl``,
  fetched at run time; bind, renew and unbind carry the shared secret (``SWITCHBOARD_SECRET`` or
  ``--secret-file``), as a Java ``ComponentServer``'s do.

It binds one entry (grpc endpoint first, then soap; the interface schema; the .proto; the WSDL
address; a lease), renews the lease at a third of its length and binds again when the registry
answers that it no longer holds the entry, and unbinds on SIGTERM or Ctrl-C. It prints one JSON
object per line: ``serving`` (the entry), ``rebound``, ``renewed`` (with ``--verbose-renew``) and,
last, ``stopped`` with the calls it served per protocol and operation.

The gRPC side serves the typed methods: a streaming method's request is the protobuf merge of the
parts it receives, and its answer goes out in parts the same way; a declared fault ends the call
with its fault message in the status details (google.rpc.Status, the fault as google.protobuf.Any).

The SOAP side is written here on the standard library's HTTP server and lxml, because the SOAP wire
form (an ``xs:list`` per numeric array, linked nodes flat in ``sb-graph`` with ``sb-id``/IDREF) is
not one a Python SOAP server library produces. It maps that form to and from the same generated
protobuf messages (numbers, strings, numeric arrays and linked nodes; the operations whose messages
hold other structures are served over gRPC only). It reads SOAP 1.1 and 1.2 envelopes, refuses DTDs
and entities, and bounds the body (``--max-message-bytes``), as the gRPC side bounds its streams.

Usage (paths default to the repository's echo component, after a build):
    python echo_component.py --registry http://127.0.0.1:8081/axis2/services/Registry --name PyEcho
"""

import argparse
import base64
import json
import os
import re
import signal
import struct
import sys
import shutil
import tempfile
import threading
import uuid
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.dont_write_bytecode = True  # importing echo_grpc_client leaves no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from echo_grpc_client import DETAILS_KEY, PART_BYTES, Interface, merged, parts  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
ECHO_GENERATED = os.path.join(REPO, "components/echo/target/generated-resources/switchboard/io/switchboard/components/echo")
SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12 = "http://www.w3.org/2003/05/soap-envelope"
SB_SOAP = "urn:switchboard:soap"  # the namespace of the <sb:refused reason="..."/> fault detail
DEFAULT_MAX_MESSAGE = 64 << 20


def emit(event, **fields):
    print(json.dumps(dict(event=event, **fields)), flush=True)


def warn(text):
    print("echo_component: " + text, file=sys.stderr, flush=True)


class TooLarge(Exception):
    """A request over the size limit."""


class Refused(Exception):
    """A request that is not a well-formed call of an operation: a SOAP Sender fault."""


# ---------------------------------------------------------------------------------------------
# The component: the operations of echo.xsd, and what it ran


class EchoImplementation:
    """Echo answers what it was sent (the response has the request's fields, so its protobuf bytes
    are the answer), divides, and counts every call it ran, per protocol and operation."""

    ECHOED = ("echoDoubles", "echoList", "empty", "echoTensor", "echoMixed")
    OPERATIONS = ECHOED + ("divide",)

    def __init__(self, iface):
        self.iface = iface
        self.lock = threading.Lock()
        self.calls = {}

    def run(self, protocol, operation, request):
        """The response message, or raises DeclaredFault with the fault message."""
        if operation not in self.OPERATIONS:
            raise Refused("no operation " + operation)
        with self.lock:
            key = protocol + " " + operation
            self.calls[key] = self.calls.get(key, 0) + 1
        response = self.iface.message(self.iface.methods[operation].output_type.name)
        if operation in self.ECHOED:
            return response.FromString(request.SerializeToString())
        if request.divisor == 0:
            raise DeclaredFault(self.iface.message(operation + "Fault")(reason="division by zero",
                                                                          dividend=request.dividend))
        # Java's long division: truncated toward zero
        quotient = abs(request.dividend) // abs(request.divisor) * (-1 if (request.dividend < 0) != (request.divisor < 0) else 1)
        quotient = (quotient + 2 ** 63) % 2 ** 64 - 2 ** 63  # MIN_VALUE / -1 wraps, as in Java
        return response(quotient=quotient, remainder=request.dividend - request.divisor * quotient
                        if request.divisor != -1 else 0)


class DeclaredFault(Exception):
    """An operation's declared fault; its message is the opFault message."""

    def __init__(self, message):
        super().__init__(str(message))
        self.message = message


# ---------------------------------------------------------------------------------------------
# gRPC: the typed methods, generated from the .proto


def bounded(request_iterator, limit):
    """The parts of one request, refusing a request whose parts pass the limit together."""
    seen = 0
    for part in request_iterator:
        seen += part.ByteSize()
        if seen > limit:
            raise TooLarge("request over %d bytes" % limit)
        yield part


def grpc_servicer(iface, impl, max_message):
    import grpc
    from google.protobuf import any_pb2

    def answer(op, request, context):
        try:
            return impl.run("grpc", op, request)
        except DeclaredFault as f:
            detail = any_pb2.Any()
            detail.Pack(f.message, "type.googleapis.com/")
            status = iface.status.Status(code=grpc.StatusCode.FAILED_PRECONDITION.value[0],
                                         message=str(f.message).strip(), details=[detail])
            context.set_trailing_metadata(((DETAILS_KEY, status.SerializeToString()),))
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, status.message)

    def handler(op):
        request_cls = iface.message(iface.methods[op].input_type.name)
        if not iface.streams(op):
            return lambda self, request, context: answer(op, request, context)

        def handle(self, request_iterator, context):
            try:
                request = merged(request_cls, bounded(request_iterator, max_message))
            except TooLarge as e:
                context.set_trailing_metadata((("sb-refused", "size-limit"),))
                context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(e))
            yield from parts(answer(op, request, context))
        return handle

    base = getattr(iface.pb2_grpc, iface.service + "Servicer")
    return type(iface.service + "InPython", (base,), {op: handler(op) for op in iface.methods})()


def start_grpc(host, iface, impl, max_message):
    import grpc

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8),
                         options=[("grpc.max_receive_message_length", 2 * PART_BYTES + 1024),
                                  ("grpc.max_send_message_length", 64 << 20)])
    getattr(iface.pb2_grpc, "add_%sServicer_to_server" % iface.service)(grpc_servicer(iface, impl, max_message), server)
    port = server.add_insecure_port("%s:0" % host)
    server.start()
    return server, "grpc://%s:%d/%s" % (host, port, iface.service)


# ---------------------------------------------------------------------------------------------
# SOAP: document/literal wrapped, in the Switchboard wire form


XSD_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
XSD_SPECIAL = {"INF": float("inf"), "+INF": float("inf"), "-INF": float("-inf"), "NaN": float("nan")}
INTEGER = re.compile(r"^[+-]?\d+$")
RANGES = {"BYTE": 8, "SHORT": 16, "INT": 32, "LONG": 64}


def parse_number(kind, text):
    text = text.strip()
    if kind in ("FLOAT", "DOUBLE"):
        if text in XSD_SPECIAL:
            v = XSD_SPECIAL[text]
        elif XSD_NUMBER.match(text):
            v = float(text)
        else:
            raise Refused("not an xs:%s: %r" % (kind.lower(), text[:40]))
        # decimal -> double -> float rounds as decimal -> float does (53 >= 2 * 24 + 2 bits)
        return struct.unpack("<f", struct.pack("<f", v))[0] if kind == "FLOAT" and v == v and abs(v) != float("inf") else v
    if kind == "BOOL":
        if text not in ("true", "false", "1", "0"):
            raise Refused("not an xs:boolean: %r" % text[:40])
        return text in ("true", "1")
    if not INTEGER.match(text):
        raise Refused("not an integer: %r" % text[:40])
    v, bits = int(text), RANGES[kind]
    if not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
        raise Refused("%s out of range for %s" % (text[:40], kind))
    return v


def format_number(kind, v):
    if kind in ("FLOAT", "DOUBLE"):
        if v != v:
            return "NaN"
        if v in (float("inf"), float("-inf")):
            return "INF" if v > 0 else "-INF"
        return repr(float(v))  # the shortest text that reads back as the same double
    if kind == "BOOL":
        return "true" if v else "false"
    return str(int(v))


class SoapCodec:
    """The generated protobuf messages <-> the elements of the SOAP wire form, in the component's
    namespace. A message's fields are its schema's elements in order: a repeated number is an
    ``xs:list`` (absent: null, listed in ``sb_nulls``), a ``uint32`` is a linked node's ``sb-id``
    (the node table ``sb_nodes`` is ``sb-graph``), other scalars are their XML Schema text."""

    KINDS = {"TYPE_DOUBLE": "DOUBLE", "TYPE_FLOAT": "FLOAT", "TYPE_INT32": "INT", "TYPE_SFIXED32": "INT",
             "TYPE_INT64": "LONG", "TYPE_SFIXED64": "LONG", "TYPE_BOOL": "BOOL", "TYPE_STRING": "STRING",
             "TYPE_BYTES": "BYTES", "TYPE_UINT32": "REF"}

    def __init__(self, iface, namespace):
        from google.protobuf.descriptor import FieldDescriptor
        self.types = {getattr(FieldDescriptor, n): n for n in dir(FieldDescriptor) if n.startswith("TYPE_")}
        self.iface, self.ns = iface, namespace

    def q(self, local):
        return "{%s}%s" % (self.ns, local)

    def fields(self, descriptor):
        """(field, kind) in schema order; refuses a message holding what this SOAP side does not map."""
        out = []
        for f in descriptor.fields:
            if f.name in ("sb_nodes", "sb_nulls"):
                continue
            kind = self.KINDS.get(self.types[f.type])
            if kind is None:
                raise Refused("%s.%s (a %s) is not served over SOAP by this component; call it over gRPC"
                              % (descriptor.name, f.name, f.message_type.name if f.message_type else f.type))
            out.append((f, "PACKED" if f.is_repeated else kind, kind))
        return out

    def node_class(self, message_cls):
        nodes = message_cls.DESCRIPTOR.fields_by_name.get("sb_nodes")
        if nodes is None or nodes.message_type.containing_type is not None:
            return None  # no linked values, or several linked types (a nested Node; not in the echo interface)
        return self.iface.message(nodes.message_type.name)

    def read(self, message_cls, element):
        """The message one wrapper element (a request) holds."""
        message = message_cls()
        ids = {}
        graph = element.find(self.q("sb-graph"))
        node_cls = self.node_class(message_cls)
        if graph is not None:
            if node_cls is None:
                raise Refused("%s holds no linked values" % message_cls.DESCRIPTOR.name)
            for el in graph:  # every node is numbered before any field is read, so references resolve
                if el.tag != self.q(node_cls.DESCRIPTOR.name) or not el.get("sb-id") or el.get("sb-id") in ids:
                    raise Refused("sb-graph holds %s with id %r" % (el.tag, el.get("sb-id")))
                ids[el.get("sb-id")] = len(ids) + 1
            for el in graph:
                message.sb_nodes.append(self.read_fields(node_cls(), el, ids))
        return self.read_fields(message, element, ids)

    def read_fields(self, message, element, ids):
        for f, kind, scalar in self.fields(message.DESCRIPTOR):
            el = element.find(self.q(f.name))
            if el is None:
                if kind == "PACKED":
                    message.sb_nulls.lists.append(f.number)   # an absent array is null, an empty one empty
                elif not f.has_presence and kind != "REF":   # an absent reference is null: node 0
                    raise Refused("%s is missing" % f.name)
                continue
            text = el.text or ""
            if kind == "STRING":
                setattr(message, f.name, text)
            elif kind == "BYTES":
                setattr(message, f.name, base64.b64decode(text, validate=True))
            elif kind == "REF":
                if text.strip() not in ids:
                    raise Refused("%s refers to %r, which sb-graph does not hold" % (f.name, text.strip()[:40]))
                setattr(message, f.name, ids[text.strip()])
            elif kind == "PACKED":
                getattr(message, f.name).extend(parse_number(scalar, t) for t in text.split())
            else:
                setattr(message, f.name, parse_number(scalar, text))
        return message

    def write(self, message, parent):
        """Writes one wrapper element's fields under ``parent``; linked nodes go into sb-graph."""
        from lxml import etree

        def put(element, message):
            nulls = set(message.sb_nulls.lists) if "sb_nulls" in message.DESCRIPTOR.fields_by_name else set()
            for f, kind, scalar in self.fields(message.DESCRIPTOR):
                if kind == "PACKED":
                    if f.number in nulls:
                        continue
                elif kind == "REF":
                    if not getattr(message, f.name):
                        continue
                elif f.has_presence and not message.HasField(f.name):
                    continue
                child = etree.SubElement(element, self.q(f.name))
                v = getattr(message, f.name)
                if kind == "STRING":
                    child.text = v
                elif kind == "BYTES":
                    child.text = base64.b64encode(v).decode("ascii")
                elif kind == "REF":
                    child.text = "n%d" % (v - 1)
                elif kind == "PACKED":
                    child.text = " ".join(format_number(scalar, x) for x in v)
                else:
                    child.text = format_number(scalar, v)
        put(parent, message)
        nodes = message.sb_nodes if "sb_nodes" in message.DESCRIPTOR.fields_by_name else []
        if nodes:
            graph = etree.SubElement(parent, self.q("sb-graph"))
            for i, node in enumerate(nodes):  # flat: no recursion on long chains
                el = etree.SubElement(graph, self.q(node.DESCRIPTOR.name))
                el.set("sb-id", "n%d" % i)
                put(el, node)


def safe_parser():
    from lxml import etree

    # no DTD, no entities, no network; lxml's default (non-huge) limits bound depth and text size
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                           remove_blank_text=True)


DRAIN_LIMIT = 64 << 20  # past the limit, read at most this much more so the refusal reaches the sender


def read_body(handler, limit):
    """The request body, by Content-Length or chunked transfer coding. Past ``limit`` it reads on
    (discarding, up to DRAIN_LIMIT more) so that the sender, still writing, gets the refusal
    rather than a reset connection, as the Java SOAP server does; then raises TooLarge."""
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        parts, size = [], 0
        while True:
            line = handler.rfile.readline(1024)
            try:
                n = int(line.split(b";")[0].strip(), 16)
            except ValueError:
                handler.close_connection = True  # where the next request would start is unknown
                raise Refused("bad chunk header")
            if n == 0:
                while handler.rfile.readline(1024).strip():  # trailers
                    pass
                if size > limit:
                    raise TooLarge("request over %d bytes" % limit)
                return b"".join(parts)
            size += n
            if size > limit + DRAIN_LIMIT:
                handler.close_connection = True
                raise TooLarge("request over %d bytes" % limit)
            data = handler.rfile.read(n)
            if size <= limit:
                parts.append(data)
            else:
                parts = []
            handler.rfile.readline(8)
    length = int(handler.headers.get("Content-Length") or 0)
    if length > limit:
        if length <= limit + DRAIN_LIMIT:
            remaining = length
            while remaining > 0:
                got = handler.rfile.read(min(remaining, 1 << 20))
                if not got:
                    break
                remaining -= len(got)
        else:
            handler.close_connection = True
        raise TooLarge("request over %d bytes" % limit)
    return handler.rfile.read(length)


def soap_handler_class(codec, iface, impl, wsdl_text, path, max_message):
    from lxml import etree

    wire_ops = {codec.q(op): op for op in iface.methods}

    class SoapHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as two writes; no 40 ms delayed-ACK stall
        server_version = "switchboard-python"

        def log_message(self, *args):  # quiet: one line per call would drown the JSON on stdout
            pass

        def send(self, status, body, content_type):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path.split("?")[0] == path and self.path.lower().endswith("?wsdl"):
                self.send(200, wsdl_text.encode("utf-8"), "text/xml; charset=UTF-8")
            else:
                self.send(404, b"not found\n", "text/plain")

        def do_POST(self):
            if self.path.split("?")[0] != path:
                self.send(404, b"not found\n", "text/plain")
                return
            envelope_ns = SOAP11
            try:
                body = read_body(self, max_message)
                doc = etree.fromstring(body, safe_parser())
                if doc.getroottree().docinfo.doctype:
                    raise Refused("DTDs are not accepted")
                envelope_ns = doc.tag[1:].split("}")[0] if doc.tag.startswith("{") else ""
                if doc.tag not in ("{%s}Envelope" % SOAP11, "{%s}Envelope" % SOAP12):
                    raise Refused("not a SOAP envelope: " + doc.tag[:80])
                soap_body = doc.find("{%s}Body" % envelope_ns)
                if soap_body is None or len(soap_body) != 1 or soap_body[0].tag not in wire_ops:
                    raise Refused("the body holds no operation of " + iface.service)
                op = wire_ops[soap_body[0].tag]
                request = codec.read(iface.message(iface.methods[op].input_type.name), soap_body[0])
            except TooLarge as e:
                self.fault(envelope_ns, "size-limit", str(e), 413)
                return
            except (Refused, etree.XMLSyntaxError, ValueError, struct.error) as e:
                self.fault(envelope_ns, "malformed", "cannot read the request: %s" % e, 500)
                return
            try:
                answer = impl.run("soap", op, request)
            except DeclaredFault as f:
                # the SOAP form of declared faults is not written here: gRPC carries them
                self.fault(envelope_ns, "malformed", "%s raised its declared fault (served over gRPC only): %s"
                           % (op, f), 500)
                return
            out_env = etree.Element("{%s}Envelope" % envelope_ns, nsmap={"soapenv": envelope_ns})
            out_body = etree.SubElement(out_env, "{%s}Body" % envelope_ns)
            response = etree.SubElement(out_body, codec.q(op + "Response"), nsmap={None: codec.ns})
            try:
                codec.write(answer, response)
            except Refused as e:
                self.fault(envelope_ns, "malformed", str(e), 500)
                return
            self.send(200, etree.tostring(out_env, xml_declaration=True, encoding="UTF-8"),
                      self.content_type(envelope_ns))

        @staticmethod
        def content_type(envelope_ns):
            return ("application/soap+xml" if envelope_ns == SOAP12 else "text/xml") + "; charset=UTF-8"

        def fault(self, envelope_ns, reason, text, status):
            """A Sender (Client) fault whose detail names the refusal, as a Switchboard server's does."""
            envelope_ns = envelope_ns if envelope_ns in (SOAP11, SOAP12) else SOAP11
            env = etree.Element("{%s}Envelope" % envelope_ns, nsmap={"soapenv": envelope_ns})
            fault = etree.SubElement(etree.SubElement(env, "{%s}Body" % envelope_ns), "{%s}Fault" % envelope_ns)
            refused = etree.Element("{%s}refused" % SB_SOAP, nsmap={"sb": SB_SOAP})
            refused.set("reason", reason)
            if envelope_ns == SOAP11:
                etree.SubElement(fault, "faultcode").text = "soapenv:Client"
                etree.SubElement(fault, "faultstring").text = text
                etree.SubElement(fault, "detail").append(refused)
            else:
                code = etree.SubElement(fault, "{%s}Code" % envelope_ns)
                etree.SubElement(code, "{%s}Value" % envelope_ns).text = "soapenv:Sender"
                etree.SubElement(etree.SubElement(fault, "{%s}Reason" % envelope_ns), "{%s}Text" % envelope_ns).text = text
                etree.SubElement(fault, "{%s}Detail" % envelope_ns).append(refused)
            self.send(status, etree.tostring(env, xml_declaration=True, encoding="UTF-8"), self.content_type(envelope_ns))

    return SoapHandler


def start_soap(host, codec, iface, impl, wsdl_template, max_message):
    path = "/services/" + iface.service
    server = ThreadingHTTPServer((host, 0), soap_handler_class(codec, iface, impl, "", path, max_message))
    address = "http://%s:%d%s" % (host, server.server_address[1], path)
    # the WSDL names the address it is served from
    wsdl = re.sub(r'(<soap:address\s+location=")[^"]*(")', lambda m: m.group(1) + address + m.group(2), wsdl_template)
    server.RequestHandlerClass = soap_handler_class(codec, iface, impl, wsdl, path, max_message)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="soap", daemon=True).start()
    return server, address


# ---------------------------------------------------------------------------------------------
# The registry, through a zeep client built from its WSDL


class Registration:
    """Binds one entry, renews its lease and binds it again when the registry lost it; unbinds at the end."""

    def __init__(self, registry_url, credential, entry, verbose_renew=False):
        import zeep

        settings = zeep.Settings(strict=True, forbid_dtd=True, forbid_entities=True, forbid_external=True,
                                 xml_huge_tree=False)
        client = zeep.Client(registry_url + "?wsdl", settings=settings)
        binding = next(iter(client.wsdl.bindings))
        # the address we were given, not the one the WSDL names (it may be a name only the registry host knows)
        self.service = client.create_service(binding, registry_url)
        self.client, self.credential, self.entry = client, credential, entry
        self.verbose_renew = verbose_renew
        self.stop = threading.Event()
        self.thread = None

    def bind(self):
        self.service.bind(entry=self.entry, credential=self.credential)

    def start_heartbeat(self):
        lease = self.entry.get("leaseSeconds") or 0
        if lease <= 0:
            return
        self.thread = threading.Thread(target=self.heartbeat, args=(lease / 3.0,), name="lease", daemon=True)
        self.thread.start()

    def heartbeat(self, every):
        name, instance = self.entry["name"], self.entry["instanceId"]
        while not self.stop.wait(every):
            try:
                if self.service.renew(name=name, instanceId=instance, credential=self.credential):
                    if self.verbose_renew:
                        emit("renewed", name=name, instanceId=instance)
                else:
                    self.bind()
                    emit("rebound", name=name, instanceId=instance)
            except Exception as e:  # the registry may be restarting: keep trying, as ComponentServer does
                warn("could not renew the lease of %s (%s); will try again: %s" % (name, instance, e))

    def unbind(self):
        self.stop.set()
        if self.thread:
            self.thread.join(5)
        return self.service.unbind(name=self.entry["name"], instanceId=self.entry["instanceId"],
                                   credential=self.credential)


def fault_text(e):
    """A zeep Fault's message and the registry's fault code (bindFault/code), if it sent one."""
    code = None
    detail = getattr(e, "detail", None)
    if detail is not None:
        found = detail.xpath(".//*[local-name()='code']")
        code = found[0].text if found else None
    return "%s%s" % (getattr(e, "message", e), " (code %s)" % code if code else "")


# ---------------------------------------------------------------------------------------------


def read_text(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise SystemExit("echo_component: cannot read the %s %s: %s (build the project first: mvn -B -ntp -q "
                         "-pl components/echo -am package -DskipTests)" % (what, path, e.strerror))


def stop_servers(soap_server, grpc_server, workdir):
    soap_server.shutdown()
    grpc_server.stop(grace=2).wait()
    shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--registry", required=True, help="the registry's SOAP address (its WSDL is at ?wsdl)")
    parser.add_argument("--name", help="the name to bind (default: the component's name, Echo)")
    parser.add_argument("--xsd", default=os.path.join(REPO, "components/echo/src/main/xsd/echo.xsd"))
    parser.add_argument("--proto", default=os.path.join(ECHO_GENERATED, "Echo.proto"),
                        help="the typed .proto (default: the echo component's, after a build)")
    parser.add_argument("--wsdl", default=os.path.join(ECHO_GENERATED, "Echo.wsdl"))
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on and to publish")
    parser.add_argument("--lease", type=int, default=30, help="lease seconds (0: none; renewed at a third)")
    parser.add_argument("--secret-file", help="the registry's shared secret (default: $SWITCHBOARD_SECRET)")
    parser.add_argument("--max-message-bytes", type=int, default=DEFAULT_MAX_MESSAGE)
    parser.add_argument("--verbose-renew", action="store_true", help="print a line for every renew")
    args = parser.parse_args()
    if not re.match(r"^https?://[^/?#]+/", args.registry):
        parser.error("--registry must be the registry's http:// or https:// address, as './switchboard registry' "
                     "prints it (got %r)" % args.registry)

    import grpc
    from lxml import etree

    xsd, proto, wsdl = read_text(args.xsd, "schema"), read_text(args.proto, ".proto"), read_text(args.wsdl, "WSDL")
    namespace = etree.fromstring(wsdl.encode("utf-8"), safe_parser()).get("targetNamespace")
    workdir = tempfile.mkdtemp(prefix="switchboard-py-component-")
    iface = Interface(proto, workdir)
    missing = set(iface.methods) ^ set(EchoImplementation.OPERATIONS)
    if missing:
        shutil.rmtree(workdir, ignore_errors=True)
        raise SystemExit("echo_component: %s does not describe the echo interface (%s)" % (args.proto, sorted(missing)))
    credential = None
    if args.secret_file:
        credential = read_text(args.secret_file, "secret file").strip()
    elif os.environ.get("SWITCHBOARD_SECRET"):
        credential = os.environ["SWITCHBOARD_SECRET"]

    impl = EchoImplementation(iface)
    grpc_server, grpc_address = start_grpc(args.host, iface, impl, args.max_message_bytes)
    soap_server, soap_address = start_soap(args.host, SoapCodec(iface, namespace), iface, impl, wsdl,
                                           args.max_message_bytes)

    entry = {"name": args.name or iface.service, "instanceId": str(uuid.uuid4()),
             "endpoints": {"item": [{"protocol": "grpc", "address": grpc_address},
                                    {"protocol": "soap", "address": soap_address}]},
             "interfaceSchema": xsd, "interfaceProto": proto, "wsdlUrl": soap_address + "?wsdl",
             "leaseSeconds": args.lease}
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    import zeep.exceptions

    try:
        registration = Registration(args.registry, credential, entry, args.verbose_renew)
        registration.bind()
    except Exception as e:
        if isinstance(e, zeep.exceptions.Fault):
            warn("the registry refused the bind: " + fault_text(e))
        else:
            warn("cannot reach the registry at %s: %s" % (args.registry, e))
        stop_servers(soap_server, grpc_server, workdir)
        return 2
    registration.start_heartbeat()
    emit("serving", name=entry["name"], instanceId=entry["instanceId"], registry=args.registry,
         endpoints={"grpc": grpc_address, "soap": soap_address}, leaseSeconds=args.lease,
         python=sys.version.split()[0], grpcio=grpc.__version__)
    while not stop.wait(0.5):
        pass
    unbound = None
    try:
        unbound = registration.unbind()
    except Exception as e:
        warn("could not unbind %s; its lease will run out: %s" % (entry["name"], e))
    stop_servers(soap_server, grpc_server, workdir)
    emit("stopped", name=entry["name"], unbound=unbound, calls=dict(sorted(impl.calls.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
