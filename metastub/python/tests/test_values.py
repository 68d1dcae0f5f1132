"""Python values <-> the typed protobuf messages and the SOAP wire form, without a network: exact
round trips and the refusals the Java side makes."""

import math
import struct

import numpy
import pytest
from lxml import etree

from conftest import bits
from switchboard import Refused, _values
from switchboard._schema import Interface
from switchboard._soap import SoapCodec, parse_document


@pytest.fixture(scope="module")
def iface(echo_proto):
    return Interface(echo_proto)


@pytest.fixture(scope="module")
def types(iface):
    return _values.Types(iface)


def round_trip(iface, types, op, values, use_numpy=False, soap=False):
    """The values after encoding into op's request and decoding again (through SOAP XML if asked)."""
    operation = iface.operations[op]
    message = _values.Encoder(iface, operation.request.DESCRIPTOR).encode(values)
    if soap:
        codec = SoapCodec(iface, "urn:switchboard:echo")
        element = etree.Element(codec.q(op))
        codec.write(message, element)
        message = codec.read(operation.request, parse_document(etree.tostring(element)))
    return _values.Decoder(iface, types, use_numpy=use_numpy).decode(message)


@pytest.mark.parametrize("soap", [False, True])
def test_doubles_round_trip_bit_for_bit(iface, types, soap):
    values = [1.5, -0.0, 0.0, math.inf, -math.inf, 5e-324, -5e-324, 1e-310, 1.7976931348623157e308, 0.1]
    assert bits(round_trip(iface, types, "echoDoubles", {"values": values}, soap=soap)["values"]) == bits(values)
    assert round_trip(iface, types, "echoDoubles", {"values": []}, soap=soap)["values"] == []
    assert round_trip(iface, types, "echoDoubles", {"values": None}, soap=soap)["values"] is None


def test_nan_payloads_survive_protobuf(iface, types):
    nan = struct.unpack("<d", struct.pack("<Q", 0x7FF0000000000ABC))[0]
    assert bits(round_trip(iface, types, "echoDoubles", {"values": [nan]})["values"]) == ["7ff0000000000abc"]


def test_a_numpy_array_comes_back_as_a_numpy_array(iface, types):
    data = numpy.random.default_rng(1).standard_normal(1000)
    back = round_trip(iface, types, "echoDoubles", {"values": data}, use_numpy=True)["values"]
    assert isinstance(back, numpy.ndarray) and numpy.array_equal(back.view(numpy.uint64), data.view(numpy.uint64))


@pytest.mark.parametrize("soap", [False, True])
def test_linked_values_keep_cycles_and_shared_nodes(iface, types, soap):
    entry = types.LinkEntry
    a = entry(llong=-(2 ** 63), sshort=-32768, iint=2 ** 31 - 1, ffloat=0.25, ddouble=-0.0, sstring="h\u00e9llo \U0001F600")
    b = entry(llong=1, sshort=1, iint=1, ffloat=1.0, ddouble=1.0, sstring="", nextLink=a)
    c = entry(llong=2, sshort=2, iint=2, ffloat=2.0, ddouble=2.0, sstring=None, nextLink=b)
    a.nextLink = b   # a -> b -> a: a cycle; c points into it (b is shared)
    message = {"head": c}
    head = round_trip(iface, types, "echoList", message, soap=soap)["head"]
    assert (head.llong, head.sstring) == (2, None)
    b2 = head.nextLink
    a2 = b2.nextLink
    assert a2.nextLink is b2, "the cycle comes back as a cycle"
    assert (a2.llong, a2.sshort, a2.iint, a2.sstring) == (-(2 ** 63), -32768, 2 ** 31 - 1, "h\u00e9llo \U0001F600")
    assert bits([a2.ddouble]) == bits([-0.0]) and b2.sstring == ""


def test_a_long_list_is_not_recursion(iface, types):
    head = None
    for i in range(20_000):   # far past Python's recursion limit
        head = types.LinkEntry(llong=i, sshort=0, iint=0, ffloat=0.0, ddouble=0.0, nextLink=head)
    back = round_trip(iface, types, "echoList", {"head": head})["head"]
    n = 0
    while back is not None:
        back, n = back.nextLink, n + 1
    assert n == 20_000


@pytest.mark.parametrize("soap", [False, True])
def test_heterogeneous_lists_and_tensors(iface, types, soap):
    tensor = numpy.arange(6.0).reshape(2, 3)
    back = round_trip(iface, types, "echoMixed", {"list": [1.5, -7, True, "x", [2, []], tensor]}, use_numpy=True,
                      soap=soap)["list"]
    assert back[:5] == [1.5, -7, True, "x", [2, []]]
    assert numpy.array_equal(back[5], tensor)
    assert numpy.array_equal(round_trip(iface, types, "echoTensor", {"tensor": tensor}, use_numpy=True,
                                        soap=soap)["tensor"], tensor)


@pytest.mark.parametrize("field,value,reason", [
    ("sshort", 32768, "out of range for short"),
    ("iint", 2 ** 31, "out of range for int"),
    ("llong", 2 ** 63, "out of range for long"),
    ("iint", True, "an integer is needed"),
    ("ddouble", "1.5", "a number is needed"),
    ("ddouble", 2 ** 53 + 1, "has no exact double"),
    ("ffloat", 1e39, "out of range for float"),
    ("sstring", "lone \ud800 surrogate", "cannot travel"),
    ("sstring", "bell \x07", "cannot travel"),
])
def test_values_out_of_their_type_are_refused(iface, types, field, value, reason):
    node = dict(llong=0, sshort=0, iint=0, ffloat=0.0, ddouble=0.0)
    node[field] = value
    with pytest.raises(Refused) as refused:
        _values.Encoder(iface, iface.operations["echoList"].request.DESCRIPTOR).encode(
            {"head": types.LinkEntry(**node)})
    assert refused.value.reason == "malformed" and reason in str(refused.value)
    assert refused.value.field == "LinkEntry." + field


def test_soap_reading_is_strict(iface):
    codec = SoapCodec(iface, "urn:switchboard:echo")
    request = iface.operations["echoDoubles"].request
    for xml, reason in [
        (b'<echoDoubles xmlns="urn:switchboard:echo"><values>1.5 nan</values></echoDoubles>', "not an xs:double"),
        (b'<echoDoubles xmlns="urn:switchboard:echo"><other/></echoDoubles>', "unexpected element"),
        (b'<!DOCTYPE e [<!ENTITY x "1.5">]><echoDoubles xmlns="urn:switchboard:echo"><values>&x;</values>'
         b'</echoDoubles>', "DTDs are not accepted"),
    ]:
        with pytest.raises(Refused) as refused:
            codec.read(request, parse_document(xml))
        assert refused.value.reason == "malformed" and reason in str(refused.value)



def test_packed_arrays_are_read_over_the_received_bytes(iface, types):
    from switchboard._transport import parts

    op = iface.operations["echoDoubles"]
    data = numpy.random.default_rng(2).standard_normal(300_000)   # 2.4 MB: three parts
    message = _values.Encoder(iface, op.request.DESCRIPTOR).encode({"values": data})
    for pieces in ([message.SerializeToString()], parts(message)):
        raw = bytearray(b"".join(pieces))
        back = _values.Decoder(iface, types, use_numpy=True).decode(op.response.FromString(bytes(raw)), raw)["values"]
        assert numpy.array_equal(back.view(numpy.uint64), data.view(numpy.uint64))
        assert numpy.shares_memory(back, numpy.frombuffer(raw, dtype=numpy.uint8)) == (len(pieces) == 1)
    # a field also sent unpacked (as protobuf allows) is read the usual way
    unpacked = bytearray(b"\x09" + struct.pack("<d", 1.5) + b"\x0a\x08" + struct.pack("<d", -0.0))
    back = _values.Decoder(iface, types, use_numpy=True).decode(op.response.FromString(bytes(unpacked)), unpacked)
    assert bits(back["values"]) == bits([1.5, -0.0])
