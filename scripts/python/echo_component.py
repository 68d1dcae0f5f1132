#!/usr/bin/env python3
"""The echo component written in Python, on the switchboard package (metastub/python): served over
gRPC and SOAP and bound in a registry with a lease, renewed, and unbound on SIGTERM or Ctrl-C.

It prints one JSON object per line: ``serving`` (name, instance, endpoints), ``renewed`` (with
``--verbose-renew``) and, last, ``stopped`` with whether it unbound and the calls it ran per
protocol and operation. A bind the registry refuses exits 2.

    python echo_component.py --registry http://127.0.0.1:8081/axis2/services/Registry --name PyEcho
"""

import argparse
import json
import os
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
try:
    import switchboard
except ImportError:   # run from the checkout without the package installed
    sys.path.insert(0, os.path.join(REPO, "metastub", "python", "src"))
    import switchboard


class Echo:
    """Answers what it is sent; divides as Java does (truncated toward zero, MIN_VALUE / -1 wraps)."""

    def echoDoubles(self, values):
        return values

    def echoList(self, head):
        return head

    def empty(self):
        pass

    def echoTensor(self, tensor):
        return tensor

    def echoMixed(self, list):
        return list

    def divide(self, dividend, divisor):
        if divisor == 0:
            raise switchboard.DeclaredFault("division by zero", dividend=dividend)
        quotient = abs(dividend) // abs(divisor) * (-1 if (dividend < 0) != (divisor < 0) else 1)
        quotient = (quotient + 2 ** 63) % 2 ** 64 - 2 ** 63
        return {"quotient": quotient, "remainder": dividend - divisor * quotient if divisor != -1 else 0}


class Relay(Echo):
    """A hop, for tests of calls across components: ``echoDoubles`` calls the component bound as
    ``onward`` once over each protocol, from the operation (so within its caller's deadline and
    with its trace context), and answers with what the last call answered."""

    def __init__(self, board, onward):
        self.board, self.onward, self.stub = board, onward, None

    def echoDoubles(self, values):
        if self.stub is None:
            self.stub = self.board.lookup(self.onward)
        for protocol in ("tcp", "grpc", "soap"):
            answer = self.stub.echoDoubles(values=values, protocol=protocol)
        return answer


def emit(event, **fields):
    print(json.dumps(dict(event=event, **fields)), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--registry", required=True, help="the registry's SOAP address (its WSDL is at ?wsdl)")
    p.add_argument("--name", help="the name to bind (default: the component's name, Echo)")
    p.add_argument("--xsd", default=os.path.join(REPO, "components/echo/src/main/xsd/echo.xsd"))
    p.add_argument("--proto", help="the typed .proto (default: beside --xsd, or the echo component's build)")
    p.add_argument("--wsdl", help="the WSDL (default: beside --xsd, or the echo component's build)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0 or :: for every interface) and to "
                   "publish, unless --advertise")
    p.add_argument("--advertise", default=None, help="host or address the endpoints publish, for other hosts")
    p.add_argument("--lease", type=int, default=30, help="lease seconds (0: none; renewed at a third)")
    p.add_argument("--secret-file", help="the registry's shared secret (default: $SWITCHBOARD_SECRET)")
    p.add_argument("--max-message-bytes", type=int, default=64 << 20)
    p.add_argument("--verbose-renew", action="store_true", help="print a line for every renew")
    p.add_argument("--tls-keystore", help="serve over TLS with this PKCS#12 key (tcps://, https://, grpcs://)")
    p.add_argument("--tls-truststore", help="require client certificates this PKCS#12 trust store vouches for")
    p.add_argument("--tls-password-file", help="the stores' password")
    p.add_argument("--tls-crl", help="refuse callers these certificate revocation lists revoke (PEM or DER)")
    p.add_argument("--authz", help="an authorization policy file (gRPC's form), reloaded when it changes")
    p.add_argument("--relay-to", help="answer echoDoubles by calling the component bound under this name, once "
                                      "over each protocol")
    args = p.parse_args()
    secret = None
    if args.secret_file:
        with open(args.secret_file, encoding="utf-8") as f:
            secret = f.read().strip()
    tls = None
    if args.tls_keystore:
        tls = switchboard.Tls(keystore=args.tls_keystore, truststore=args.tls_truststore,
                              password_file=args.tls_password_file, crl=args.tls_crl)
    board = switchboard.connect(args.registry, tls=tls) if args.relay_to else None
    try:
        server = switchboard.serve(
            Relay(board, args.relay_to) if board else Echo(), schema=args.xsd, registry=args.registry, name=args.name, proto=args.proto, wsdl=args.wsdl,
            host=args.host, advertise=args.advertise, lease=args.lease, secret=secret, max_message_bytes=args.max_message_bytes,
            tls=tls, authz=args.authz,
            on_renew=(lambda name, instance: emit("renewed", name=name, instanceId=instance)) if args.verbose_renew
            else None)
    except switchboard.SwitchboardError as e:
        print("echo_component: %s" % e, file=sys.stderr, flush=True)
        return 2
    emit("serving", name=server.name, instanceId=server.instance_id, registry=args.registry,
         endpoints=server.endpoints, leaseSeconds=args.lease)
    try:
        server.wait()   # until SIGTERM (the server unbinds itself) or Ctrl-C
    except KeyboardInterrupt:
        pass
    unbound = server.close() or server.unbound
    if board is not None:
        board.close()
    emit("stopped", name=server.name, unbound=unbound, calls=dict(sorted(server.calls.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
