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


WILDCARDS = ("0.0.0.0", "::", "")


def is_wildcard(host):
    """Whether a listener on ``host`` listens on every interface (``0.0.0.0``, ``::``)."""
    return socket_host(host) in WILDCARDS


def endpoint_host(host, advertise=None):
    """The host a server on ``host`` publishes in its endpoints, as the Java server's
    ``ServerSettings.hostForEndpoints``: ``advertise`` when given; for a wildcard, this host's
    address toward its default route (other hosts can reach it; 127.0.0.1 where there is none);
    else ``host``."""
    if advertise:
        return socket_host(advertise)
    if not is_wildcard(host):
        return socket_host(host)
    for kind, nowhere in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):   # IPv4 first
        probe = socket.socket(kind, socket.SOCK_DGRAM)
        try:
            probe.connect((nowhere, 9))   # a UDP connect sends nothing: it only picks the route's address
            address = probe.getsockname()[0]
            if address not in WILDCARDS:
                return address
        except OSError:   # no route of this family
            pass
        finally:
            probe.close()
    return "127.0.0.1"


def listening_socket(host):
    """A TCP socket listening on ``host`` (an ephemeral port), both IPv4 and IPv6 on ``::``."""
    host = socket_host(host) or "0.0.0.0"
    dual = host == "::" and socket.has_dualstack_ipv6()
    return socket.create_server((host, 0), family=family(host), backlog=128, dualstack_ipv6=dual)
