"""The SOAP wire form (docs/wire-forms.md) <-> the typed protobuf messages, both ways, so that one
value layer serves gRPC and SOAP: a repeated number is one ``xs:list`` element (absent: null),
other repeated values a wrapper of ``item``s (nil items are null), a struct a nested element, a
heterogeneous list an element whose children are named by their alternative, linked values flat
in ``sb-graph`` with ``sb-id`` and IDREFs. The call id travels in the ``sb:call`` header, as the
Java meta-stub sends it, so a Java server runs a repeated call once.

Reading is strict as on the Java side: no DTD or entity, unknown elements refused, numbers exact
or refused; every refusal is ``Refused("malformed", ..., field)``."""

import base64
import datetime
import math
import re

from google.protobuf.descriptor import FieldDescriptor as F

from . import _trace
from ._schema import NODES, NULLS, real_oneof
from .errors import Refused

SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12 = "http://www.w3.org/2003/05/soap-envelope"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
SB_SOAP = "urn:switchboard:soap"
XSD_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
XSD_SPECIAL = {"INF": math.inf, "+INF": math.inf, "-INF": -math.inf, "NaN": math.nan}
INTEGER = re.compile(r"^[+-]?\d+$")
RANGES = {"BYTE": 8, "SHORT": 16, "INT": 32, "LONG": 64}
NUMBER_TYPES = {F.TYPE_DOUBLE: "DOUBLE", F.TYPE_FLOAT: "FLOAT", F.TYPE_INT32: "INT", F.TYPE_SFIXED32: "INT",
                F.TYPE_INT64: "LONG", F.TYPE_SFIXED64: "LONG", F.TYPE_BOOL: "BOOL"}


def safe_parser():
    """No DTD, no entities, no network; lxml's default (non-huge) limits bound depth and text size."""
    from lxml import etree

    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                           remove_blank_text=True, dtd_validation=False)


def parse_document(body):
    """The root element of an XML message; refuses a DTD (and with it every entity)."""
    from lxml import etree

    if b"<!DOCTYPE" in body[:4096] or b"<!ENTITY" in body:
        raise Refused("malformed", "DTDs are not accepted")
    try:
        doc = etree.fromstring(body, safe_parser())
    except etree.XMLSyntaxError as e:
        raise Refused("malformed", "not well-formed XML: %s" % e) from None
    if doc.getroottree().docinfo.doctype:
        raise Refused("malformed", "DTDs are not accepted")
    return doc


def parse_number(kind, text, where):
    text = text.strip()
    if kind in ("FLOAT", "DOUBLE"):
        if text in XSD_SPECIAL:
            v = XSD_SPECIAL[text]
        elif XSD_NUMBER.match(text):
            v = float(text)
        else:
            raise Refused("malformed", "not an xs:%s: %r" % (kind.lower(), text[:40]), where)
        if kind == "FLOAT" and math.isfinite(v):
            import struct
            try:
                v = struct.unpack("<f", struct.pack("<f", v))[0]
            except OverflowError:
                raise Refused("malformed", "out of range for xs:float: %r" % text[:40], where) from None
        return v
    if kind == "BOOL":
        if text not in ("true", "false", "1", "0"):
            raise Refused("malformed", "not an xs:boolean: %r" % text[:40], where)
        return text in ("true", "1")
    if not INTEGER.match(text):
        raise Refused("malformed", "not an integer: %r" % text[:40], where)
    v, bits = int(text), RANGES.get(kind, 64)
    if not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
        raise Refused("malformed", "%s is out of range for %s" % (text[:40], kind.lower()), where)
    return v


def format_number(kind, v):
    if kind in ("FLOAT", "DOUBLE"):
        if v != v:
            return "NaN"
        if math.isinf(v):
            return "INF" if v > 0 else "-INF"
        return repr(float(v))  # the shortest text that reads back as the same double
    if kind == "BOOL":
        return "true" if v else "false"
    return str(int(v))


def _kind(iface, descriptor, f):
    """The schema number type of a field (BYTE and SHORT from the .proto's comments)."""
    kind = iface.kind(descriptor, f.name).split("|")[0].replace("PACKED_", "")
    if kind in RANGES or kind in ("FLOAT", "DOUBLE", "BOOL"):
        return kind
    return NUMBER_TYPES.get(f.type, "LONG")


def _is_choices(d):
    e = d.fields_by_name.get("elements")
    return e is not None and e.message_type is not None and real_oneof(e.message_type) is not None


def _is_ref(iface, descriptor, f):
    return f.message_type is None and (iface.kind(descriptor, f.name).startswith("REF") or f.type == F.TYPE_UINT32)


class SoapCodec:
    """Elements of the SOAP wire form in the component's namespace <-> protobuf messages."""

    def __init__(self, iface, namespace):
        self.iface, self.ns = iface, namespace

    def q(self, local):
        return "{%s}%s" % (self.ns, local)

    # -- reading --------------------------------------------------------------------------------

    def read(self, message_class, element):
        """The message one wrapper element holds (a request, a response or a fault's detail)."""
        message = message_class()
        d = message.DESCRIPTOR
        ids = {}
        graph = element.find(self.q("sb-graph"))
        if graph is not None:
            table = d.fields_by_name.get(NODES)
            if table is None:
                raise Refused("malformed", "%s holds no linked values" % d.name, d.name + "/sb-graph")
            for i, el in enumerate(graph):   # every node is numbered before any field is read: references resolve
                sb_id = el.get("sb-id")
                if not sb_id or sb_id in ids:
                    raise Refused("malformed", "a node without an sb-id or with one seen before",
                                  "%s/sb-graph/%s[%d]" % (d.name, el.tag.split("}")[-1], i + 1))
                ids[sb_id] = i + 1
            for i, el in enumerate(graph):
                where = "%s/sb-graph/%s[%d]" % (d.name, el.tag.split("}")[-1], i + 1)
                entry = getattr(message, NODES).add()
                node = entry
                type_name = el.tag.split("}")[-1]
                if real_oneof(entry.DESCRIPTOR) is not None:
                    f = next((f for f in entry.DESCRIPTOR.fields if f.message_type is not None
                              and f.message_type.name == type_name), None)
                    if f is None:
                        raise Refused("malformed", "no linked type %s" % type_name, where)
                    node = getattr(entry, f.name)
                elif type_name != entry.DESCRIPTOR.name:
                    raise Refused("malformed", "no linked type %s" % type_name, where)
                self.read_fields(node, el, ids, where, 0, skip=())
                node.SetInParent()
        self.read_fields(message, element, ids, d.name, 0, skip=("sb-graph",))
        return message

    def read_fields(self, message, element, ids, where, depth, skip):
        if depth > 130:
            raise Refused("depth-limit", "values nest too deep", where)
        d = message.DESCRIPTOR
        children = {}
        for child in element:
            if not isinstance(child.tag, str):
                continue   # comments and processing instructions
            local = child.tag.split("}")[-1]
            if local in skip and child.tag == self.q(local):
                continue
            f = d.fields_by_name.get(local)
            if f is None or local in (NODES, NULLS) or child.tag != self.q(local) or local in children:
                raise Refused("malformed", "unexpected element %s" % child.tag, where + "/" + local)
            children[local] = child
        for f in d.fields:
            if f.name in (NODES, NULLS):
                continue
            el = children.get(f.name)
            at = where + "/" + f.name
            if el is None:
                if f.is_repeated:
                    getattr(message, NULLS).lists.append(f.number)
                continue
            self.read_field(message, f, el, ids, at, depth)

    def read_field(self, message, f, el, ids, at, depth):
        d = message.DESCRIPTOR
        text = el.text or ""
        if f.is_repeated:
            if f.message_type is None and f.type in NUMBER_TYPES:
                kind = _kind(self.iface, d, f)
                getattr(message, f.name).extend(parse_number(kind, t, at) for t in text.split())
                return
            target = getattr(message, f.name)
            nulls = []
            for i, item in enumerate(el):
                if item.tag != self.q("item"):
                    raise Refused("malformed", "unexpected element %s" % item.tag, at)
                if item.get("{%s}nil" % XSI) in ("true", "1"):
                    nulls.append(i)
                    if f.message_type is not None:
                        target.add()
                    else:
                        target.append("" if f.type == F.TYPE_STRING else b"" if f.type == F.TYPE_BYTES else 0)
                elif f.message_type is not None:
                    self.read_struct(target.add(), item, ids, "%s/item[%d]" % (at, i + 1), depth + 1)
                else:
                    target.append(self.read_scalar(d, f, item.text or "", at))
            if nulls:
                getattr(message, NULLS).elements.add(field=f.number, positions=nulls)
            return
        if _is_ref(self.iface, d, f):
            ref = text.strip()
            if ref not in ids:
                raise Refused("malformed", "refers to %r, which sb-graph does not hold" % ref[:40], at)
            setattr(message, f.name, ids[ref])
            return
        if f.message_type is not None:
            self.read_struct(getattr(message, f.name), el, ids, at, depth + 1)
            return
        setattr(message, f.name, self.read_scalar(d, f, text, at))

    def read_scalar(self, d, f, text, at):
        if f.type == F.TYPE_STRING:
            return text
        if f.type == F.TYPE_BYTES:
            try:
                return base64.b64decode("".join(text.split()), validate=True)
            except ValueError:
                raise Refused("malformed", "invalid base64", at) from None
        return parse_number(_kind(self.iface, d, f), text, at)

    def read_struct(self, message, el, ids, at, depth):
        message.SetInParent()
        d = message.DESCRIPTOR
        if d.name == "DateTime" and "offset_seconds" in d.fields_by_name:
            self.read_date_time(message, (el.text or "").strip(), at)
        elif _is_choices(d):
            if depth > 130:
                raise Refused("depth-limit", "lists nest more than 64 deep", at)
            element_fields = d.fields_by_name["elements"].message_type.fields_by_name
            for i, child in enumerate(el):
                local = child.tag.split("}")[-1]
                f = element_fields.get(local)
                if f is None or child.tag != self.q(local):
                    raise Refused("malformed", "unexpected element %s" % child.tag, at)
                element = message.elements.add()
                if f.message_type is not None:
                    self.read_struct(getattr(element, f.name), child, ids, "%s/%s[%d]" % (at, local, i + 1), depth + 1)
                else:
                    setattr(element, f.name, self.read_scalar(element.DESCRIPTOR, f, child.text or "", at))
        else:
            self.read_fields(message, el, ids, at, depth, skip=())

    @staticmethod
    def read_date_time(message, text, at):
        try:
            v = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise Refused("malformed", "not an xs:dateTime: %r" % text[:40], at) from None
        if v.tzinfo is None:
            raise Refused("malformed", "an xs:dateTime without its offset", at)
        epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        delta = v - epoch
        message.seconds = delta.days * 86400 + delta.seconds
        message.nanos = delta.microseconds * 1000
        message.offset_seconds = int(v.utcoffset().total_seconds())

    # -- writing --------------------------------------------------------------------------------

    def write(self, message, parent):
        """Writes a message's fields under ``parent`` (its wrapper element); linked nodes into sb-graph."""
        from lxml import etree

        self.write_fields(message, parent, 0)
        if NODES in message.DESCRIPTOR.fields_by_name and len(getattr(message, NODES)):
            graph = etree.SubElement(parent, self.q("sb-graph"))
            for i, entry in enumerate(getattr(message, NODES)):   # flat: no recursion on long chains
                node = entry
                if real_oneof(entry.DESCRIPTOR) is not None:
                    which = entry.WhichOneof(real_oneof(entry.DESCRIPTOR).name)
                    if which is None:
                        raise Refused("malformed", "a node with no type set", entry.DESCRIPTOR.name)
                    node = getattr(entry, which)
                el = etree.SubElement(graph, self.q(node.DESCRIPTOR.name))
                el.set("sb-id", "n%d" % i)
                self.write_fields(node, el, 0)

    def write_fields(self, message, element, depth):
        from lxml import etree

        d = message.DESCRIPTOR
        nulls = getattr(message, NULLS) if NULLS in d.fields_by_name else None
        null_lists = set(nulls.lists) if nulls is not None else ()
        null_elements = {e.field: set(e.positions) for e in nulls.elements} if nulls is not None else {}
        for f in d.fields:
            if f.name in (NODES, NULLS):
                continue
            v = getattr(message, f.name)
            if f.is_repeated:
                if f.number in null_lists:
                    continue
                child = etree.SubElement(element, self.q(f.name))
                if f.message_type is None and f.type in NUMBER_TYPES:
                    kind = _kind(self.iface, d, f)
                    child.text = " ".join(format_number(kind, x) for x in v)
                    continue
                nils = null_elements.get(f.number, ())
                for i, x in enumerate(v):
                    item = etree.SubElement(child, self.q("item"))
                    if i in nils:
                        item.set("{%s}nil" % XSI, "true")
                    elif f.message_type is not None:
                        self.write_struct(x, item, depth + 1)
                    else:
                        item.text = self.scalar_text(d, f, x)
                continue
            if _is_ref(self.iface, d, f):
                if v:
                    etree.SubElement(element, self.q(f.name)).text = "n%d" % (v - 1)
                continue
            if f.message_type is not None:
                if message.HasField(f.name):
                    self.write_struct(v, etree.SubElement(element, self.q(f.name)), depth + 1)
                continue
            if f.has_presence and not message.HasField(f.name):
                continue
            etree.SubElement(element, self.q(f.name)).text = self.scalar_text(d, f, v)

    def scalar_text(self, d, f, v):
        if f.type == F.TYPE_STRING:
            return v
        if f.type == F.TYPE_BYTES:
            return base64.b64encode(v).decode("ascii")
        return format_number(_kind(self.iface, d, f), v)

    def write_struct(self, message, element, depth):
        from lxml import etree

        if depth > 130:
            raise Refused("depth-limit", "values nest too deep", message.DESCRIPTOR.name)
        d = message.DESCRIPTOR
        if d.name == "DateTime" and "offset_seconds" in d.fields_by_name:
            tz = datetime.timezone(datetime.timedelta(seconds=message.offset_seconds))
            v = datetime.datetime.fromtimestamp(message.seconds, tz).replace(microsecond=message.nanos // 1000)
            element.text = v.isoformat().replace("+00:00", "Z")
        elif _is_choices(d):
            for e in message.elements:
                which = e.WhichOneof(real_oneof(e.DESCRIPTOR).name)
                if which is None:
                    raise Refused("malformed", "a list element with no alternative set", d.name)
                f = e.DESCRIPTOR.fields_by_name[which]
                child = etree.SubElement(element, self.q(which))
                if f.message_type is not None:
                    self.write_struct(getattr(e, which), child, depth + 1)
                else:
                    child.text = self.scalar_text(e.DESCRIPTOR, f, getattr(e, which))
        else:
            self.write_fields(message, element, depth)


MAX_DEADLINE_MS = 2 ** 31 - 1   # what the Java server takes in sb:deadline's timeout-ms


def envelope(soap_ns, call_id=None, timeout=None, trace=None):
    """An empty envelope and its body; the call id in the sb:call header, the time left
    (``timeout``, seconds) in the sb:deadline header and the trace context (a ``_trace.Trace``) in
    the sb:trace header, as the Java meta-stub sends them."""
    from lxml import etree

    env = etree.Element("{%s}Envelope" % soap_ns, nsmap={"soapenv": soap_ns})
    if call_id is not None or timeout is not None or trace is not None:
        header = etree.SubElement(env, "{%s}Header" % soap_ns)
        if trace is not None:
            element = etree.SubElement(header, "{%s}trace" % SB_SOAP, nsmap={"sb": SB_SOAP})
            for name, value in trace.items():
                element.set(name, value)
        if call_id is not None:
            etree.SubElement(header, "{%s}call" % SB_SOAP, nsmap={"sb": SB_SOAP}).set("id", call_id)
        if timeout is not None:
            # whole milliseconds, rounded down as the tcp clients round timeout_ms: never more than was left
            millis = min(MAX_DEADLINE_MS, max(1, int(timeout * 1000)))
            etree.SubElement(header, "{%s}deadline" % SB_SOAP, nsmap={"sb": SB_SOAP}).set("timeout-ms", str(millis))
    return env, etree.SubElement(env, "{%s}Body" % soap_ns)


def deadline_header(header):
    """The seconds the caller had left, from the sb:deadline header of ``header`` (a SOAP Header
    element); None without one. Refused ``malformed`` outside 0 to MAX_DEADLINE_MS."""
    deadline = header.find("{%s}deadline" % SB_SOAP)
    if deadline is None:
        return None
    text = deadline.get("timeout-ms") or ""
    millis = int(text) if text.isascii() and text.isdigit() and len(text) <= 10 else -1
    if not 0 <= millis <= MAX_DEADLINE_MS:
        raise Refused("malformed", "the sb:deadline header needs a timeout-ms of 0 to %d" % MAX_DEADLINE_MS)
    return millis / 1000.0


def trace_header(header):
    """The trace context of the sb:trace header of ``header`` (a SOAP Header element), checked as
    the Java server checks it; None without one or when malformed: tracing never refuses a call."""
    element = header.find("{%s}trace" % SB_SOAP)
    return None if element is None else _trace.parse(element.get(_trace.TRACEPARENT), element.get(_trace.TRACESTATE))


def to_bytes(env):
    from lxml import etree

    return etree.tostring(env, xml_declaration=True, encoding="UTF-8")


def fault_parts(fault, soap_ns):
    """(code, text, detail element or None) of a SOAP 1.1 or 1.2 Fault element."""
    if soap_ns == SOAP12:
        code = fault.findtext("{%s}Code/{%s}Value" % (soap_ns, soap_ns)) or ""
        text = fault.findtext("{%s}Reason/{%s}Text" % (soap_ns, soap_ns)) or ""
        detail = fault.find("{%s}Detail" % soap_ns)
    else:
        code = fault.findtext("faultcode") or ""
        text = fault.findtext("faultstring") or ""
        detail = fault.find("detail")
    return code.split(":")[-1], text, detail


PERMISSION_DENIED = "PermissionDenied"
DENIAL_REASONS = ("permission-denied", "unauthenticated")


def permission_denied(fault, soap_ns, detail):
    """The reason (``permission-denied`` or ``unauthenticated``) when a Fault is a denial, else None.
    A denial is the fault code ``sb:PermissionDenied`` (SOAP 1.1's faultcode, a SOAP 1.2 Subcode), a
    detail ``sb:PermissionDenied``, or a detail ``sb:refused`` whose reason is a denial's: what the
    Python and the Java servers send, in either SOAP version."""
    if soap_ns == SOAP12:
        codes = [v.text or "" for v in fault.iter("{%s}Value" % soap_ns)]
    else:
        codes = [fault.findtext("faultcode") or ""]
    reason = None
    if detail is not None:
        for el in detail.iter():
            if el.tag == "{%s}refused" % SB_SOAP and el.get("reason") in DENIAL_REASONS:
                reason = el.get("reason")
            elif el.tag == "{%s}%s" % (SB_SOAP, PERMISSION_DENIED):
                reason = el.get("reason") if el.get("reason") in DENIAL_REASONS else DENIAL_REASONS[0]
    if reason is None and any(c.strip().split(":")[-1] == PERMISSION_DENIED for c in codes):
        reason = DENIAL_REASONS[0]
    return reason
