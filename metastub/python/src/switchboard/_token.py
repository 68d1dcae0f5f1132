"""A bearer token the client presents: the gRPC ``authorization`` header and the SOAP request's
HTTP ``Authorization: Bearer``, as the Java client sends it. A token travels only where nobody on
the path can read it: over TLS, or to a loopback address; a plain-text call elsewhere is refused
before anything is sent (a token is as good as a password to whoever reads it)."""

import ipaddress
from urllib.parse import urlparse

LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}


def _loopback(host):
    if host is None:
        return False
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class BearerToken:
    """A token, or a callable returning the current one (read again for every call, so a token that
    is renewed in a file or by an identity provider is picked up without reconnecting)."""

    def __init__(self, source):
        self._source = source

    @classmethod
    def of(cls, token):
        if token is None or isinstance(token, BearerToken):
            return token
        if not (isinstance(token, str) or callable(token)):
            raise TypeError("token= takes a string or a callable returning one, not %s" % type(token).__name__)
        if isinstance(token, str) and not token.strip():
            raise ValueError("token= is empty")
        return cls(token)

    def value(self):
        token = self._source() if callable(self._source) else self._source
        token = (token or "").strip()
        if not token or any(c in token for c in "\r\n"):
            raise ValueError("the token supplier gave an empty token or one with a line break")
        return token

    def header(self):
        return "Bearer " + self.value()

    @staticmethod
    def may_travel_to(address):
        """Whether a token may be sent to ``address``: TLS, or a loopback host."""
        url = urlparse(address)
        return url.scheme in ("https", "grpcs") or _loopback(url.hostname)

    def __repr__(self):   # never the token itself
        return "<bearer token>"


def requests_auth(token):
    """A requests auth hook that adds the header to each request, refusing plain text off the host."""
    import requests.auth

    class _Bearer(requests.auth.AuthBase):
        def __call__(self, request):
            if not BearerToken.may_travel_to(request.url):
                raise PlainTextToken(request.url)
            request.headers["Authorization"] = token.header()
            return request

    return _Bearer()


class PlainTextToken(ValueError):
    """A token would have gone in plain text to another host."""

    def __init__(self, address):
        super().__init__("refusing to send the bearer token in plain text to %s: use TLS (https://, grpcs://) "
                         "or a loopback address" % address)
