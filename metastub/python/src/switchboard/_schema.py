"""A component's interface, read at run time from its typed ``.proto`` (the registry entry's
PROTO document): the message classes, made in a descriptor pool of its own, and what the
``.proto``'s comments say that protobuf cannot (which operations are idempotent or one-way, which
numbers are bytes or shorts, which fields are references into the node table)."""

import hashlib
import os
import re
import tempfile

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

TYPED_MARK = "Convention (Switchboard typed protobuf"
NODES, NULLS = "sb_nodes", "sb_nulls"

# google.rpc.Status, with the Any of its details as a plain message of the same two fields: the
# wire is the same and no import of google/protobuf/any.proto is needed
_STATUS_PACKAGE = "switchboard.python.status"


def _status_file():
    f = descriptor_pb2.FileDescriptorProto(name="switchboard_python_status.proto", package=_STATUS_PACKAGE,
                                           syntax="proto3")
    any_message = f.message_type.add(name="Any")
    any_message.field.add(name="type_url", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                          label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    any_message.field.add(name="value", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
                          label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    status = f.message_type.add(name="Status")
    status.field.add(name="code", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
                     label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    status.field.add(name="message", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                     label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    status.field.add(name="details", number=3, type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
                     label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED, type_name="." + _STATUS_PACKAGE + ".Any")
    return f


def health_file():
    """grpc/health/v1/health.proto as published, its Check method (what a Switchboard server serves)."""
    P = descriptor_pb2.FieldDescriptorProto
    f = descriptor_pb2.FileDescriptorProto(name="grpc/health/v1/health.proto", package="grpc.health.v1",
                                           syntax="proto3")
    request = f.message_type.add(name="HealthCheckRequest")
    request.field.add(name="service", number=1, type=P.TYPE_STRING, label=P.LABEL_OPTIONAL)
    response = f.message_type.add(name="HealthCheckResponse")
    response.field.add(name="status", number=1, type=P.TYPE_ENUM, label=P.LABEL_OPTIONAL,
                       type_name=".grpc.health.v1.HealthCheckResponse.ServingStatus")
    status = response.enum_type.add(name="ServingStatus")
    for number, name in enumerate(("UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN")):
        status.value.add(name=name, number=number)
    f.service.add(name="Health").method.add(name="Check", input_type=".grpc.health.v1.HealthCheckRequest",
                                             output_type=".grpc.health.v1.HealthCheckResponse")
    return f


def compile_proto(proto_text):
    """The FileDescriptorSet protoc makes of the .proto text (grpc_tools' bundled protoc, in process)."""
    from grpc_tools import protoc
    import grpc_tools

    with tempfile.TemporaryDirectory(prefix="switchboard-proto-") as workdir:
        name = "sb_%s.proto" % hashlib.sha256(proto_text.encode("utf-8")).hexdigest()[:16]
        with open(os.path.join(workdir, name), "w", encoding="utf-8") as f:
            f.write(proto_text)
        out = os.path.join(workdir, "set.pb")
        well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
        rc = protoc.main(["protoc", "-I" + workdir, "-I" + well_known, "--include_imports",
                          "--descriptor_set_out=" + out, os.path.join(workdir, name)])
        if rc != 0:
            raise ValueError("protoc could not read the component's .proto (exit %d)" % rc)
        with open(out, "rb") as f:
            return descriptor_pb2.FileDescriptorSet.FromString(f.read())


class Operation:
    """One operation: its messages, how it travels and what may be repeated."""

    def __init__(self, iface, method):
        self.name = method.name
        self.request = iface.message_class(method.input_type)
        self.response = iface.message_class(method.output_type)
        self.streams = method.client_streaming
        self.path = "/%s/%s" % (method.containing_service.full_name, method.name)
        notes = iface.notes.get(method.name, "")
        self.idempotent = "idempotent" in notes
        self.one_way = "one-way" in notes
        fault = iface.pool_message(iface.package + "." + method.name + "Fault")
        self.fault = iface.message_class(fault) if fault is not None else None

    def __repr__(self):
        return "<operation %s>" % self.name


class Interface:
    """The typed .proto of a component, in a descriptor pool of its own."""

    def __init__(self, proto_text):
        if TYPED_MARK not in proto_text:
            raise ValueError("not a Switchboard typed .proto (its header lacks the convention)")
        self.text = proto_text
        self.pool = descriptor_pool.DescriptorPool()
        file_set = compile_proto(proto_text)
        for f in file_set.file:
            self.pool.Add(f)
        self.pool.Add(_status_file())
        self.health = health_file()
        self.pool.Add(self.health)
        main = file_set.file[-1]
        self.package = main.package
        if len(main.service) != 1:
            raise ValueError("the .proto has %d services, not one" % len(main.service))
        self.service = self.pool.FindServiceByName(self.package + "." + main.service[0].name)
        self.name = self.service.name
        self._classes = {}
        self.kinds, self.notes = parse_comments(proto_text)
        self.status = self.message_class(self.pool.FindMessageTypeByName(_STATUS_PACKAGE + ".Status"))
        self.file_set = file_set
        self.operations = {m.name: Operation(self, m) for m in self.service.methods}

    def pool_message(self, full_name):
        try:
            return self.pool.FindMessageTypeByName(full_name)
        except KeyError:
            return None

    def message_class(self, descriptor):
        cls = self._classes.get(descriptor.full_name)
        if cls is None:
            cls = self._classes[descriptor.full_name] = message_factory.GetMessageClass(descriptor)
        return cls

    def kind(self, descriptor, field_name):
        """The schema kind of a field (``SHORT``, ``REF LinkEntry|NULL``, ``PACKED_DOUBLE|NULL``), or ''."""
        return self.kinds.get((descriptor.name, field_name), "")


_TYPE_LINE = re.compile(r"^//\s+(node|struct) (\w+): (.*)$")
_OP_LINE = re.compile(r"^\s*//\s+(request|response|declared fault) (\w+): (.*)$")
_NOTE_LINE = re.compile(r"^\s*// (\w+): (idempotent|one-way)")


def parse_comments(text):
    """(kinds, notes): kinds[(message, field)] from the field lists the .proto's comments print;
    notes[operation] the rpc's first comment (idempotent, one-way)."""
    kinds, notes = {}, {}
    for line in text.splitlines():
        m = _TYPE_LINE.match(line) or _OP_LINE.match(line)
        if m:
            if m.group(3).strip() == "no fields":
                continue
            for part in m.group(3).split(", "):
                name, _, kind = part.strip().partition(" ")
                kinds[(m.group(2), name)] = kind
            continue
        m = _NOTE_LINE.match(line)
        if m:
            notes[m.group(1)] = m.group(2)
    return kinds, notes


def real_oneof(descriptor):
    """The message's oneof that is not proto3's synthetic one for an ``optional`` field, or None."""
    for o in descriptor.oneofs:
        if not (len(o.fields) == 1 and o.name == "_" + o.fields[0].name):
            return o
    return None
