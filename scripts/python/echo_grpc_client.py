#!/usr/bin/env python3
"""A gRPC client for a Switchboard echo-style component, built from the component's .proto alone.

Nothing here comes from the Java side: the client

1. runs grpc_tools.protoc on the given .proto, at run time, into a temporary directory, and imports
   the generated Python stub (``<Name>_pb2_grpc.<Service>Stub``);
2. reads what each field may hold from the .proto's own comments (the ``Schema types`` block and
   the ``request``/``response`` lines above each rpc) and builds each request as the typed protobuf
   message the .proto declares (linked nodes in the ``sb_nodes`` table, numbered breadth first from
   1; null lists and elements in ``sb_nulls``), following the convention at the top of the file;
3. calls the echo operations with edge values: a unary method with the one message, a streaming
   method with the request cut into partial messages (repeated fields and the node table split
   across them), merges the response's parts, and compares it bit for bit with what it sent (by
   the serialized bytes: doubles by their IEEE bits, node numbers and so the shape of a cycle);
4. prints a JSON summary, one case per line, and exits 0 only if every case matched.

Usage:
    python echo_grpc_client.py --proto Echo.proto --target 127.0.0.1:9090
    python echo_grpc_client.py --proto Conformance.proto --target 127.0.0.1:9090 --empty-op ping

The operations it calls are named by --doubles-op (default echoDoubles), --list-op (echoList) and
--empty-op (empty); their request and response must have the shapes of the echo component's.
"""

import argparse
import importlib
import json
import os
import random
import re
import shutil
import struct
import sys
import tempfile
import time

# ---------------------------------------------------------------------------------------------
# The packed binary format, version 1 (the .proto's header comment; tags as it lists them)

TAGS = {"NULL": 0, "BOOL": 1, "BYTE": 2, "SHORT": 3, "INT": 4, "LONG": 5, "FLOAT": 6, "DOUBLE": 7,
        "STRING": 8, "BYTES": 9, "DATE_TIME": 10, "STRUCT": 11, "REF": 12, "LIST": 13, "CHOICES": 14}
PACKED = 0x20
# struct codes of the fixed-size scalars, all little-endian ('<')
FIXED = {"BOOL": "?", "BYTE": "b", "SHORT": "h", "INT": "i", "LONG": "q", "FLOAT": "f", "DOUBLE": "d"}
RESPONSE, DECLARED_FAULT = 0, 1
MAX_LIST_DEPTH = 64  # heterogeneous lists nest at most this deep, as the .proto says


class WireError(Exception):
    """The bytes do not follow the layout."""


class FieldType:
    """One field's type as the .proto's comments spell it, e.g. ``REF LinkEntry|NULL``."""

    def __init__(self, text):
        self.text = text
        self.nullable = text.endswith("|NULL")
        base = text[: -len("|NULL")] if self.nullable else text
        self.target = None  # type name of a STRUCT or REF
        self.element = None  # FieldType of a LIST's elements
        self.packed = None  # scalar kind of a PACKED_x
        if base.startswith("LIST<") and base.endswith(">"):
            self.kind, self.element = "LIST", FieldType(base[5:-1])
        elif base.startswith("PACKED_") and base[7:] in FIXED:
            self.kind, self.packed = "PACKED", base[7:]
        elif base.split(" ")[0] in ("STRUCT", "REF", "CHOICES") and len(base.split(" ")) == 2:
            self.kind, self.target = base.split(" ")
        elif base in TAGS and base != "NULL":
            self.kind = base
        else:
            raise ValueError("unknown field type in the .proto: " + text)

    @property
    def tag(self):
        return PACKED | TAGS[self.packed] if self.kind == "PACKED" else TAGS[self.kind]


def parse_fields(text):
    """``llong LONG, sstring STRING|NULL`` -> [(name, FieldType)]; ``no fields`` -> []."""
    text = text.strip()
    if text == "no fields":
        return []
    fields = []
    for part in text.split(", "):
        name, _, type_text = part.partition(" ")
        fields.append((name, FieldType(type_text)))
    return fields


class Layout:
    """What the .proto's comments say: node types, struct types, and each rpc's messages."""

    def __init__(self, proto_text):
        self.node_types = {}  # node type number -> type name
        self.types = {}  # type name -> [(field, FieldType)]
        self.lists = {}  # heterogeneous list type name -> [(alternative, FieldType)], by number
        self.structs = set()
        self.ops = {}  # rpc name -> {"request": fields, "response": fields, "fault": fields}
        self.streams = {}  # rpc name -> whether it streams partial messages (else unary)
        self.messages = {}  # rpc name -> (request message, response message)
        self.service = None
        pending = {}
        for line in proto_text.splitlines():
            m = re.match(r"\s*//\s+node type (\d+) = (\w+)\s*$", line)
            if m:
                self.node_types[int(m.group(1))] = m.group(2)
                continue
            m = re.match(r"\s*//\s+(node|struct) (\w+): (.*)$", line)
            if m:
                self.types[m.group(2)] = parse_fields(m.group(3))
                if m.group(1) == "struct":
                    self.structs.add(m.group(2))
                continue
            m = re.match(r"\s*//\s+list (\w+): CHOICES of (.*)$", line)
            if m:  # "0=number DOUBLE, 1=point STRUCT Point, ..."
                self.lists[m.group(1)] = [(name.split("=", 1)[1], ftype) for name, ftype in parse_fields(m.group(2))]
                continue
            m = re.match(r"\s*//\s+(request|response|declared fault) \w+: (.*)$", line)
            if m:
                pending[m.group(1).split(" ")[-1]] = parse_fields(m.group(2))
                continue
            m = re.match(r"\s*service (\w+)\s*\{", line)
            if m:
                self.service = m.group(1)
                continue
            m = re.match(r"\s*rpc (\w+)\((stream )?([\w.]+)\) returns \((stream )?([\w.]+)\);", line)
            if m:
                self.streams[m.group(1)] = bool(m.group(2))
                self.messages[m.group(1)] = (m.group(3).split(".")[-1], m.group(5).split(".")[-1])
                self.ops[m.group(1)] = pending
                pending = {}
        self.node_numbers = {name: n for n, name in self.node_types.items()}
        if not self.service or not self.ops:
            raise ValueError("the .proto describes no Switchboard service (no rpc with its request and response lines)")


class Node:
    """A value of a linked (node table) type: its type name and its fields by name."""

    def __init__(self, type_name, **fields):
        self.type = type_name
        self.fields = fields

    def __repr__(self):
        return "Node(%s)" % self.type


class Packed:
    """A packed array kept as its raw little-endian bytes, so NaN payloads stay exact."""

    def __init__(self, kind, raw):
        self.kind, self.raw = kind, bytes(raw)

    @classmethod
    def of(cls, kind, values):
        return cls(kind, struct.pack("<%d%s" % (len(values), FIXED[kind]), *values))

    def __len__(self):
        return len(self.raw) // struct.calcsize(FIXED[self.kind])


# ---------------------------------------------------------------------------------------------
# Encoding


class Writer:
    def __init__(self, layout):
        self.layout = layout
        self.out = bytearray()
        self.index = {}  # id(node) -> position in the node table

    def varint(self, n):
        while True:
            b = n & 0x7F
            n >>= 7
            if n:
                self.out.append(b | 0x80)
            else:
                self.out.append(b)
                return

    def message(self, fields, values):
        """Node table (breadth first, no recursion, each node once), then the root's fields."""
        nodes = []

        def find_refs(ftype, value):
            stack = [(ftype, value)]
            while stack:
                t, v = stack.pop()
                if v is None:
                    continue
                if t.kind == "REF":
                    if id(v) not in self.index:
                        self.index[id(v)] = len(nodes)
                        nodes.append(v)
                elif t.kind == "STRUCT":
                    stack.extend((ft, v.get(n)) for n, ft in self.layout.types[t.target])
                elif t.kind == "LIST":
                    stack.extend((t.element, e) for e in v)

        for name, ftype in fields:
            find_refs(ftype, values.get(name))
        i = 0
        while i < len(nodes):  # the table is its own work queue
            for name, ftype in self.layout.types[nodes[i].type]:
                find_refs(ftype, nodes[i].fields.get(name))
            i += 1
        self.varint(len(nodes))
        for node in nodes:
            self.varint(self.layout.node_numbers[node.type])
        for node in nodes:
            self.fields(self.layout.types[node.type], node.fields)
        self.fields(fields, values)
        return bytes(self.out)

    def fields(self, fields, values):
        for name, ftype in fields:
            self.field(ftype, values.get(name), name)

    def field(self, t, v, name):
        if v is None:
            if not t.nullable:
                raise ValueError("field %s (%s) may not be null" % (name, t.text))
            self.out.append(TAGS["NULL"])
            return
        self.out.append(t.tag)
        if t.kind in FIXED:
            self.out += struct.pack("<" + FIXED[t.kind], v)
        elif t.kind in ("STRING", "BYTES"):
            data = v.encode("utf-8") if t.kind == "STRING" else bytes(v)
            self.varint(len(data))
            self.out += data
        elif t.kind == "DATE_TIME":  # (epoch seconds, nanoseconds, offset seconds)
            self.out += struct.pack("<qii", *v)
        elif t.kind == "STRUCT":
            self.fields(self.layout.types[t.target], v)
        elif t.kind == "REF":
            self.varint(self.index[id(v)])
        elif t.kind == "LIST":
            self.varint(len(v))
            for e in v:
                self.field(t.element, e, name + "[]")
        elif t.kind == "CHOICES":  # a heterogeneous list: [(alternative name, value)]
            alternatives = self.layout.lists[t.target]
            names = [a for a, _ in alternatives]
            self.varint(len(v))
            for alternative, e in v:
                self.varint(names.index(alternative))
                self.field(alternatives[names.index(alternative)][1], e, name + "[]")
        elif t.kind == "PACKED":
            p = v if isinstance(v, Packed) else Packed.of(t.packed, v)
            self.varint(len(p))
            self.out += p.raw


# ---------------------------------------------------------------------------------------------
# Decoding


class Reader:
    def __init__(self, layout, data):
        self.layout = layout
        self.data = memoryview(data)
        self.at = 0
        self.nodes = []
        self.depth = 0  # heterogeneous lists being read, one inside the other

    def take(self, n):
        if n < 0 or self.at + n > len(self.data):
            raise WireError("message ends early at byte %d (wanted %d more)" % (self.at, n))
        b = self.data[self.at: self.at + n]
        self.at += n
        return b

    def varint(self):
        n = shift = 0
        while True:
            b = self.take(1)[0]
            n |= (b & 0x7F) << shift
            if not b & 0x80:
                return n
            shift += 7
            if shift > 63:
                raise WireError("varint too long at byte %d" % self.at)

    def message(self, fields):
        count = self.varint()
        if count > len(self.data):
            raise WireError("node count %d exceeds the message" % count)
        types = [self.varint() for _ in range(count)]
        for t in types:
            if t not in self.layout.node_types:
                raise WireError("unknown node type %d" % t)
        # every node exists before any body is read, so references (and cycles) resolve at once
        self.nodes = [Node(self.layout.node_types[t]) for t in types]
        for node in self.nodes:
            node.fields = self.fields(self.layout.types[node.type])
        values = self.fields(fields)
        if self.at != len(self.data):
            raise WireError("%d bytes left after the message" % (len(self.data) - self.at))
        return values

    def fields(self, fields):
        return {name: self.field(ftype, name) for name, ftype in fields}

    def field(self, t, name):
        tag = self.take(1)[0]
        if tag == TAGS["NULL"]:
            if not t.nullable:
                raise WireError("field %s (%s) is null" % (name, t.text))
            return None
        if tag != t.tag:
            raise WireError("field %s (%s) has tag %d, expected %d" % (name, t.text, tag, t.tag))
        if t.kind in FIXED:
            code = "<" + FIXED[t.kind]
            raw = self.take(struct.calcsize(code))
            if t.kind == "BOOL" and raw[0] > 1:
                raise WireError("field %s: boolean byte %d" % (name, raw[0]))
            return struct.unpack(code, raw)[0]
        if t.kind == "STRING":
            return str(self.take(self.varint()), "utf-8")
        if t.kind == "BYTES":
            return bytes(self.take(self.varint()))
        if t.kind == "DATE_TIME":
            return struct.unpack("<qii", self.take(16))
        if t.kind == "STRUCT":
            return self.fields(self.layout.types[t.target])
        if t.kind == "REF":
            i = self.varint()
            if i >= len(self.nodes):
                raise WireError("field %s refers to node %d of %d" % (name, i, len(self.nodes)))
            return self.nodes[i]
        if t.kind == "LIST":
            return [self.field(t.element, name + "[]") for _ in range(self.varint())]
        if t.kind == "CHOICES":
            self.depth += 1
            if self.depth > MAX_LIST_DEPTH:
                raise WireError("field %s: lists nested deeper than %d" % (name, MAX_LIST_DEPTH))
            alternatives = self.layout.lists[t.target]
            items = []
            for _ in range(self.varint()):
                a = self.varint()
                if a >= len(alternatives):
                    raise WireError("field %s: alternative %d of %d" % (name, a, len(alternatives)))
                items.append((alternatives[a][0], self.field(alternatives[a][1], name + "[]")))
            self.depth -= 1
            return items
        if t.kind == "PACKED":
            n = self.varint()
            return Packed(t.packed, self.take(n * struct.calcsize(FIXED[t.packed])))
        raise WireError("cannot read " + t.text)


# ---------------------------------------------------------------------------------------------
# Exact comparison


def bits(kind, v):
    return struct.pack("<" + FIXED[kind], v)


def difference(layout, fields, sent, got):
    """None when ``got`` equals ``sent`` exactly (IEEE bits, node shape); else where they differ."""
    pairs = {}  # id(sent node) -> got node: the shapes must map one to one
    seen = set()
    stack = [(t, sent.get(n), got.get(n), n) for n, t in fields]
    while stack:
        t, a, b, path = stack.pop()
        if a is None or b is None:
            if a is not None or b is not None:
                return "%s: sent %s, got %s" % (path, "null" if a is None else "a value", "null" if b is None else "a value")
            continue
        if t.kind in ("FLOAT", "DOUBLE"):
            if bits(t.kind, a) != bits(t.kind, b):
                return "%s: sent bits 0x%s, got 0x%s" % (path, bits(t.kind, a)[::-1].hex(), bits(t.kind, b)[::-1].hex())
        elif t.kind == "PACKED":
            raw_a = a.raw if isinstance(a, Packed) else Packed.of(t.packed, a).raw
            if raw_a != b.raw:
                size = struct.calcsize(FIXED[t.packed])
                first = next((i for i in range(0, min(len(raw_a), len(b.raw)), size)
                              if raw_a[i:i + size] != b.raw[i:i + size]), min(len(raw_a), len(b.raw)))
                return "%s: %d values sent, %d got, first difference at index %d" % (
                    path, len(raw_a) // size, len(b.raw) // size, first // size)
        elif t.kind == "STRUCT":
            stack.extend((ft, a.get(n), b.get(n), path + "." + n) for n, ft in layout.types[t.target])
        elif t.kind == "LIST":
            if len(a) != len(b):
                return "%s: %d elements sent, %d got" % (path, len(a), len(b))
            stack.extend((t.element, x, y, "%s[%d]" % (path, i)) for i, (x, y) in enumerate(zip(a, b)))
        elif t.kind == "CHOICES":
            if [x for x, _ in a] != [y for y, _ in b]:
                return "%s: alternatives sent %s, got %s" % (path, [x for x, _ in a], [y for y, _ in b])
            types = dict(layout.lists[t.target])
            stack.extend((types[x], v, w, "%s[%d]" % (path, i)) for i, ((x, v), (_, w)) in enumerate(zip(a, b)))
        elif t.kind == "REF":
            if id(a) in pairs:
                if pairs[id(a)] is not b:
                    return "%s: a node sent once came back as two different nodes" % path
                continue
            if id(b) in seen:
                return "%s: two different nodes sent came back as one" % path
            pairs[id(a)] = b
            seen.add(id(b))
            # nodes are named by the order this walk meets them, so paths stay short on long lists
            where = "%s node %d" % (a.type, len(pairs) - 1)
            stack.extend((ft, a.fields.get(n), b.fields.get(n), where + "." + n)
                         for n, ft in layout.types[a.type])
        elif a != b or type(a) is not type(b):
            return "%s: sent %r, got %r" % (path, a, b)
    return None


# ---------------------------------------------------------------------------------------------
# The generated stub, and one call


def generate_stub(proto_path, workdir):
    """protoc --python_out --grpc_python_out on the .proto; returns (pb2 module, pb2_grpc module)."""
    from grpc_tools import protoc
    import grpc_tools

    proto_dir = os.path.dirname(os.path.abspath(proto_path))
    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    rc = protoc.main(["protoc", "-I" + proto_dir, "-I" + well_known, "--python_out=" + workdir,
                      "--grpc_python_out=" + workdir, os.path.abspath(proto_path)])
    if rc != 0:
        raise RuntimeError("protoc failed on %s (exit %d)" % (proto_path, rc))
    module = os.path.splitext(os.path.basename(proto_path))[0]
    sys.path.insert(0, workdir)
    return importlib.import_module(module + "_pb2"), importlib.import_module(module + "_pb2_grpc")


NODES, NULLS = "sb_nodes", "sb_nulls"


class Typed:
    """Values of the layout (dicts, Node, Packed, lists of (alternative, value)) -> typed protobuf messages."""

    def __init__(self, layout, pb2):
        self.layout, self.pb2 = layout, pb2

    def message(self, name, fields, values):
        msg = getattr(self.pb2, name)()
        self.numbers, self.order = {}, []
        self.collect(fields, values)
        self.fill(msg, fields, values)
        for node in self.order:
            self.fill(getattr(msg, NODES).add(), self.layout.types[node.type], node.fields)
        return msg

    def collect(self, fields, values):
        """Numbers the linked nodes breadth first: the message's references, then each node's in turn."""
        def refs(fields, values):
            for name, t in fields:
                v = values.get(name)
                if t.kind == "REF" and v is not None and id(v) not in self.numbers:
                    self.numbers[id(v)] = len(self.order) + 1
                    self.order.append(v)
                elif t.kind == "STRUCT" and v is not None and t.target not in self.layout.node_numbers:
                    refs(self.layout.types[t.target], v)
        refs(fields, values)
        i = 0
        while i < len(self.order):
            node = self.order[i]
            refs(self.layout.types[node.type], node.fields)
            i += 1

    def fill(self, msg, fields, values):
        for number, (name, t) in enumerate(fields, 1):
            v = values.get(name)
            if v is None:
                if t.kind in ("PACKED", "LIST") and not (t.kind == "PACKED" and t.packed == "BYTE"):
                    getattr(msg, NULLS).lists.append(number)
                continue
            self.set(msg, name, number, t, v)

    def set(self, msg, name, number, t, v):
        if t.kind == "PACKED":
            if t.packed == "BYTE":
                setattr(msg, name, v.raw if isinstance(v, Packed) else bytes(b & 0xFF for b in v))
                return
            if isinstance(v, Packed):
                v = list(struct.unpack("<%d%s" % (len(v), FIXED[v.kind]), v.raw))
            getattr(msg, name).extend(v)
        elif t.kind == "LIST":
            target = getattr(msg, name)
            for i, e in enumerate(v):
                if e is None:
                    nulls = getattr(msg, NULLS)
                    if not nulls.elements or nulls.elements[-1].field != number:
                        nulls.elements.add(field=number)
                    nulls.elements[-1].positions.append(i)
                self.element(target, t.element, e)
        elif t.kind == "REF":
            setattr(msg, name, self.numbers[id(v)])
        elif t.kind in ("STRUCT", "CHOICES"):
            self.nested(msg, name, t, v)
        elif t.kind == "DATE_TIME":
            raise ValueError("date-times are not among this client's cases")
        else:
            setattr(msg, name, v)

    def element(self, target, t, e):
        """Appends one element of a repeated field; null as the default value (sb_nulls says so)."""
        if t.kind in ("STRUCT", "CHOICES"):
            sub = target.add()
            if e is not None:
                (self.fill(sub, self.layout.types[t.target], e) if t.kind == "STRUCT" else self.choices(sub, t.target, e))
        else:
            target.append(e if e is not None else ("" if t.kind == "STRING" else b""))

    def choices(self, msg, list_type, items):
        alternatives = dict(self.layout.lists[list_type])
        for alternative, value in items:
            el = msg.elements.add()
            t = alternatives[alternative]
            if t.kind in ("STRUCT", "CHOICES"):
                self.nested(el, alternative, t, value)
            else:
                setattr(el, alternative, value)

    def nested(self, msg, name, t, v):
        """A struct or list field: present (even when empty), then its content."""
        sub = getattr(msg, name)
        sub.SetInParent()
        if t.kind == "STRUCT":
            self.fill(sub, self.layout.types[t.target], v)
        else:
            self.choices(sub, t.target, v)


def parts(message, count):
    """The message as about ``count`` partial messages whose merge in order is the message: the
    singular fields in the first, each repeated field cut into slices across the others."""
    first = type(message)()
    pieces = [first]
    for field, value in message.ListFields():
        repeated = field.is_repeated if hasattr(field, "is_repeated") else field.label == field.LABEL_REPEATED
        if not repeated:
            if field.message_type is not None:
                getattr(first, field.name).CopyFrom(value)
            else:
                setattr(first, field.name, value)
            continue
        step = max(1, -(-len(value) // count))
        for k, at in enumerate(range(0, len(value), step)):
            while len(pieces) <= k + 1:
                pieces.append(type(message)())
            getattr(pieces[k + 1], field.name).extend(value[at:at + step])
    return pieces


def call(stub, pb2, layout, op, values, pieces_per_request, timeout):
    """Builds the typed request, sends it (in parts when the method streams), merges the response.
    Returns (request, response, sizes)."""
    spec = layout.ops[op]
    request_name, response_name = layout.messages[op]
    request = Typed(layout, pb2).message(request_name, spec["request"], values)
    response = getattr(pb2, response_name)()
    if layout.streams[op]:
        sent = parts(request, pieces_per_request)
        received = list(getattr(stub, op)(iter(sent), timeout=timeout))
        for part in received:
            response.MergeFrom(part)
    else:
        sent = [request]
        received = [getattr(stub, op)(request, timeout=timeout)]
        response = received[0]
    return request, response, {"request_bytes": request.ByteSize(), "parts_sent": len(sent),
                               "response_bytes": response.ByteSize(), "parts_received": len(received)}


# ---------------------------------------------------------------------------------------------
# The cases


def double_bits(*patterns):
    return Packed("DOUBLE", b"".join(struct.pack("<Q", p) for p in patterns))


def link(i, **overrides):
    fields = dict(llong=i, sshort=i % 32768, iint=-i, ffloat=i / 4.0, ddouble=i * 1.5, sstring="n%d" % i,
                  nextLink=None)
    fields.update(overrides)
    return Node("LinkEntry", **fields)


def chain(n):
    nodes = [link(i) for i in range(n)]
    for a, b in zip(nodes, nodes[1:]):
        a.fields["nextLink"] = b
    return nodes[0] if nodes else None


def cases(args):
    rnd = random.Random(2000)  # fixed seed: the same bits every run
    edge = [float("nan"), -0.0, float("inf"), float("-inf"), 5e-324, 1.5, 0.0, -5e-324,
            1.7976931348623157e308, -2.2250738585072014e-308]
    # a cycle of three nodes with extreme values, a null string, an empty one and non-ASCII text
    a = link(0, llong=2 ** 63 - 1, sshort=-32768, iint=-2 ** 31, ffloat=-0.0, ddouble=float("nan"),
             sstring="h\u00e9llo \u2713 \U0001d11e")
    b = link(1, llong=-2 ** 63, sshort=32767, iint=2 ** 31 - 1, ffloat=float("inf"), ddouble=-0.0, sstring=None)
    c = link(2, ffloat=float("nan"), ddouble=5e-324, sstring="")
    a.fields["nextLink"], b.fields["nextLink"], c.fields["nextLink"] = b, c, a
    d, l, e = args.doubles_op, args.list_op, args.empty_op
    return [
        ("doubles_edge", d, {"values": edge}),
        ("doubles_nan_payloads", d, {"values": double_bits(0x7FF0000000000001, 0x7FF8000000000ABC,
                                                           0xFFF0000000123456, 0xFFF8000000000000)}),
        ("doubles_empty", d, {"values": []}),
        ("doubles_null", d, {"values": None}),
        ("doubles_100k_random_bits", d, {"values": Packed("DOUBLE", rnd.randbytes(8 * 100_000))}),
        ("list_cycle_of_3", l, {"head": a}),
        ("list_single", l, {"head": link(7, sstring=None)}),
        ("list_null", l, {"head": None}),
        ("list_10k_nodes", l, {"head": chain(10_000)}),
        ("empty", e, {}),
    ] + ([] if args.mixed_op is None else [
        # a heterogeneous list: every scalar kind, a struct, an empty and a nested list
        ("mixed_nested", args.mixed_op, {"list": [
            ("number", float("nan")), ("number", -0.0), ("integer", -2 ** 63), ("flag", True), ("text", "\u2713"),
            ("bytes", bytes(range(256))), ("point", {"x": -0.0, "y": float("inf")}), ("list", []),
            ("list", [("text", "inner"), ("list", [("integer", 7)])]),
            ("labelled", {"label": "l", "content": [("number", 1.5)]})], "more": None}),
        ("mixed_empty_and_null", args.mixed_op, {"list": [], "more": [None, []]}),
    ])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--proto", required=True, help="the component's generated .proto")
    parser.add_argument("--target", required=True, help="gRPC endpoint host:port")
    parser.add_argument("--doubles-op", default="echoDoubles")
    parser.add_argument("--list-op", default="echoList")
    parser.add_argument("--empty-op", default="empty")
    parser.add_argument("--mixed-op", default=None,
                        help="an operation that echoes a heterogeneous list field `list` (and a repeated one, `more`)")
    parser.add_argument("--parts", type=int, default=7,
                        help="cut the request of a streaming method into about this many partial messages")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per call")
    args = parser.parse_args()

    import grpc

    with open(args.proto, encoding="utf-8") as f:
        layout = Layout(f.read())
    for op in (args.doubles_op, args.list_op, args.empty_op) + ((args.mixed_op,) if args.mixed_op else ()):
        if op not in layout.ops:
            parser.error("the .proto has no rpc %s (it has: %s)" % (op, ", ".join(layout.ops)))
    workdir = tempfile.mkdtemp(prefix="switchboard-py-stub-")
    try:
        pb2, pb2_grpc = generate_stub(args.proto, workdir)
        results = run_cases(pb2, pb2_grpc, layout, args.target, cases(args), args.parts, args.timeout)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    head = {"service": layout.service, "proto": os.path.basename(args.proto), "target": args.target,
            "python": sys.version.split()[0], "grpcio": grpc.__version__}
    return print_report(head, results)


def run_cases(pb2, pb2_grpc, layout, target, case_list, chunk_bytes, timeout):
    """Calls each (name, operation, values) case over one channel; a result dict per case."""
    import grpc

    results = []
    with grpc.insecure_channel(target) as channel:
        stub = getattr(pb2_grpc, layout.service + "Stub")(channel)
        for name, op, values in case_list:
            result = {"name": name, "operation": op, "ok": False, "protocol": "grpc"}
            started = time.monotonic()
            try:
                request, got, sizes = call(stub, pb2, layout, op, values, chunk_bytes, timeout)
                # an echo answers its request's fields: the same bytes, as the response message
                expected = type(got).FromString(request.SerializeToString())
                same = got.SerializeToString(deterministic=True) == expected.SerializeToString(deterministic=True)
                result["ok"] = same
                result.update(sizes)
                if not same:
                    result["detail"] = "sent %r, got %r" % (expected, got)
            except grpc.RpcError as e:
                result["detail"] = "gRPC status %s: %s" % (e.code().name, e.details())
            except (WireError, ValueError) as e:
                result["detail"] = "%s: %s" % (type(e).__name__, e)
            result["ms"] = round((time.monotonic() - started) * 1000, 1)
            results.append(result)
    return results


def print_report(head, results):
    """Prints head plus the cases as JSON, one case per line; returns the exit code (0: all matched)."""
    failed = sum(not r["ok"] for r in results)
    head = dict(head, cases_run=len(results), cases_failed=failed, all_ok=failed == 0 and bool(results))
    # valid JSON with one case per line, so that a person (or a test) can read it line by line
    lines = ["  " + json.dumps(r) for r in results]
    print(json.dumps(head)[:-1] + ', "cases": [\n' + ",\n".join(lines) + "\n]}")
    return 0 if head["all_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
