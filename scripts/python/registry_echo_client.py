#!/usr/bin/env python3
"""A Python client of the echo component that knows only the registry's address.

1. Builds a SOAP client for the registry with zeep from ``<registry>?wsdl`` (fetched at run time)
   and looks the component up by name.
2. From the entry: the gRPC endpoint and the typed .proto (the entry's PROTO document). It
   generates the messages and stub from that .proto alone with grpc_tools and runs the cases of
   ``echo_grpc_client.py`` (NaN payloads, -0.0, infinities, subnormals, empty and null arrays,
   100,000 doubles, a cycle, 100,000-node lists, a nested heterogeneous list, an n-d array, the
   declared fault), bit for bit.
3. From the entry: the WSDL address. It builds a second zeep client from the component's own WSDL,
   checks that the WSDL names the entry's SOAP address, and calls the same operations over SOAP at it: doubles in the SOAP wire form's ``xs:list`` (XML has one
   NaN, so NaN payloads are not expected to survive; every other double is compared by its bits),
   empty and null arrays, and a linked list with a cycle in ``sb-graph``, compared by shape.

Prints a JSON summary with one case per line (``protocol`` says which) and exits 0 only if every
case matched; 2 if the name is not bound or has no endpoint of a protocol asked for.

Over TLS (SOAP only: the registry's WSDL, the component's WSDL and the calls all go through one
requests session holding the CA and, for servers that require one, the client certificate).

Usage:
    python registry_echo_client.py --registry http://127.0.0.1:8081/axis2/services/Registry [--name Echo]
    python registry_echo_client.py --registry https://HOST:PORT/axis2/services/Registry --protocols soap \\
        --cacert ca.pem --cert client.pem --key client-key.pem
"""

import argparse
import math
import os
import random
import re
import shutil
import struct
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # importing echo_grpc_client leaves no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from echo_grpc_client import Interface, add_operation_arguments, cases, print_report, run_cases  # noqa: E402


def zeep_client(wsdl_url, plugins=(), session=None):
    """A zeep client from the WSDL at wsdl_url; with a requests session (TLS: its CA and client
    certificate), the WSDL and every call go through that session."""
    import zeep
    from zeep.transports import Transport

    # no DTDs, entities or external references in what the registry or the component sends
    settings = zeep.Settings(strict=True, forbid_dtd=True, forbid_entities=True, forbid_external=True,
                             xml_huge_tree=False)
    transport = Transport(session=session) if session is not None else None
    return zeep.Client(wsdl_url, settings=settings, plugins=list(plugins), transport=transport)


def tls_session(cacert, cert, key):
    """A requests session that trusts cacert and, given cert and key (PEM), presents them."""
    import requests

    session = requests.Session()
    if cacert:
        # requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE override a session's own CA: the CA given wins
        session.trust_env = False
        session.verify = cacert
    if cert:
        session.cert = (cert, key)
    return session


def xml_schema_doubles():
    """zeep writes a double with Python's str(): 'nan' and 'inf', which XML Schema does not allow.
    Write NaN, INF and -INF instead (reading already accepts them)."""
    from zeep.xsd.types import builtins

    plain = builtins.Double.xmlvalue

    def xmlvalue(self, value):
        if isinstance(value, float) and not math.isfinite(value):
            return "NaN" if value != value else ("INF" if value > 0 else "-INF")
        return plain(self, value)

    builtins.Double.xmlvalue = xmlvalue


def lookup(registry_url, name, session=None):
    client = zeep_client(registry_url + "?wsdl", session=session)
    service = client.create_service(next(iter(client.wsdl.bindings)), registry_url)
    return service.lookup(name=name)


def endpoints_of(entry):
    items = entry.endpoints["item"] if entry.endpoints is not None else []
    return {e.protocol: e.address for e in items if e is not None}


# ---------------------------------------------------------------------------------------------
# SOAP cases, through zeep


def same_double(a, b):
    return (a != a and b != b) or struct.pack("<d", a) == struct.pack("<d", b)


def same_float(a, b):
    return (a != a and b != b) or struct.pack("<f", a) == struct.pack("<f", b)


def received_values_element(history):
    """Whether the last response's wrapper held a <values> element: zeep reads an empty xs:list as
    None, and the wire form says absent is null but an empty element is an empty array."""
    body = history.last_received["envelope"].find("{*}Body")
    return body is not None and len(body) == 1 and body[0].find("{*}values") is not None


def soap_doubles_case(service, history, sent):
    got = service.echoDoubles(values=sent)
    if got is None and received_values_element(history):
        got = []
    if sent is None or got is None:
        return None if sent is got else "sent %r, got %r" % (sent, got)
    if len(sent) != len(got):
        return "%d values sent, %d got" % (len(sent), len(got))
    for i, (a, b) in enumerate(zip(sent, got)):
        if not same_double(a, b):
            return "index %d: sent %r, got %r" % (i, a, b)
    return None


def link_nodes(n, cycle):
    nodes = [{"sb-id": "n%d" % i, "llong": i - 2 ** 62, "sshort": -i, "iint": 2 ** 31 - 1 - i, "ffloat": -0.0 if i % 2 else 0.1,
              "ddouble": [float("nan"), -0.0, float("inf"), 5e-324][i % 4], "sstring": [None, "", "h\u00e9llo \u2713"][i % 3],
              "nextLink": "n%d" % (i + 1) if i + 1 < n else ("n0" if cycle else None)} for i in range(n)]
    return nodes


def received_empty_strings(history, field):
    """The sb-ids of the last response's nodes whose ``field`` element is present but empty: zeep
    reads an empty string element as None, and the wire form says absent is null, empty is ''."""
    return {el.getparent().get("sb-id") for el in history.last_received["envelope"].iterfind(".//{*}" + field)
            if not el.text}


def soap_list_case(service, history, nodes):
    """Sends the nodes as sb-graph with head n0; compares the answer by shape (ids may be renamed)."""
    got = service.echoList(head="n0", **{"sb-graph": {"_value_1": [{"LinkEntry": n} for n in nodes]}})
    got_nodes = {}
    empty_strings = received_empty_strings(history, "sstring")
    for item in (got["sb-graph"]["_value_1"] if got["sb-graph"] is not None else []):
        node = item["LinkEntry"]
        if node["sstring"] is None and node["sb-id"] in empty_strings:
            node["sstring"] = ""
        got_nodes[node["sb-id"]] = node
    mapping, at_sent, at_got = {}, "n0", got["head"]
    by_id = {n["sb-id"]: n for n in nodes}
    while at_sent is not None:
        if at_sent in mapping:
            return None if mapping[at_sent] == at_got else "the cycle closes at another node"
        if at_got not in got_nodes:
            return "node %s came back as %r, which the answer's sb-graph does not hold" % (at_sent, at_got)
        mapping[at_sent] = at_got
        a, b = by_id[at_sent], got_nodes[at_got]
        for field in ("llong", "sshort", "iint", "sstring"):
            if a[field] != b[field]:
                return "%s.%s: sent %r, got %r" % (at_sent, field, a[field], b[field])
        if not same_double(a["ddouble"], b["ddouble"]) or not same_float(a["ffloat"], b["ffloat"]):
            return "%s: sent %r/%r, got %r/%r" % (at_sent, a["ffloat"], a["ddouble"], b["ffloat"], b["ddouble"])
        at_sent, at_got = a["nextLink"], b["nextLink"]
    return None if at_got is None else "the list came back longer"


def wsdl_addresses(client):
    return [port.binding_options.get("address") for service in client.wsdl.services.values()
            for port in service.ports.values()]


def soap_cases(wsdl_url, soap_address, session=None):
    """Calls through the address the component's WSDL names, which must be the entry's."""
    from zeep.plugins import HistoryPlugin

    xml_schema_doubles()
    history = HistoryPlugin()
    client = zeep_client(wsdl_url, [history], session)
    addresses = wsdl_addresses(client)
    service = client.service  # the WSDL's own address, checked below
    rnd = random.Random(2000)
    doubles = [
        ("soap_doubles_edge", [float("nan"), -0.0, float("inf"), float("-inf"), 5e-324, -5e-324, 1.5, 0.0,
                               1.7976931348623157e308, -2.2250738585072014e-308, 0.1]),
        ("soap_doubles_empty", []),
        ("soap_doubles_null", None),
        ("soap_doubles_1000_random_bits",
         [x for x in (struct.unpack("<d", rnd.randbytes(8))[0] for _ in range(1200)) if x == x][:1000]),
    ]
    if addresses != [soap_address]:  # one failed case and no call: calls would go elsewhere
        return [{"name": "soap_wsdl_address", "operation": "wsdl", "ok": False, "protocol": "soap",
                 "detail": "the WSDL names %r, the entry %r" % (addresses, soap_address)}]
    runs = [(name, "echoDoubles", lambda v=v: soap_doubles_case(service, history, v)) for name, v in doubles]
    runs.append(("soap_list_cycle_of_4", "echoList", lambda: soap_list_case(service, history, link_nodes(4, True))))
    runs.append(("soap_list_300_nodes", "echoList", lambda: soap_list_case(service, history, link_nodes(300, False))))
    runs.append(("soap_empty", "empty", lambda: None if service.empty() is None else "an answer to empty"))
    results = []
    for name, op, run in runs:
        result = {"name": name, "operation": op, "ok": False, "protocol": "soap"}
        started = time.monotonic()
        try:
            diff = run()
            result["ok"] = diff is None
            if diff:
                result["detail"] = diff
        except Exception as e:  # a Fault or a transport error is this case's failure, not the run's
            result["detail"] = "%s: %s" % (type(e).__name__, e)
        result["ms"] = round((time.monotonic() - started) * 1000, 1)
        results.append(result)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--registry", required=True, help="the registry's SOAP address (its WSDL is at ?wsdl)")
    parser.add_argument("--name", default="Echo", help="the name the component is bound under")
    parser.add_argument("--protocols", default="grpc,soap", help="which to call: grpc, soap or both")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per gRPC call")
    parser.add_argument("--cacert", help="TLS: the CA certificate (PEM) that signed the registry's and component's")
    parser.add_argument("--cert", help="TLS: this client's certificate (PEM), for servers that require one")
    parser.add_argument("--key", help="TLS: the key (PEM) of --cert")
    add_operation_arguments(parser)
    args = parser.parse_args()
    if not re.match(r"^https?://[^/?#]+/", args.registry):
        parser.error("--registry must be the registry's http:// or https:// address, as './switchboard registry' "
                     "prints it (got %r)" % args.registry)
    protocols = [p for p in args.protocols.split(",") if p]
    if bool(args.cert) != bool(args.key):
        parser.error("--cert and --key go together")
    session = None
    if args.registry.startswith("https://") or args.cacert or args.cert:
        if "grpc" in protocols:
            parser.error("the gRPC cases run on plain text only: with TLS, use --protocols soap")
        session = tls_session(args.cacert, args.cert, args.key)

    try:
        entries = lookup(args.registry, args.name, session)
    except Exception as e:  # unreachable, not a registry, or a Fault: say which, without a traceback
        print("registry_echo_client: cannot look %s up at %s: %s: %s" % (args.name, args.registry, type(e).__name__, e),
              file=sys.stderr)
        return 2
    if not entries:
        print("registry_echo_client: %s is not bound in %s" % (args.name, args.registry), file=sys.stderr)
        return 2
    entry = entries[0]
    endpoints = endpoints_of(entry)
    absent = [p for p in protocols if p not in endpoints]
    if absent or ("grpc" in protocols and not entry.interfaceProto) or ("soap" in protocols and not entry.wsdlUrl):
        print("registry_echo_client: the entry of %s lacks what %s needs (endpoints %s, .proto %s, WSDL %s)"
              % (args.name, protocols, sorted(endpoints), bool(entry.interfaceProto), entry.wsdlUrl), file=sys.stderr)
        return 2

    results = []
    if "grpc" in protocols:
        workdir = tempfile.mkdtemp(prefix="switchboard-py-client-")
        try:
            iface = Interface(entry.interfaceProto, workdir)
            target = endpoints["grpc"].split("://", 1)[1].split("/", 1)[0]
            results += run_cases(iface, target, cases(iface, args), args.timeout)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    if "soap" in protocols:
        results += soap_cases(entry.wsdlUrl, endpoints["soap"], session)

    head = {"registry": args.registry, "name": entry.name, "instanceId": entry.instanceId,
            "endpoints": endpoints, "python": sys.version.split()[0]}
    return print_report(head, results)


if __name__ == "__main__":
    sys.exit(main())
