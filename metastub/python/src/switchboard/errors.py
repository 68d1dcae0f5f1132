"""What a call can raise. The names follow the Java side's: a refusal names its reason as the Java
readers do (``malformed``, ``size-limit``, ...), a transport failure says whether the operation may
have run, and a declared fault is an exception of its own type per operation."""


class SwitchboardError(Exception):
    """Anything Switchboard raises."""


class Refused(SwitchboardError, ValueError):
    """A value or message refused by name, before or instead of running the operation: ``reason`` is
    ``malformed``, ``size-limit``, ``node-limit``, ``string-limit``, ``depth-limit``, ...; ``field``
    names where, when known."""

    def __init__(self, reason, message, field=None):
        super().__init__("%s: %s" % (reason, message) if field is None else "%s at %s: %s" % (reason, field, message))
        self.reason, self.field, self.text = reason, field, message


class TransportError(SwitchboardError):
    """The call did not get an answer over ``protocol``. ``delivery`` is ``not-delivered`` (the request
    never reached the operation) or ``may-have-run``."""

    NOT_DELIVERED, MAY_HAVE_RUN = "not-delivered", "may-have-run"

    def __init__(self, protocol, delivery, message):
        super().__init__("%s (%s, %s)" % (message, protocol, delivery))
        self.protocol, self.delivery = protocol, delivery


class Draining(TransportError):
    """The server is shutting down (draining): it refused the call before the operation ran. Another
    replica may take it, and the client takes it there; it does not fall back to SOAP on the same
    server, which is draining too. Raised to the caller only when no other replica is left.

    ::

        try:
            echo.empty()
        except switchboard.Draining as e:
            print("every replica is shutting down:", e)
    """

    TEXT = "the server is shutting down (draining): the call did not run"   # what a draining server answers

    def __init__(self, protocol, message):
        super().__init__(protocol, TransportError.NOT_DELIVERED, message)


class RegistryUnavailable(TransportError):
    """No registry of ``url`` answered ``connect`` or a lookup: refused, timed out, or its TLS
    handshake failed (a revoked or untrusted registry certificate among them); the error it met is
    chained as ``__cause__``. Nothing was looked up; try again later or another registry.

    ::

        try:
            board = switchboard.connect("https://registry.example:8443/axis2/services/Registry", tls=tls)
        except switchboard.RegistryUnavailable as e:
            print("no registry:", e)
    """

    def __init__(self, url, delivery, cause):
        super().__init__("soap", delivery, "the registry %s could not be reached: %s" % (url, cause))
        self.url = url


class RemoteError(SwitchboardError):
    """The operation raised an error it does not declare; ``error_type`` is the server's name for it."""

    def __init__(self, message, error_type=None):
        super().__init__(message if not error_type else "%s: %s" % (error_type, message))
        self.error_type = error_type


class PermissionDenied(Refused):
    """The server refused the call because of who made it: its authorization policy denied this
    caller the path (``reason`` ``permission-denied``), or the caller's credentials did not verify
    (``unauthenticated``). The operation did not run, and the call is not tried again on another
    protocol or replica: the same caller would be refused there too. ``path`` is the path refused
    (``/switchboard.echo.Echo/echoDoubles``) when the server named it.

    ::

        try:
            bank.deposit(account="a-1", amount=100)
        except switchboard.PermissionDenied as e:
            print("not allowed:", e.path, e.text)
    """

    DENIED, UNAUTHENTICATED = "permission-denied", "unauthenticated"
    delivery = "not-delivered"

    def __init__(self, message, reason=DENIED, path=None):
        super().__init__(reason, message)
        self.path = path


class NoCommonProtocol(SwitchboardError):
    """Client and server share no protocol the call may use (a pinned or fixed one among them)."""


class NotFound(SwitchboardError, LookupError):
    """The registry holds no entry of that name."""


class DeclaredFault(SwitchboardError):
    """An operation's declared fault. Each operation that declares one has a subclass of its own,
    named as the fault message (``divideFault``), whose attributes are the fault's fields."""

    fields = ()

    def __init__(self, message=None, **fields):
        self.values = dict(fields)
        for name in self.fields:
            setattr(self, name, fields.get(name))
        text = message if message is not None else fields.get("reason") or type(self).__name__
        if message is not None:
            self.values.setdefault("reason", message)
        super().__init__(text)


def fault_class(name, field_names):
    """The DeclaredFault subclass of one fault message."""
    return type(name, (DeclaredFault,), {"fields": tuple(field_names), "__module__": "switchboard.faults"})
