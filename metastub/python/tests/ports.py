"""Ports for tests to call with nothing listening, or to give a server of another process."""

import random
import socket

LOWEST = 10000


def ephemeral_low():
    """The first port of the kernel's ephemeral range (Linux's default where it does not say)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return max(int(f.read().split()[0]), LOWEST + 1000)
    except (OSError, ValueError, IndexError):
        return 32768


def unused_port():
    """A port below the kernel's ephemeral range that nothing on 127.0.0.1 listens on now.

    A port taken by binding port 0 and closed again is one the kernel hands out next to any
    socket bound to port 0 or connecting out, which the suite and the Java servers beside it make
    all the time; below the range only a port a test names itself can collide."""
    high = ephemeral_low()
    for _ in range(200):
        port = random.randrange(LOWEST, high)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise OSError("no free port in %d-%d after 200 tries" % (LOWEST, high - 1))
