"""Hosts in endpoints and socket addresses, IPv6 literals among them: ``[::1]:5000`` in a URL or a
gRPC target, ``::1`` to a socket."""

import socket


def socket_host(host):
    """``host`` as a socket takes it: an IPv6 literal without its brackets."""
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def url_host(host):
    """``host`` as a URL or a gRPC target writes it: an IPv6 literal in brackets."""
    host = socket_host(host)
    return "[%s]" % host if ":" in host else host


def family(host):
    """The address family a listener on ``host`` takes: IPv6 for an IPv6 literal."""
    return socket.AF_INET6 if ":" in socket_host(host) else socket.AF_INET


def host_port(host, port):
    """``127.0.0.1:5000``, ``[::1]:5000``."""
    return "%s:%d" % (url_host(host), port)


def of_peer(address):
    """A caller's socket address (``(host, port)``, or IPv6's four) as the Java servers name it."""
    return "%s:%s" % (url_host(address[0]), address[1])
