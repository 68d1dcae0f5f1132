#!/usr/bin/env python3
"""Calls an echo component knowing only the registry's address: each check over gRPC and over SOAP
(pinned per call), compared bit for bit, then a numpy array of 200,000 doubles. Prints one line per
check and exits 0 only if every answer is exact.

    python echo_from_registry.py http://127.0.0.1:8081/axis2/services/Registry [NAME]
"""

import math
import struct
import sys

import numpy

import switchboard


def same_bits(a, b):
    return len(a) == len(b) and all(struct.pack("<d", x) == struct.pack("<d", y) for x, y in zip(a, b))


def main(registry, name="Echo"):
    ok = True
    values = [1.5, -0.0, 0.0, math.inf, -math.inf, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1]
    data = numpy.random.default_rng(7).standard_normal(200_000)
    with switchboard.connect(registry) as board:
        echo = board.lookup(name)
        for protocol in ("grpc", "soap"):
            checks = {
                "edge doubles": same_bits(values, echo.echoDoubles(values=values, protocol=protocol)),
                "NaN": math.isnan(echo.echoDoubles(values=[math.nan], protocol=protocol)[0]),
                "empty and null": echo.echoDoubles(values=[], protocol=protocol) == []
                and echo.echoDoubles(values=None, protocol=protocol) is None,
            }
            back = echo.echoDoubles(values=data, protocol=protocol)
            checks["numpy 200,000 doubles"] = isinstance(back, numpy.ndarray) and numpy.array_equal(
                data.view(numpy.uint64), back.view(numpy.uint64))
            for check, passed in checks.items():
                print("%-5s %-22s %s (%s)" % (protocol, check, "exact" if passed else "WRONG", echo.last_call.reason))
                ok &= passed and echo.last_call.protocol == protocol
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
