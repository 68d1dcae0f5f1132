"""Protobuf's varints, for the few places that write or read a field by hand."""


def varint(n):
    """The varint encoding of a non-negative integer."""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def read_varint(data, i):
    """(value, position after it) of the varint at ``data[i]``; ValueError if it is cut or too long."""
    shift = value = 0
    while True:
        if i >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7
