#!/usr/bin/env python3
"""A gRPC client for a Switchboard echo-style component, built from the component's typed .proto alone.

Nothing here knows Switchboard's own encodings: the client

1. runs grpc_tools.protoc on the given .proto, at run time, into a temporary directory, and imports
   the generated messages and stub (``<Name>_pb2``, ``<Name>_pb2_grpc.<Service>Stub``); the values
   are ordinary protobuf messages, following the convention printed at the top of the .proto (node
   numbers into ``sb_nodes`` for linked values, ``sb_nulls`` for null arrays, a oneof per element of
   a heterogeneous list, shape and values for an n-d array);
2. calls the echo operations with edge values: a method that streams takes its message as parts
   whose protobuf merge is the message (here: repeated fields cut into slices), and answers the
   same way; a unary one takes one message;
3. compares every answer with what it sent: by protobuf bytes (so doubles are compared bit for
   bit, NaN payloads included), linked nodes by shape (a cycle must come back as a cycle); a
   declared fault must come back as the call's status with the fault message in its
   ``google.rpc.Status`` details (``grpc-status-details-bin``) as ``google.protobuf.Any``;
4. prints a JSON summary, one case per line, and exits 0 only if every case matched.

Usage:
    python echo_grpc_client.py --proto Echo.proto --target 127.0.0.1:9090
    python echo_grpc_client.py --proto Conformance.proto --target 127.0.0.1:9090 --empty-op ping

The operations it calls are named by --doubles-op (default echoDoubles), --list-op (echoList),
--empty-op (empty), and, if given, --mixed-op, --tensor-op and --fault-op (a ``divide`` whose
divisor 0 raises the declared fault).
"""

import argparse
import importlib
import json
import os
import random
import shutil
import struct
import sys
import tempfile
import time

PART_BYTES = 1 << 20  # parts of streamed messages aim at this size, as the Java side's do
MAX_MESSAGE = 64 << 20
NODES, NULLS = "sb_nodes", "sb_nulls"
TYPED_MARK = "Convention (Switchboard typed protobuf"
# google/rpc/status.proto as published by Google (three fields), generated at run time like the rest
STATUS_PROTO = """syntax = "proto3";
package google.rpc;
import "google/protobuf/any.proto";
message Status {
  int32 code = 1;
  string message = 2;
  repeated google.protobuf.Any details = 3;
}
"""
DETAILS_KEY = "grpc-status-details-bin"


class Mismatch(Exception):
    """An answer that is not what was sent."""


def generate(proto_text, file_name, workdir):
    """protoc --python_out --grpc_python_out on the .proto text; returns (pb2 module, pb2_grpc module)."""
    from grpc_tools import protoc
    import grpc_tools

    path = os.path.join(workdir, file_name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(proto_text)
    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    rc = protoc.main(["protoc", "-I" + workdir, "-I" + well_known, "--python_out=" + workdir,
                      "--grpc_python_out=" + workdir, path])
    if rc != 0:
        raise RuntimeError("protoc failed on %s (exit %d)" % (file_name, rc))
    if workdir not in sys.path:
        sys.path.insert(0, workdir)
    module = os.path.splitext(file_name)[0]
    importlib.invalidate_caches()
    return importlib.import_module(module + "_pb2"), importlib.import_module(module + "_pb2_grpc")


def status_module(workdir):
    """google.rpc.Status, generated at run time from its three-field definition (a file name of our
    own, so that its module does not go looking for a ``google.rpc`` package)."""
    pb2, _ = generate(STATUS_PROTO, "sb_google_rpc_status.proto", workdir)
    return pb2


class Interface:
    """A component's typed .proto, generated: its service, its methods and their message classes."""

    def __init__(self, proto_text, workdir):
        if TYPED_MARK not in proto_text:
            raise SystemExit("this .proto is not a Switchboard typed .proto (its header lacks the convention)")
        # a module name of its own per file, so that two components' files never collide
        file_name = "sb_%s.proto" % abs(hash(proto_text))
        self.pb2, self.pb2_grpc = generate(proto_text, file_name, workdir)
        self.status = status_module(workdir)
        service = next(iter(self.pb2.DESCRIPTOR.services_by_name.values()))
        self.service = service.name
        self.package = self.pb2.DESCRIPTOR.package
        self.methods = {m.name: m for m in service.methods}

    def message(self, name):
        return getattr(self.pb2, name)

    def streams(self, op):
        return self.methods[op].client_streaming

    def stub(self, channel):
        return getattr(self.pb2_grpc, self.service + "Stub")(channel)


def parts(message, part_bytes=PART_BYTES):
    """The message as parts whose protobuf merge is the message: singular fields in the first part,
    each repeated field cut into slices of about ``part_bytes``."""
    if message.ByteSize() <= part_bytes:
        return [message]
    first = type(message)()
    first.CopyFrom(message)
    repeated = [f for f in message.DESCRIPTOR.fields if f.is_repeated]
    for f in repeated:
        first.ClearField(f.name)
    out = [first]
    for f in repeated:
        values = getattr(message, f.name)
        if not len(values):
            continue
        per_item = max(1, message.ByteSize() // max(1, sum(len(getattr(message, g.name)) for g in repeated)))
        step = max(1, part_bytes // per_item)
        for i in range(0, len(values), step):
            part = type(message)()
            getattr(part, f.name).extend(values[i:i + step])
            out.append(part)
    return out


def merged(cls, received):
    """The message the received parts merge to."""
    message = cls()
    for part in received:
        message.MergeFrom(part)
    return message


def call(iface, stub, op, request, timeout, part_bytes=PART_BYTES):
    """Calls op with request (as parts when the method streams); answers the response message."""
    response_cls = iface.message(iface.methods[op].output_type.name)
    method = getattr(stub, op)
    if iface.streams(op):
        sent = parts(request, part_bytes)
        return merged(response_cls, method(iter(sent), timeout=timeout)), len(sent)
    return method(request, timeout=timeout), 1


def declared_fault(iface, error):
    """The declared fault message a failed call carries in its google.rpc.Status details, or None."""
    for key, value in (error.trailing_metadata() or ()):
        if key == DETAILS_KEY:
            status = iface.status.Status.FromString(value)
            for any_message in status.details:
                name = any_message.type_url.rsplit("/", 1)[-1]
                if name.startswith(iface.package + "."):
                    return iface.message(name[len(iface.package) + 1:]).FromString(any_message.value)
    return None


# ---------------------------------------------------------------------------------------------
# Comparing answers


def same_bytes(sent, got):
    """Messages of two types with the same fields: equal when their protobuf bytes are."""
    a, b = sent.SerializeToString(deterministic=True), got.SerializeToString(deterministic=True)
    if a == b:
        return None
    return "the answer differs from what was sent (%d bytes sent, %d back; first difference at byte %d)" % (
        len(a), len(b), next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b))))


def same_list(sent, got, field="head"):
    """Linked nodes by shape: walk from the head in both, node numbers may differ but not the links."""
    at_sent, at_got = getattr(sent, field), getattr(got, field)
    mapping, steps = {}, 0
    while at_sent:
        if at_sent in mapping:
            return None if mapping[at_sent] == at_got else "the cycle closes at another node"
        if not at_got or at_got > len(got.sb_nodes):
            return "node %d came back as %d, which the answer's sb_nodes does not hold" % (at_sent, at_got)
        mapping[at_sent] = at_got
        a, b = sent.sb_nodes[at_sent - 1], got.sb_nodes[at_got - 1]
        link = "nextLink"
        a_next, b_next = getattr(a, link), getattr(b, link)
        a_copy, b_copy = type(a)(), type(b)()
        a_copy.CopyFrom(a)
        b_copy.CopyFrom(b)
        a_copy.ClearField(link)
        b_copy.ClearField(link)
        if a_copy.SerializeToString() != b_copy.SerializeToString():
            return "node %d (step %d): sent %s, got %s" % (at_sent, steps, a_copy, b_copy)
        at_sent, at_got, steps = a_next, b_next, steps + 1
    return None if not at_got else "the list came back longer"


# ---------------------------------------------------------------------------------------------
# The cases


def doubles_of_bits(*patterns):
    return [struct.unpack("<d", struct.pack("<Q", p))[0] for p in patterns]


def link_entry(iface, i, **overrides):
    fields = dict(llong=i, sshort=i % 32768, iint=-i, ffloat=i / 4.0, ddouble=i * 1.5, sstring="n%d" % i)
    fields.update(overrides)
    if fields.get("sstring") is None:
        fields.pop("sstring", None)
    return iface.message("LinkEntry")(**fields)


def chain(iface, op, n, cycle=False):
    """echoList's request: n nodes, numbered 1..n along the chain; the last back to the first if cycle."""
    request = iface.message(op)(head=1 if n else 0)
    for i in range(n):
        nxt = i + 2 if i + 1 < n else (1 if cycle else 0)
        request.sb_nodes.append(link_entry(iface, i, nextLink=nxt))
    return request


def element(mixed, **alternative):
    return mixed.Element(**alternative)


def mixed_value(iface):
    """A nested heterogeneous list: numbers (NaN, -0.0), an integer, text, an empty and a nested list."""
    mixed = iface.message("Mixed")
    inner = mixed(elements=[element(mixed, text="inner"), element(mixed, list=mixed(elements=[
        element(mixed, integer=7)]))])
    return mixed(elements=[
        element(mixed, number=float("nan")), element(mixed, number=-0.0), element(mixed, integer=-2 ** 63),
        element(mixed, text="\u2713 \U0001d11e"), element(mixed, list=mixed()), element(mixed, list=inner)])


def cases(iface, args):
    """(name, operation, request, check) per case; check(request, response) answers None or the difference."""
    rnd = random.Random(2000)  # fixed seed: the same bits every run
    d, l, e = args.doubles_op, args.list_op, args.empty_op
    doubles = iface.message(d)
    edge = [float("nan"), -0.0, float("inf"), float("-inf"), 5e-324, 1.5, 0.0, -5e-324,
            1.7976931348623157e308, -2.2250738585072014e-308]
    null_values = doubles()
    null_values.sb_nulls.lists.append(doubles.DESCRIPTOR.fields_by_name["values"].number)
    cycle = chain(iface, l, 3, cycle=True)
    extremes = [dict(llong=2 ** 63 - 1, sshort=-32768, iint=-2 ** 31, ffloat=-0.0, ddouble=float("nan"),
                     sstring="h\u00e9llo \u2713 \U0001d11e"),
                dict(llong=-2 ** 63, sshort=32767, iint=2 ** 31 - 1, ffloat=float("inf"), ddouble=-0.0, sstring=None),
                dict(ffloat=float("nan"), ddouble=5e-324, sstring="")]
    for node, values in zip(cycle.sb_nodes, extremes):
        for k, v in values.items():
            if v is None:
                node.ClearField(k)
            else:
                setattr(node, k, v)
    result = [
        ("doubles_edge", d, doubles(values=edge), same_bytes),
        ("doubles_nan_payloads", d, doubles(values=doubles_of_bits(0x7FF0000000000001, 0x7FF8000000000ABC,
                                                                    0xFFF0000000123456, 0xFFF8000000000000)), same_bytes),
        ("doubles_empty", d, doubles(), same_bytes),
        ("doubles_null", d, null_values, same_bytes),
        ("doubles_100k_random_bits", d, doubles(values=[struct.unpack("<d", rnd.randbytes(8))[0]
                                                        for _ in range(100_000)]), same_bytes),
        ("list_cycle_of_3", l, cycle, same_list),
        ("list_single", l, chain(iface, l, 1), same_list),
        ("list_null", l, iface.message(l)(), same_list),
        ("list_100k_nodes", l, chain(iface, l, 100_000), same_list),
        ("list_100k_nodes_cycle", l, chain(iface, l, 100_000, cycle=True), same_list),
        ("empty", e, iface.message(e)(), lambda sent, got: None),
    ]
    if args.mixed_op:
        m = iface.message(args.mixed_op)
        result.append(("mixed_nested", args.mixed_op, m(list=mixed_value(iface)), same_bytes))
        result.append(("mixed_empty", args.mixed_op, m(list=iface.message("Mixed")()), same_bytes))
    if args.tensor_op:
        t = iface.message(args.tensor_op)
        tensor = iface.message("Tensor")(shape=[2, 3, 1], values=[1.0, -0.0, float("nan"), float("inf"), 5e-324, 2.5])
        result.append(("tensor_2x3x1", args.tensor_op, t(tensor=tensor), same_bytes))
        result.append(("tensor_empty_0x4", args.tensor_op, t(tensor=iface.message("Tensor")(shape=[0, 4])), same_bytes))
    if args.fault_op:
        f = iface.message(args.fault_op)
        result.append(("divide_answers", args.fault_op, f(dividend=-7, divisor=2),
                       lambda sent, got: None if (got.quotient, got.remainder) == (-3, -1) else "got %s" % got))
        result.append(("divide_declared_fault", args.fault_op, f(dividend=2 ** 62, divisor=0), "fault"))
    return result


def run_cases(iface, target, case_list, timeout, part_bytes=PART_BYTES):
    """Calls each case over one channel; a result dict per case."""
    import grpc

    results = []
    options = [("grpc.max_receive_message_length", MAX_MESSAGE), ("grpc.max_send_message_length", MAX_MESSAGE)]
    with grpc.insecure_channel(target, options=options) as channel:
        stub = iface.stub(channel)
        for name, op, request, check in case_list:
            result = {"name": name, "operation": op, "ok": False, "protocol": "grpc"}
            started = time.monotonic()
            try:
                got, sent_parts = call(iface, stub, op, request, timeout, part_bytes)
                result["parts_sent"] = sent_parts
                diff = "a declared fault was expected, the call answered" if check == "fault" else check(request, got)
                result["ok"] = diff is None
                if diff:
                    result["detail"] = diff
            except grpc.RpcError as e:
                fault = declared_fault(iface, e) if check == "fault" else None
                if fault is not None and fault.dividend == request.dividend and fault.reason:
                    result["ok"] = True
                    result["status"] = e.code().name
                    result["fault"] = {"reason": fault.reason, "dividend": str(fault.dividend)}
                else:
                    result["detail"] = "gRPC status %s: %s" % (e.code().name, e.details())
            except Mismatch as e:
                result["detail"] = str(e)
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


def add_operation_arguments(parser):
    parser.add_argument("--doubles-op", default="echoDoubles")
    parser.add_argument("--list-op", default="echoList")
    parser.add_argument("--empty-op", default="empty")
    parser.add_argument("--mixed-op", default=None, help="an operation that echoes a heterogeneous list field `list`")
    parser.add_argument("--tensor-op", default=None, help="an operation that echoes an n-d array field `tensor`")
    parser.add_argument("--fault-op", default=None, help="a `divide` whose divisor 0 raises its declared fault")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--proto", required=True, help="the component's typed .proto")
    parser.add_argument("--target", required=True, help="gRPC endpoint host:port")
    add_operation_arguments(parser)
    parser.add_argument("--part-bytes", type=int, default=PART_BYTES, help="parts of streamed requests aim at this size")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per call")
    args = parser.parse_args()

    import grpc

    with open(args.proto, encoding="utf-8") as f:
        proto = f.read()
    workdir = tempfile.mkdtemp(prefix="switchboard-py-stub-")
    try:
        iface = Interface(proto, workdir)
        for op in (args.doubles_op, args.list_op, args.empty_op, args.mixed_op, args.tensor_op, args.fault_op):
            if op and op not in iface.methods:
                parser.error("the .proto has no rpc %s (it has: %s)" % (op, ", ".join(iface.methods)))
        results = run_cases(iface, args.target, cases(iface, args), args.timeout, args.part_bytes)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    head = {"service": iface.service, "proto": os.path.basename(args.proto), "target": args.target,
            "python": sys.version.split()[0], "grpcio": grpc.__version__}
    return print_report(head, results)


if __name__ == "__main__":
    sys.exit(main())
