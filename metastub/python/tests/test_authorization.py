"""Identity and authorization on the Python server, and denials as the Python client sees them:
``serve(..., authz=POLICY)`` decides before the operation runs, with the caller's principal from
its client certificate (or anonymous); a denial answers gRPC PERMISSION_DENIED and a SOAP Fault
``sb:PermissionDenied``, and the client raises ``switchboard.PermissionDenied`` on both without
trying the call again elsewhere."""

import os
from urllib.parse import urlparse

import grpc
import pytest
import requests
from lxml import etree

import switchboard
from conftest import bits
from switchboard.authz import PolicyError

ECHO = "/switchboard.echo.Echo/"
POLICY = {
    "name": "echo-policy",
    "deny_rules": [{"name": "nobody-divides", "request": {"paths": [ECHO + "divide"]}}],
    "allow_rules": [
        {"name": "anyone-echoes", "request": {"paths": [ECHO + "echoDoubles"]}},
        {"name": "the-test-client-lists", "source": {"principals": ["CN=switchboard-test-client"]},
         "request": {"paths": [ECHO + "echoList", ECHO + "divide"]}},
    ],
}


class Echo:
    def echoDoubles(self, values):
        return values

    def echoList(self, head):
        return head

    def empty(self):
        pass

    def divide(self, dividend, divisor):
        return {"quotient": dividend // divisor, "remainder": dividend % divisor}


def denied(call, path):
    with pytest.raises(switchboard.PermissionDenied) as refusal:
        call()
    assert (refusal.value.reason, refusal.value.path) == ("permission-denied", ECHO + path)
    assert "may not call " + ECHO + path in str(refusal.value)
    assert "rule" not in str(refusal.value), "the caller is not told the policy's rules"
    return refusal.value


@pytest.mark.parametrize("protocol", ["tcp", "grpc", "soap"])
def test_an_anonymous_caller_gets_what_the_policy_gives_anyone(schemas, registry_url, secret, protocol):
    server = switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url,
                               name="PyAuthz" + protocol, secret=secret, authz=POLICY, handle_sigterm=False)
    # not over the Unix socket, where a caller on this host is its uid (test_tcp.py)
    anonymous = switchboard.connect(registry_url, unix_sockets=False, watch=False)
    try:
        echo = anonymous.lookup("PyAuthz" + protocol)
        assert bits(echo.echoDoubles(values=[1.5, -0.0], protocol=protocol)) == bits([1.5, -0.0])
        denied(lambda: echo.divide(dividend=7, divisor=2, protocol=protocol), "divide")    # a deny rule
        denied(lambda: echo.empty(protocol=protocol), "empty")                            # no allow rule
        head = echo.types.LinkEntry(llong=1, sshort=2, iint=3, ffloat=0.5, ddouble=1.0, sstring="x")
        denied(lambda: echo.echoList(head=head, protocol=protocol), "echoList")  # for a principal, not for anonymous
        assert server.calls == {protocol + " echoDoubles": 1}, "no denied operation ran"
        assert server.denials == {("ANONYMOUS", ECHO + "divide"): 1, ("ANONYMOUS", ECHO + "empty"): 1,
                                  ("ANONYMOUS", ECHO + "echoList"): 1}
    finally:
        anonymous.close()
        server.close()


def test_a_denial_is_not_tried_again_on_another_protocol(schemas, registry_url, secret, board):
    server = switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url,
                               name="PyAuthzOnce", secret=secret, authz=POLICY, handle_sigterm=False)
    try:
        echo = board.lookup("PyAuthzOnce")
        denied(lambda: echo.divide(dividend=7, divisor=2, policy="fixed:grpc"), "divide")
        assert echo.last_call.protocol == "grpc" and not echo.last_call.fallback
        # over the server's Unix socket the caller is this OS user
        assert server.denials == {("UNIX_SOCKET:uid:%d" % os.getuid(), ECHO + "divide"): 1}, \
            "denied once: no repeat over SOAP"
    finally:
        server.close()


def test_the_client_certificates_principal_is_the_callers_identity(schemas, registry_url, secret, tls_files):
    server_tls = switchboard.Tls(keystore=tls_files["server.p12"], truststore=tls_files["trust.p12"],
                                 password_file=tls_files["password"])
    client_tls = switchboard.Tls(keystore=tls_files["client.p12"], truststore=tls_files["trust.p12"],
                                 password_file=tls_files["password"])
    server = switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url,
                               name="PyAuthzTls", secret=secret, tls=server_tls, authz=POLICY, handle_sigterm=False)
    try:
        with switchboard.connect(registry_url, tls=client_tls) as board:
            echo = board.lookup("PyAuthzTls")
            for protocol in ("tcp", "grpc", "soap"):
                a = echo.types.LinkEntry(llong=1, sshort=2, iint=3, ffloat=0.5, ddouble=1.0, sstring="x")
                assert echo.echoList(head=a, protocol=protocol).llong == 1      # allowed for this principal
                denied(lambda: echo.divide(dividend=7, divisor=2, protocol=protocol), "divide")   # deny first
        assert server.calls == {"tcp echoList": 1, "grpc echoList": 1, "soap echoList": 1}
        assert server.denials == {("MUTUAL_TLS:CN=switchboard-test-client", ECHO + "divide"): 3}
    finally:
        server.close()


def soap_call(server, version):
    ns = {"1.1": "http://schemas.xmlsoap.org/soap/envelope/", "1.2": "http://www.w3.org/2003/05/soap-envelope"}[version]
    body = ('<e:Envelope xmlns:e="%s"><e:Body><divide xmlns="urn:switchboard:echo"><dividend>7</dividend>'
            '<divisor>2</divisor></divide></e:Body></e:Envelope>' % ns).encode()
    content_type = "text/xml" if version == "1.1" else "application/soap+xml"
    r = requests.post(server.soap_address, data=body, timeout=30, headers={"Content-Type": content_type})
    return r.status_code, etree.fromstring(r.content), ns


def test_the_denials_on_the_wire_are_what_java_callers_read(schemas):
    """gRPC PERMISSION_DENIED; SOAP 1.1 faultcode sb:PermissionDenied, SOAP 1.2 a Sender fault with
    that Subcode; both with the sb:refused detail that older readers of refusals already take."""
    server = switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), authz=POLICY, handle_sigterm=False)
    sb = "urn:switchboard:soap"
    try:
        target = urlparse(server.grpc_address).netloc
        with grpc.insecure_channel(target) as channel:
            with pytest.raises(grpc.RpcError) as refusal:
                channel.unary_unary(ECHO + "divide")(b"\x08\x07\x10\x02", timeout=30)
        assert refusal.value.code() == grpc.StatusCode.PERMISSION_DENIED
        status, doc, ns = soap_call(server, "1.1")
        fault = doc.find("{%s}Body/{%s}Fault" % (ns, ns))
        code = fault.find("faultcode")
        assert status == 500 and code.text == "sb:PermissionDenied" and code.nsmap["sb"] == sb
        assert fault.find("detail/{%s}refused" % sb).attrib == {"reason": "permission-denied", "path": ECHO + "divide"}
        status, doc, ns = soap_call(server, "1.2")
        fault = doc.find("{%s}Body/{%s}Fault" % (ns, ns))
        assert [v.text for v in fault.iter("{%s}Value" % ns)] == ["soapenv:Sender", "sb:PermissionDenied"]
        assert server.calls == {}
    finally:
        server.close()


def test_a_policy_that_does_not_parse_refuses_to_serve(schemas, workdir):
    path = os.path.join(workdir, "unparsable-policy.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"name": "p", "allow_rules": [\n  {"name": "r", "request": {"paths": ["/a/b"]}},\n]}')
    with pytest.raises(PolicyError, match="is not JSON: line 3 column 1"):
        switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), authz=path, handle_sigterm=False)


def test_a_changed_policy_file_takes_effect_on_a_running_server(schemas, workdir, board, registry_url, secret):
    import json

    path = os.path.join(workdir, "running-policy.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(POLICY, f)
    server = switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url,
                               name="PyAuthzReload", secret=secret, authz=path, handle_sigterm=False)
    server.authz.check_seconds = 0   # look at the file on every call
    try:
        echo = board.lookup("PyAuthzReload")
        denied(lambda: echo.empty(protocol="soap"), "empty")
        opened = dict(POLICY, name="open", allow_rules=POLICY["allow_rules"] + [
            {"name": "anyone-empties", "request": {"paths": [ECHO + "empty"]}}])
        with open(path, "w", encoding="utf-8") as f:
            json.dump(opened, f)
        echo.empty(protocol="soap")
        echo.empty(protocol="grpc")
        assert server.calls == {"soap empty": 1, "grpc empty": 1}
    finally:
        server.close()
