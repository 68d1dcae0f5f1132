"""Bearer tokens from the Python client: ``connect(..., token=...)`` sends the gRPC ``authorization``
header and the SOAP request's ``Authorization: Bearer`` (a callable's token read again for every
call), never in plain text to another host; and a Java server's denials in each form it may take
reach the caller as ``switchboard.PermissionDenied``. The component here is a stand-in that
records what it was sent and answers every call with a denial, bound in the registry by hand."""

import http.server
import os
import threading
import uuid
from concurrent import futures

import grpc
import pytest

import switchboard
from switchboard._registry import RegistryClient
from switchboard._token import BearerToken

SB = "urn:switchboard:soap"
SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12 = "http://www.w3.org/2003/05/soap-envelope"
# the forms a denial may take on SOAP: a Client fault with an sb:refused detail (what Java servers send
# for refusals), a SOAP 1.2 Sender fault with the sb:PermissionDenied Subcode, an sb:PermissionDenied detail
FAULTS = {
    "refused-detail": (SOAP11, '<faultcode>soapenv:Client</faultcode><faultstring>denied</faultstring><detail>'
                               '<sb:refused xmlns:sb="%s" reason="unauthenticated"/></detail>' % SB),
    "soap12-subcode": (SOAP12, '<soapenv:Code><soapenv:Value>soapenv:Sender</soapenv:Value><soapenv:Subcode>'
                               '<soapenv:Value xmlns:sb="%s">sb:PermissionDenied</soapenv:Value></soapenv:Subcode>'
                               '</soapenv:Code><soapenv:Reason><soapenv:Text>denied</soapenv:Text></soapenv:Reason>'
                               % SB),
    "denied-detail": (SOAP11, '<faultcode>soapenv:Server</faultcode><faultstring>denied</faultstring><detail>'
                              '<sb:PermissionDenied xmlns:sb="%s"/></detail>' % SB),
}


class Recorder:
    """A gRPC and a SOAP listener that note each call's Authorization header and deny it."""

    def __init__(self):
        self.headers = []
        self.fault = "refused-detail"
        self.grpc = grpc.server(futures.ThreadPoolExecutor(2))
        self.grpc.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("switchboard.echo.Echo", {
            "echoDoubles": grpc.unary_unary_rpc_method_handler(self._deny_grpc)}),))
        self.grpc_port = self.grpc.add_insecure_port("127.0.0.1:0")
        self.grpc.start()
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                recorder.headers.append(("soap", self.headers.get("Authorization")))
                ns, fault = FAULTS[recorder.fault]
                body = ('<soapenv:Envelope xmlns:soapenv="%s"><soapenv:Body><soapenv:Fault>%s</soapenv:Fault>'
                        '</soapenv:Body></soapenv:Envelope>' % (ns, fault)).encode()
                self.send_response(500)
                self.send_header("Content-Type", "text/xml" if ns == SOAP11 else "application/soap+xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def _deny_grpc(self, request, context):
        self.headers.append(("grpc", dict(context.invocation_metadata()).get("authorization")))
        context.abort(grpc.StatusCode.PERMISSION_DENIED, "denied by the stand-in")

    def endpoints(self):
        return [("grpc", "grpc://127.0.0.1:%d/Echo" % self.grpc_port),
                ("soap", "http://127.0.0.1:%d/services/Echo" % self.http.server_address[1])]

    def close(self):
        self.grpc.stop(0)
        self.http.shutdown()
        self.http.server_close()


def bind(registry_url, secret, schemas, name, endpoints):
    client = RegistryClient(registry_url)
    with open(os.path.join(schemas, "echo.xsd"), encoding="utf-8") as f:
        xsd = f.read()
    with open(os.path.join(schemas, "Echo.proto"), encoding="utf-8") as f:
        proto = f.read()
    entry = client.entry_dict(name, str(uuid.uuid4()), endpoints, xsd, proto, None, 60, [])
    client.bind(entry, secret)
    return lambda: client.unbind(name, entry["instanceId"], secret)


@pytest.fixture(scope="module")
def recorder(registry_url, secret, schemas):
    r = Recorder()
    unbind = bind(registry_url, secret, schemas, "PyTokenRecorder", r.endpoints())
    yield r
    unbind()
    r.close()


def test_the_token_travels_with_every_call_and_a_denial_is_permission_denied(recorder, registry_url):
    with switchboard.connect(registry_url, token="fixed-token", watch=False) as board:
        echo = board.lookup("PyTokenRecorder")
        recorder.headers.clear()
        with pytest.raises(switchboard.PermissionDenied) as refusal:
            echo.echoDoubles(values=[1.0], protocol="grpc")
        assert (refusal.value.reason, refusal.value.path) == ("permission-denied", "/switchboard.echo.Echo/echoDoubles")
        assert refusal.value.delivery == "not-delivered"
        with pytest.raises(switchboard.PermissionDenied) as refusal:
            echo.echoDoubles(values=[1.0], protocol="soap")
        assert refusal.value.reason == "unauthenticated"
    assert recorder.headers == [("grpc", "Bearer fixed-token"), ("soap", "Bearer fixed-token")]


def test_each_call_reads_the_token_again(recorder, registry_url):
    current = ["alpha"]
    with switchboard.connect(registry_url, token=lambda: current[0], watch=False) as board:
        echo = board.lookup("PyTokenRecorder")
        recorder.headers.clear()
        for protocol, token in (("grpc", "alpha"), ("soap", "alpha"), ("grpc", "beta"), ("soap", "beta")):
            current[0] = token
            with pytest.raises(switchboard.PermissionDenied):
                echo.echoDoubles(values=[1.0], protocol=protocol)
    assert recorder.headers == [("grpc", "Bearer alpha"), ("soap", "Bearer alpha"), ("grpc", "Bearer beta"),
                                ("soap", "Bearer beta")]


@pytest.mark.parametrize("form", sorted(FAULTS))
def test_every_form_of_a_soap_denial_is_permission_denied(recorder, board, form):
    recorder.fault = form
    try:
        echo = board.lookup("PyTokenRecorder")
        recorder.headers.clear()
        with pytest.raises(switchboard.PermissionDenied):
            echo.echoDoubles(values=[1.0])   # the policy's choice; a denial is never repeated elsewhere
        assert len(recorder.headers) == 1, "denied once, not tried again on another protocol"
        assert recorder.headers[0][1] is None, "no token given, none sent"
    finally:
        recorder.fault = "refused-detail"


def test_a_token_never_goes_in_plain_text_to_another_host(registry_url, secret, schemas, recorder):
    with pytest.raises(ValueError, match="refusing to send the bearer token in plain text to http://192.0.2.1"):
        switchboard.connect("http://192.0.2.1:9/axis2/services/Registry", token="secret-token")
    assert BearerToken.may_travel_to("https://registry.example.org/x")
    assert BearerToken.may_travel_to("grpcs://10.0.0.1:443/x")
    assert BearerToken.may_travel_to("http://[::1]:8080/x") and BearerToken.may_travel_to("grpc://localhost:1/x")
    assert not BearerToken.may_travel_to("grpc://10.0.0.1:1/x")
    # an entry whose endpoints are plain text on another host: the call is refused before anything is sent
    unbind = bind(registry_url, secret, schemas, "PyTokenFar", [("grpc", "grpc://192.0.2.1:9/Echo"),
                                                                ("soap", "http://192.0.2.1:9/services/Echo")])
    try:
        with switchboard.connect(registry_url, token="secret-token", watch=False) as board:
            echo = board.lookup("PyTokenFar")
            for protocol in ("grpc", "soap"):
                with pytest.raises(switchboard.TransportError) as refusal:
                    echo.echoDoubles(values=[1.0], protocol=protocol)
                assert refusal.value.delivery == "not-delivered"
                assert "refusing to send the bearer token in plain text" in str(refusal.value)
                assert "secret-token" not in str(refusal.value)
    finally:
        unbind()
