"""Switchboard for Python.

Call any component bound in a Switchboard registry, knowing only the registry's address::

    import switchboard
    with switchboard.connect("http://127.0.0.1:8081/axis2/services/Registry") as board:
        echo = board.lookup("Echo")
        echo.echoDoubles(values=[1.5, -0.0])             # the protocol chosen by the policy
        echo.echoDoubles(values=[1.5], protocol="soap")   # or pinned per call
        echo.last_call.protocol, echo.last_call.reason

Calls go over tcp (brpc's ``baidu_std`` frames; the Unix socket on the server's host), gRPC or SOAP.
Serve a component of your own over gRPC and SOAP, bound in the registry with a lease::

    server = switchboard.serve(Echo(), schema="echo.xsd", registry=URL, name="PyEcho")

An operation asks about its call with ``switchboard.time_left()`` and ``switchboard.is_cancelled()``;
the calls it makes get what is left of its caller's deadline and are cancelled with it.
"""

from ._client import Board, CallRecord, Component
from ._values import Record
from .context import ServerCallContext, current_call, deadline, is_cancelled, time_left
from .errors import (DeclaredFault, Draining, NoCommonProtocol, NotFound, PermissionDenied, Refused,
                     RegistryUnavailable, RemoteError, SwitchboardError, TransportError)
from .tls import Tls

__all__ = ["connect", "serve", "Board", "CallRecord", "Component", "Record", "Tls", "DeclaredFault", "Draining",
           "NoCommonProtocol", "NotFound", "PermissionDenied", "Refused", "RegistryUnavailable", "RemoteError",
           "SwitchboardError",
           "TransportError", "ServerCallContext", "current_call", "deadline", "is_cancelled", "time_left"]


def connect(registry_url, tls=None, policy="adaptive", protocols=("tcp", "grpc", "soap"), timeout=60.0, listener=None,
            watch=True, token=None, unix_sockets=True):
    """A Board on the registry at ``registry_url``, or on several registries of one store (a list, or
    one string with the URLs separated by commas, all http:// or all https://: lookups and the watch
    start at one picked at random and move to the next when one cannot be reached). ``policy`` is
    each component's default (``adaptive``, ``size``, ``size:BYTES``, ``fixed:PROTOCOL``,
    ``first-common``); ``protocols`` the
    ones this client may use, in its order of preference (SOAP, the failsafe, must be among them);
    ``tls`` a ``switchboard.Tls`` for https:// and grpcs:// addresses; ``listener`` is called with
    the CallRecord of every attempt; ``watch`` keeps each component's replicas equal to the registry's
    entries (one watch per board for every name: the registry's gRPC watch stream, SOAP long polls
    when it has none); ``token`` a bearer token (a string, or a callable returning
    the current one) sent with every call and registry request, over TLS or to a loopback address
    only. Given an ``https://`` registry, no plain-text endpoint of an entry is ever taken.
    ``unix_sockets=False`` keeps tcp and gRPC calls on TCP where the server's Unix socket could be
    used (on its host, a socket as the Java server makes it; ``SWITCHBOARD_TCP_UNIX=false`` and
    ``SWITCHBOARD_GRPC_UNIX=false`` do the same for one protocol)."""
    return Board(registry_url, tls=tls, policy=policy, protocols=protocols, timeout=timeout, listener=listener,
                 watch=watch, token=token, unix_sockets=unix_sockets)


def serve(obj, schema, registry=None, name=None, **options):
    """Serves ``obj``'s methods as the operations of ``schema`` over gRPC and SOAP and, given a
    registry, binds it there with a lease; see ``switchboard.server.serve``."""
    from .server import serve as _serve

    return _serve(obj, schema, registry=registry, name=name, **options)
