"""Python values <-> the typed protobuf messages of a component, exact or refused.

Numbers: a Python ``int`` for the integer types, checked against the schema type's range (a byte of
300 is refused, as on the Java side); ``float`` for float and double (a float field takes the
nearest float32; one too large for float32 is refused); ``bool`` only for booleans. Arrays of numbers
are lists, tuples or numpy arrays (a numpy array in gives numpy arrays back); ``None`` is null, ``[]``
empty. Strings must be text XML can carry (no lone surrogates, no control characters but tab, LF and
CR), as the Java side requires. A struct is a dict or any object with the fields as attributes; the
values that come back are ``Record``s of the schema type. Linked values (lists, trees, cycles, shared
nodes) travel in the message's node table, each object once: identity is kept both ways."""

import array
import datetime
import struct
import sys

from google.protobuf.descriptor import FieldDescriptor as F

from ._schema import NODES, NULLS, real_oneof
from ._wire import varint
from .errors import Refused

try:
    import numpy
except ImportError:  # numpy is optional
    numpy = None

RANGES = {"BYTE": 8, "SHORT": 16, "INT": 32, "LONG": 64}
PACKED = {F.TYPE_DOUBLE: "d", F.TYPE_FLOAT: "f", F.TYPE_SFIXED32: "i", F.TYPE_SFIXED64: "q"}
NUMPY_DTYPES = {F.TYPE_DOUBLE: "<f8", F.TYPE_FLOAT: "<f4", F.TYPE_SFIXED32: "<i4", F.TYPE_SFIXED64: "<i8",
                F.TYPE_INT32: "<i4", F.TYPE_INT64: "<i8", F.TYPE_BOOL: "?"}
INTEGERS = (F.TYPE_INT32, F.TYPE_INT64, F.TYPE_SFIXED32, F.TYPE_SFIXED64)
FLOATS = (F.TYPE_DOUBLE, F.TYPE_FLOAT)
MAX_DEPTH = 64
_LITTLE = sys.byteorder == "little"


class Record:
    """A value of a schema type (or a response of several fields): its fields as attributes."""

    _type = "Record"
    _fields = ()

    def __init__(self, **fields):
        for name in self._fields:
            object.__setattr__(self, name, None)
        for name, value in fields.items():
            if self._fields and name not in self._fields:
                raise TypeError("%s has no field %r (fields: %s)" % (self._type, name, ", ".join(self._fields)))
            object.__setattr__(self, name, value)

    def __repr__(self):
        # a linked value may be long or cyclic: show the fields, with linked records by type only
        parts = []
        for name in self._fields:
            v = getattr(self, name, None)
            parts.append("%s=%s" % (name, "<%s>" % v._type if isinstance(v, Record) and v._linked else repr(v)))
        return "%s(%s)" % (self._type, ", ".join(parts))

    _linked = False


def record_class(name, field_names, linked=False):
    return type(name, (Record,), {"_type": name, "_fields": tuple(field_names), "_linked": linked,
                                  "__module__": "switchboard.types", "__slots__": ()})


class Types:
    """The record classes of one interface, by schema type name: ``types.LinkEntry(llong=1, ...)``."""

    def __init__(self, iface):
        self._iface = iface
        self._classes = {}
        for message in iface.pool.FindFileContainingSymbol(iface.service.full_name).message_types_by_name.values():
            self.of(message)

    def of(self, descriptor):
        cls = self._classes.get(descriptor.name)
        if cls is None:
            linked = _is_node(self._iface, descriptor)
            cls = self._classes[descriptor.name] = record_class(
                descriptor.name, [f.name for f in descriptor.fields if f.name not in (NODES, NULLS)], linked)
        return cls

    def __getattr__(self, name):
        try:
            return self._classes[name]
        except KeyError:
            raise AttributeError("the interface has no type %r" % name) from None

    def __dir__(self):
        return sorted(self._classes)


def _is_node(iface, descriptor):
    return any(f.name == NODES and f.message_type.name == descriptor.name
               for m in iface.pool.FindFileContainingSymbol(iface.service.full_name).message_types_by_name.values()
               for f in m.fields)


def _field_value(value, name):
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


def is_ndarray(value):
    return numpy is not None and isinstance(value, numpy.ndarray)


def check_text(text, where):
    if not isinstance(text, str):
        raise Refused("malformed", "a string is needed, not %s" % type(text).__name__, where)
    for ch in text:
        o = ord(ch)
        if (o < 0x20 and ch not in "\t\n\r") or 0xD800 <= o <= 0xDFFF or o in (0xFFFE, 0xFFFF):
            raise Refused("malformed", "U+%04X cannot travel (XML cannot carry it)" % o, where)
    return text


def check_int(value, kind, where):
    if isinstance(value, bool) or not (isinstance(value, int) or (numpy is not None and isinstance(value, numpy.integer))):
        raise Refused("malformed", "an integer is needed, not %r" % (value,), where)
    value = int(value)
    bits = RANGES.get(kind.split("|")[0].replace("PACKED_", ""), 64)
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise Refused("malformed", "%d is out of range for %s" % (value, kind.split("|")[0].lower()), where)
    return value


def check_float(value, field_type, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not (
            numpy is not None and isinstance(value, (numpy.floating, numpy.integer))):
        raise Refused("malformed", "a number is needed, not %r" % (value,), where)
    if isinstance(value, int) or (numpy is not None and isinstance(value, numpy.integer)):
        if float(int(value)) != int(value):
            raise Refused("malformed", "%d has no exact double" % int(value), where)
    value = float(value)
    if field_type == F.TYPE_FLOAT:
        try:
            value = struct.unpack("<f", struct.pack("<f", value))[0]
        except OverflowError:
            raise Refused("malformed", "%r is out of range for float" % value, where) from None
    return value


class Encoder:
    """Writes one operation message from Python values; its linked values go into its node table."""

    def __init__(self, iface, top):
        self.iface = iface
        self.top_class = iface.message_class(top)
        self.nodes_field = top.fields_by_name.get(NODES)
        self.numbers = {}
        self.pending = []
        self.saw_numpy = False

    def encode(self, values, where_prefix=""):
        message = self.top_class()
        self.fill(message, values, 0)
        # breadth first from the message: each node is written after the nodes that reached it
        i = 0
        while i < len(self.pending):
            value, type_name = self.pending[i]
            entry = getattr(message, NODES).add()
            node = entry
            if entry.DESCRIPTOR.name != type_name:   # a Node holding one of several linked types
                node = getattr(entry, next(f.name for f in entry.DESCRIPTOR.fields
                                           if f.message_type is not None and f.message_type.name == type_name))
            self.fill(node, value, 0)
            i += 1
        return message

    def fill(self, message, value, depth):
        d = message.DESCRIPTOR
        for f in d.fields:
            if f.name in (NODES, NULLS):
                continue
            self.set(message, f, _field_value(value, f.name), depth)

    def node_number(self, value, type_name, where):
        if value is None:
            return 0
        key = id(value)
        n = self.numbers.get(key)
        if n is None:
            if self.nodes_field is None:
                raise Refused("malformed", "a linked value where the message has no node table", where)
            self.pending.append((value, type_name))
            n = self.numbers[key] = len(self.pending)
        return n

    def nulls(self, message):
        return getattr(message, NULLS)

    def set(self, message, f, v, depth):
        d = message.DESCRIPTOR
        where = "%s.%s" % (d.name, f.name)
        kind = self.iface.kind(d, f.name)
        if f.is_repeated:
            if v is None:
                self.nulls(message).lists.append(f.number)
                return
            if isinstance(v, (str, bytes, dict)):
                raise Refused("malformed", "a sequence is needed, not %s" % type(v).__name__, where)
            if f.type in PACKED or f.type in (F.TYPE_INT32, F.TYPE_INT64, F.TYPE_BOOL):
                self.packed(message, f, kind, v, where)
                return
            target = getattr(message, f.name)
            nulls = []
            for i, item in enumerate(v):
                if item is None:
                    nulls.append(i)
                    if f.message_type is not None:
                        target.add()
                    else:
                        target.append("" if f.type == F.TYPE_STRING else b"" if f.type == F.TYPE_BYTES else 0)
                    continue
                if f.message_type is not None:
                    self.struct(target.add(), item, depth + 1, where)
                else:
                    target.append(self.scalar(f, kind, item, where))
            if nulls:
                self.nulls(message).elements.add(field=f.number, positions=nulls)
            return
        if v is None:
            if f.message_type is None and not f.has_presence and not kind.startswith("REF") and f.type != F.TYPE_UINT32:
                raise Refused("malformed", "a value is required", where)
            return
        if kind.startswith("REF") or (f.type == F.TYPE_UINT32 and f.message_type is None):
            type_name = kind.split(" ")[1].split("|")[0] if kind.startswith("REF") else None
            if type_name is None:
                raise Refused("malformed", "cannot tell the linked type", where)
            setattr(message, f.name, self.node_number(v, type_name, where))
            return
        if f.message_type is not None:
            self.struct(getattr(message, f.name), v, depth + 1, where)
            return
        setattr(message, f.name, self.scalar(f, kind, v, where))

    def scalar(self, f, kind, v, where):
        if f.type == F.TYPE_STRING:
            return check_text(v, where)
        if f.type == F.TYPE_BYTES:
            if not isinstance(v, (bytes, bytearray, memoryview)):
                raise Refused("malformed", "bytes are needed, not %s" % type(v).__name__, where)
            return bytes(v)
        if f.type == F.TYPE_BOOL:
            if not isinstance(v, bool) and not (numpy is not None and isinstance(v, numpy.bool_)):
                raise Refused("malformed", "a bool is needed, not %r" % (v,), where)
            return bool(v)
        if f.type in FLOATS:
            return check_float(v, f.type, where)
        return check_int(v, kind or ("INT" if f.type in (F.TYPE_INT32, F.TYPE_SFIXED32) else "LONG"), where)

    def packed(self, message, f, kind, v, where):
        if is_ndarray(v):
            self.saw_numpy = True
            if v.ndim != 1:
                raise Refused("malformed", "a one-dimensional array is needed, not shape %s" % (v.shape,), where)
            dtype = NUMPY_DTYPES[f.type]
            if f.type in FLOATS:
                if v.dtype.kind not in "fiu":
                    raise Refused("malformed", "an array of numbers is needed, not %s" % v.dtype, where)
                data = v.astype(dtype, copy=False)
            else:
                if v.dtype.kind not in ("b" if f.type == F.TYPE_BOOL else "iu"):
                    raise Refused("malformed", "an array of %s is needed, not %s" % (
                        "booleans" if f.type == F.TYPE_BOOL else "integers", v.dtype), where)
                if len(v) and f.type != F.TYPE_BOOL:
                    check_int(int(v.min()), kind, where)
                    check_int(int(v.max()), kind, where)
                data = v.astype(dtype, copy=False)
            if f.type in PACKED:
                self.merge_packed(message, f, numpy.ascontiguousarray(data).tobytes())
            else:
                getattr(message, f.name).extend(data.tolist())
            return
        values = list(v)
        if f.type in PACKED:
            if f.type in FLOATS:
                values = [check_float(x, f.type, where) for x in values] if not all(
                    type(x) is float for x in values) else values
            else:
                values = [check_int(x, kind, where) for x in values]
            raw = array.array(PACKED[f.type], values)
            if not _LITTLE:
                raw.byteswap()
            self.merge_packed(message, f, raw.tobytes())
        elif f.type == F.TYPE_BOOL:
            getattr(message, f.name).extend(self.scalar(f, kind, x, where) for x in values)
        else:
            getattr(message, f.name).extend(check_int(x, kind, where) for x in values)

    @staticmethod
    def merge_packed(message, f, raw):
        """A packed field from its raw little-endian values: one copy, no per-element work."""
        if raw:
            message.MergeFromString(varint(f.number << 3 | 2) + varint(len(raw)) + raw)

    def struct(self, message, v, depth, where):
        if depth > 2 * MAX_DEPTH:
            raise Refused("depth-limit", "values nest more than %d deep" % MAX_DEPTH, where)
        name = message.DESCRIPTOR.name
        if name == "DateTime" and isinstance(v, datetime.datetime):
            self.date_time(message, v, where)
            return
        fields = message.DESCRIPTOR.fields_by_name
        if "elements" in fields and fields["elements"].message_type is not None and \
                real_oneof(fields["elements"].message_type) is not None:
            self.choices(message, v, depth, where)
            return
        if is_ndarray(v) and "shape" in fields and "values" in fields:
            self.saw_numpy = True
            self.packed(message, fields["shape"], "PACKED_INT", numpy.asarray(v.shape, dtype="<i4"), where)
            self.packed(message, fields["values"], self.iface.kind(message.DESCRIPTOR, "values"), v.reshape(-1), where)
            return
        if isinstance(v, (int, float, str, bytes, list, tuple)):
            raise Refused("malformed", "a %s (a dict or an object with its fields) is needed, not %s"
                          % (name, type(v).__name__), where)
        self.fill(message, v, depth)
        message.SetInParent()

    def choices(self, message, v, depth, where):
        if depth > 2 * MAX_DEPTH:
            raise Refused("depth-limit", "lists nest more than %d deep" % MAX_DEPTH, where)
        if isinstance(v, (str, bytes, dict)) or not hasattr(v, "__iter__"):
            raise Refused("malformed", "a list is needed, not %s" % type(v).__name__, where)
        message.SetInParent()
        element_fields = message.DESCRIPTOR.fields_by_name["elements"].message_type.fields
        for item in v:
            element = message.elements.add()
            chosen = self.alternative(element_fields, item)
            if chosen is None:
                raise Refused("malformed", "no alternative of %s takes a %s" % (
                    message.DESCRIPTOR.name, type(item).__name__), where)
            if chosen.message_type is not None:
                self.struct(getattr(element, chosen.name), item, depth + 1, where)
            else:
                setattr(element, chosen.name, self.scalar(chosen, self.iface.kind(element.DESCRIPTOR, chosen.name)
                                                          or "", item, where))

    @staticmethod
    def alternative(fields, item):
        """The oneof alternative a Python value takes: by its type, in schema order."""
        def first(pred):
            return next((f for f in fields if pred(f)), None)
        if item is None:
            return None
        if isinstance(item, bool) or (numpy is not None and isinstance(item, numpy.bool_)):
            return first(lambda f: f.type == F.TYPE_BOOL)
        if isinstance(item, int) or (numpy is not None and isinstance(item, numpy.integer)):
            return first(lambda f: f.type in INTEGERS) or first(lambda f: f.type in FLOATS)
        if isinstance(item, float) or (numpy is not None and isinstance(item, numpy.floating)):
            return first(lambda f: f.type in FLOATS)
        if isinstance(item, str):
            return first(lambda f: f.type == F.TYPE_STRING)
        if isinstance(item, (bytes, bytearray)):
            return first(lambda f: f.type == F.TYPE_BYTES)
        if isinstance(item, datetime.datetime):
            return first(lambda f: f.message_type is not None and f.message_type.name == "DateTime")
        if is_ndarray(item) and item.ndim != 1 or isinstance(item, Record) and set(item._fields) >= {"shape", "values"}:
            return first(lambda f: f.message_type is not None and "shape" in f.message_type.fields_by_name)
        if isinstance(item, Record):
            return first(lambda f: f.message_type is not None and f.message_type.name == item._type)
        if isinstance(item, (list, tuple)) or is_ndarray(item):
            return first(lambda f: f.message_type is not None and "elements" in f.message_type.fields_by_name)
        return None

    @staticmethod
    def date_time(message, v, where):
        if v.tzinfo is None or v.utcoffset() is None:
            raise Refused("malformed", "a date-time needs its offset from UTC (an aware datetime)", where)
        offset = v.utcoffset()
        if offset.microseconds or offset.seconds % 60:
            raise Refused("malformed", "the offset must be whole minutes", where)
        epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        delta = v - epoch
        seconds = delta.days * 86400 + delta.seconds
        message.seconds, message.nanos = seconds, delta.microseconds * 1000
        message.offset_seconds = int(offset.total_seconds())


class Decoder:
    """Reads an operation message into Python values; numpy arrays for packed numbers if asked."""

    def __init__(self, iface, types, use_numpy=False):
        self.iface, self.types = iface, types
        self.use_numpy = use_numpy and numpy is not None
        self.nodes = []
        self.top, self.raw, self.segments = None, None, {}

    def decode(self, message, raw=None):
        """The fields of an operation message; given its bytes (a bytearray), its packed
        fixed-width arrays become numpy arrays over those bytes, without a copy."""
        if raw is not None and self.use_numpy and isinstance(raw, bytearray) and _LITTLE:
            self.top, self.raw, self.segments = message, raw, _packed_segments(raw, message.DESCRIPTOR)
        table = getattr(message, NODES, None) if NODES in message.DESCRIPTOR.fields_by_name else None
        if table:
            entries = []
            for entry in table:
                node = entry
                if real_oneof(entry.DESCRIPTOR) is not None:   # a Node holding one of several linked types
                    which = entry.WhichOneof(real_oneof(entry.DESCRIPTOR).name)
                    if which is None:
                        raise Refused("malformed", "a node with no type set", entry.DESCRIPTOR.name)
                    node = getattr(entry, which)
                entries.append(node)
            self.nodes = [self.types.of(n.DESCRIPTOR)() for n in entries]
            for record, node in zip(self.nodes, entries):
                self.fill(record, node, 0)
        return self.fields(message, 0)

    def fields(self, message, depth):
        out = {}
        nulls = getattr(message, NULLS) if NULLS in message.DESCRIPTOR.fields_by_name else None
        null_lists = set(nulls.lists) if nulls is not None else ()
        null_elements = {e.field: set(e.positions) for e in nulls.elements} if nulls is not None else {}
        for f in message.DESCRIPTOR.fields:
            if f.name in (NODES, NULLS):
                continue
            out[f.name] = self.value(message, f, null_lists, null_elements, depth)
        return out

    def fill(self, record, message, depth):
        for name, value in self.fields(message, depth).items():
            object.__setattr__(record, name, value)
        return record

    def value(self, message, f, null_lists, null_elements, depth):
        where = "%s.%s" % (message.DESCRIPTOR.name, f.name)
        kind = self.iface.kind(message.DESCRIPTOR, f.name)
        if f.is_repeated:
            if f.number in null_lists:
                return None
            items = getattr(message, f.name)
            if f.message_type is None and f.type not in (F.TYPE_STRING, F.TYPE_BYTES):
                if message is self.top and f.number in self.segments:
                    views = [numpy.frombuffer(self.raw, dtype=NUMPY_DTYPES[f.type], count=n // WIDTHS[f.type],
                                              offset=at) for at, n in self.segments[f.number]]
                    return views[0] if len(views) == 1 else numpy.concatenate(views)
                if self.use_numpy:
                    return numpy.array(items, dtype=NUMPY_DTYPES[f.type].replace("<", "="))
                return list(items)
            nulls = null_elements.get(f.number, ())
            return [None if i in nulls else self.struct(x, depth + 1, where) if f.message_type is not None else x
                    for i, x in enumerate(items)]
        if kind.startswith("REF") or (f.type == F.TYPE_UINT32 and f.message_type is None):
            n = getattr(message, f.name)
            if n == 0:
                return None
            if n > len(self.nodes):
                raise Refused("malformed", "node %d is past the node table (%d)" % (n, len(self.nodes)), where)
            return self.nodes[n - 1]
        if f.message_type is not None:
            if not message.HasField(f.name):
                return None
            return self.struct(getattr(message, f.name), depth + 1, where)
        if f.has_presence and not message.HasField(f.name):
            return None
        return getattr(message, f.name)

    def struct(self, message, depth, where):
        if depth > 2 * MAX_DEPTH:
            raise Refused("depth-limit", "values nest more than %d deep" % MAX_DEPTH, where)
        d = message.DESCRIPTOR
        if d.name == "DateTime" and "offset_seconds" in d.fields_by_name:
            tz = datetime.timezone(datetime.timedelta(seconds=message.offset_seconds))
            return datetime.datetime.fromtimestamp(message.seconds, tz).replace(microsecond=message.nanos // 1000)
        if "elements" in d.fields_by_name and d.fields_by_name["elements"].message_type is not None and \
                real_oneof(d.fields_by_name["elements"].message_type) is not None:
            out = []
            for element in message.elements:
                which = element.WhichOneof(real_oneof(element.DESCRIPTOR).name)
                if which is None:
                    raise Refused("malformed", "a list element with no alternative set", where)
                v = getattr(element, which)
                field = element.DESCRIPTOR.fields_by_name[which]
                out.append(self.struct(v, depth + 1, where) if field.message_type is not None else v)
            return out
        values = self.fields(message, depth)
        if self.use_numpy and set(values) == {"shape", "values"} and values["shape"] is not None \
                and values["values"] is not None:
            shape = tuple(int(x) for x in values["shape"])
            if int(numpy.prod(shape, dtype=numpy.int64)) != len(values["values"]):
                raise Refused("malformed", "shape %s does not match %d values" % (shape, len(values["values"])), where)
            return values["values"].reshape(shape)
        record = self.types.of(d)()
        for name, value in values.items():
            object.__setattr__(record, name, value)
        return record


WIDTHS = {F.TYPE_DOUBLE: 8, F.TYPE_FLOAT: 4, F.TYPE_SFIXED32: 4, F.TYPE_SFIXED64: 8}


def _packed_segments(raw, descriptor):
    """{field number: [(offset, length), ...]} of the message's top-level packed fixed-width arrays,
    as they lie in ``raw`` (one segment per part the message came in). A field that also appears
    unpacked, or whose length is no multiple of its width, is left out (read the usual way)."""
    from ._wire import read_varint

    fixed = {f.number: WIDTHS[f.type] for f in descriptor.fields
             if f.is_repeated and f.message_type is None and f.type in WIDTHS}
    segments, spoilt, i = {}, set(), 0
    try:
        while i < len(raw):
            key, i = read_varint(raw, i)
            number, wire = key >> 3, key & 7
            if wire == 2:
                n, i = read_varint(raw, i)
                if number in fixed:
                    if n % fixed[number]:
                        spoilt.add(number)
                    segments.setdefault(number, []).append((i, n))
                i += n
            elif wire == 0:
                _, i = read_varint(raw, i)
            elif wire in (1, 5):
                spoilt.add(number)
                i += 8 if wire == 1 else 4
            else:
                return {}
    except ValueError:
        return {}
    if i != len(raw):
        return {}
    return {k: v for k, v in segments.items() if k not in spoilt}


def unwrap(values, response_class, types):
    """A response of one field is that field's value; of none, None; of several, a record."""
    if not values:
        return None
    if len(values) == 1:
        return next(iter(values.values()))
    record = types.of(response_class.DESCRIPTOR)()
    for name, value in values.items():
        object.__setattr__(record, name, value)
    return record
