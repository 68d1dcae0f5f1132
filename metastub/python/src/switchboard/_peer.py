"""Who made a call to the Python server, as the Java servers' ``Peer``: the principal from a
verified bearer token (``switchboard.tokens``), else from a client certificate (its URI SAN, a
SPIFFE ID, if it has one; else its first DNS SAN; else its subject), else over tcp's Unix socket
its uid, else none (anonymous), and the remote address."""

import _ssl
import socket
import struct

MUTUAL_TLS, TOKEN, ANONYMOUS, UNIX_SOCKET = "MUTUAL_TLS", "TOKEN", "ANONYMOUS", "UNIX_SOCKET"


class Peer:
    """``certificate``: the client certificate its connection's handshake verified (a ``cryptography``
    x509 object), which each call checks again against the trust store and revocation lists in force;
    else None. ``chain``: the other certificates the client sent with it (its intermediate
    authorities, as sent: the handshake verified them then; DER or PEM bytes as the transport
    gives them, read only when a call's check is not already decided), which that check walks to
    the store.
    ``judged_by``: which read of the server's stores (``Tls.generation``) its handshake was judged by,
    where known."""

    __slots__ = ("principal", "authentication", "remote_address", "certificate", "chain", "judged_by")

    def __init__(self, principal, authentication, remote_address, certificate=None, chain=(), judged_by=None):
        self.principal, self.authentication, self.remote_address = principal, authentication, remote_address
        self.certificate, self.chain, self.judged_by = certificate, tuple(chain), judged_by

    @property
    def identity(self):
        """One string per identity whatever its address: ``MUTUAL_TLS:spiffe://...`` or ``ANONYMOUS``."""
        return self.authentication if self.principal is None else "%s:%s" % (self.authentication, self.principal)

    def __repr__(self):
        return "<peer %s from %s>" % (self.identity, self.remote_address)


def principal_of(certificate):
    """The principal of an x509 certificate (a ``cryptography`` object)."""
    from cryptography import x509

    try:
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        names = None
    if names is not None:
        for kind in (x509.UniformResourceIdentifier, x509.DNSName):
            values = names.get_values_for_type(kind)
            if values:
                return values[0]
    return certificate.subject.rfc4514_string() or None


def from_der(der, remote_address, tls=None):
    """The peer of a connection whose handshake verified ``der`` (None: the client sent no
    certificate); ``tls``: its ``ssl.SSLSocket`` or ``ssl.SSLObject``, for the rest of the chain."""
    if not der:
        return Peer(None, ANONYMOUS, remote_address)
    from cryptography import x509

    return _peer(x509.load_der_x509_certificate(der), remote_address, sent_chain(tls)[1:],
                 getattr(getattr(tls, "context", None), "switchboard_generation", None))


def sent_chain(tls):
    """The certificates (DER) a TLS peer sent, its own first: ``get_unverified_chain``, public from
    Python 3.13 and a method of the ``_ssl`` object before (3.10-3.12). Empty where neither is there,
    and after a resumed session's handshake, where the peer sent none."""
    if tls is None:
        return []
    chain = getattr(tls, "get_unverified_chain", None) or getattr(getattr(tls, "_sslobj", None),
                                                                  "get_unverified_chain", None)
    try:
        certificates = chain() if chain is not None else None
    except (ValueError, OSError):
        return []
    return [c if isinstance(c, bytes) else c.public_bytes(_ssl.ENCODING_DER) for c in certificates or ()]


def from_grpc(context, address=None):
    """The peer of a gRPC call: the certificate grpcio verified, else anonymous; ``address``: the
    caller's, where grpcio's peer is the server's own listener in front of it."""
    from urllib.parse import unquote

    if address is None:
        address = unquote(context.peer())
        for prefix in ("ipv4:", "ipv6:"):
            if address.startswith(prefix):
                address = address[len(prefix):]
    auth = context.auth_context() or {}
    pem = auth.get("x509_pem_cert")
    if not pem:
        return Peer(None, ANONYMOUS, address)
    from cryptography import x509

    # grpcio's chain is the one the client sent, without its own certificate
    return _peer(x509.load_pem_x509_certificate(pem[0]), address, auth.get("x509_pem_cert_chain") or ())


def from_unix_socket(sock, path):
    """The process at the other end of a Unix socket, as the Java tcp server names it: principal
    ``uid:1000`` (``SO_PEERCRED``); anonymous where the kernel does not say."""
    try:
        _, uid, _ = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    except (OSError, AttributeError):
        return Peer(None, ANONYMOUS, path)
    return Peer("uid:%d" % uid, UNIX_SOCKET, path)


def call_id_owner(peer):
    """Whose call id a call's is, for remembering its outcome: its identity, except that a caller
    on the Unix socket counts as anonymous, as on the Java servers (DeduplicatingInterceptor.callerOf).
    The failsafe's SOAP repeat of a call that failed over the socket comes over TCP, where nothing
    names the uid; keyed apart, the repeat would run the operation a second time."""
    return ANONYMOUS if peer.authentication == UNIX_SOCKET else peer.identity


def _peer(certificate, address, chain=(), judged_by=None):
    principal = principal_of(certificate)
    return Peer(principal, MUTUAL_TLS if principal else ANONYMOUS, address, certificate, chain, judged_by)
