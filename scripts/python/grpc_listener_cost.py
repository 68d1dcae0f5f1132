#!/usr/bin/env python3
"""What the Python server's own gRPC listener (the relay that holds connections to their shares,
docs/python.md) adds to a call: a plain grpcio client calls ``echoDoubles`` of a Python echo server
with 10 and 10^5 doubles, through the listener, and with ``--direct`` with grpcio listening itself.
Prints the median and 10th percentile of each size; run it both ways, in turns, and compare.

    python scripts/python/grpc_listener_cost.py            # through the listener
    python scripts/python/grpc_listener_cost.py --direct   # grpcio alone
"""

import argparse
import os
import statistics
import struct
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
try:
    import switchboard
except ImportError:   # run from the checkout without the package installed
    sys.path.insert(0, os.path.join(REPO, "metastub", "python", "src"))
    import switchboard
import grpc

from switchboard import _grpc_listener


class Echo:
    def echoDoubles(self, values):
        return values


def request(n):
    """echoDoubles(values=[1.5] * n), packed, as its protobuf bytes."""
    size, length = 8 * n, b""
    while True:
        low, size = size & 0x7F, size >> 7
        length += bytes([low | (0x80 if size else 0)])
        if not size:
            break
    return b"\x0a" + length + struct.pack("<%dd" % n, *([1.5] * n))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--direct", action="store_true", help="grpcio listens itself, without the server's listener")
    p.add_argument("--xsd", default=os.path.join(REPO, "components/echo/src/main/xsd/echo.xsd"))
    args = p.parse_args()
    if args.direct:
        _grpc_listener.available = lambda: False
    server = switchboard.serve(Echo(), schema=args.xsd, handle_sigterm=False, tcp=False)
    target = server.grpc_address.split("://", 1)[1].split("/", 1)[0]
    try:
        with grpc.insecure_channel(target, options=[("grpc.max_receive_message_length", 1 << 30)]) as channel:
            echo = channel.unary_unary("/switchboard.echo.Echo/echoDoubles")
            for n, calls in ((10, 2000), (100_000, 100)):
                message = request(n)
                for _ in range(calls // 3):   # warm-up
                    assert echo(message, timeout=30) == message
                times = []
                for _ in range(calls):
                    started = time.perf_counter()
                    assert echo(message, timeout=30) == message
                    times.append(time.perf_counter() - started)
                times.sort()
                print("%s double[%d]: median %.1f us, p10 %.1f us (%d calls)" % (
                    "direct" if args.direct else "through the listener", n, statistics.median(times) * 1e6,
                    times[len(times) // 10] * 1e6, calls))
    finally:
        server.close()


if __name__ == "__main__":
    main()
