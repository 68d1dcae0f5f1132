"""TLS from the PKCS#12 files of the Java flags (--tls-keystore, --tls-truststore,
--tls-password-file): a Java component that requires client certificates, called over tcps://,
grpcs:// and https://, and a Python component served with TLS the same way; a client without a key
is turned away on every protocol."""

import os
import select
import socket
import ssl
from urllib.parse import urlparse

import pytest

import switchboard
from conftest import bits


def client_tls(files, key=True):
    return switchboard.Tls(keystore=files["client.p12"] if key else None, truststore=files["trust.p12"],
                           password_file=files["password"])


class Echo:
    def echoDoubles(self, values):
        return values


PROTOCOLS = ("tcp", "grpc", "soap")


def calls_every_protocol(board, name):
    echo = board.lookup(name)
    assert echo.entries[0].endpoint("tcp").startswith("tcps://")
    assert echo.entries[0].endpoint("grpc").startswith("grpcs://")
    assert echo.entries[0].endpoint("soap").startswith("https://")
    for protocol in PROTOCOLS:
        assert bits(echo.echoDoubles(values=[1.5, -0.0], protocol=protocol)) == bits([1.5, -0.0])
        assert echo.last_call.protocol == protocol


def test_a_java_component_with_mutual_tls(registry_url, tls_files):
    with switchboard.connect(registry_url, tls=client_tls(tls_files)) as board:
        calls_every_protocol(board, "EchoTls")
    with switchboard.connect(registry_url, tls=client_tls(tls_files, key=False)) as keyless:
        echo = keyless.lookup("EchoTls")
        for protocol in PROTOCOLS:
            with pytest.raises(switchboard.TransportError) as refused:
                echo.echoDoubles(values=[1.0], protocol=protocol, timeout=10)
            # refused at the handshake: nothing ran, and the client says so (the Java SOAP server's
            # close lingers, so an HTTP client still writing reads its alert, not a reset)
            assert refused.value.delivery == switchboard.TransportError.NOT_DELIVERED, (protocol, refused.value)


def test_a_python_component_with_mutual_tls(registry_url, secret, schemas, tls_files):
    server_tls = switchboard.Tls(keystore=tls_files["server.p12"], truststore=tls_files["trust.p12"],
                                 password_file=tls_files["password"])
    server = switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url, name="PyTls",
                               secret=secret, tls=server_tls)
    try:
        with switchboard.connect(registry_url, tls=client_tls(tls_files)) as board:
            calls_every_protocol(board, "PyTls")
        with switchboard.connect(registry_url, tls=client_tls(tls_files, key=False)) as keyless:
            echo = keyless.lookup("PyTls")
            for protocol in PROTOCOLS:
                with pytest.raises(switchboard.TransportError) as refused:
                    echo.echoDoubles(values=[1.0], protocol=protocol, timeout=10)
                assert refused.value.delivery == switchboard.TransportError.NOT_DELIVERED, (protocol, refused.value)
        assert server.calls == {"tcp echoDoubles": 1, "grpc echoDoubles": 1, "soap echoDoubles": 1}
    finally:
        server.close()


def test_a_refused_caller_still_writing_reads_the_alert_not_a_reset(registry_url, secret, schemas, tls_files):
    """The Python SOAP server's close after a refused handshake lingers: a client that writes its
    request after the server sent its alert (TLS 1.3: the client's half of the handshake was done)
    gets its bytes through and then reads the alert, where a close with them unread reset the
    connection under the writer (a broken pipe: "may have run")."""
    server_tls = switchboard.Tls(keystore=tls_files["server.p12"], truststore=tls_files["trust.p12"],
                                 password_file=tls_files["password"])
    server = switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url,
                               name="PyTlsLinger", secret=secret, tls=server_tls, tcp=False)
    try:
        address = urlparse(server.soap_address)
        context = client_tls(tls_files, key=False).client_ssl_context()
        with socket.create_connection((address.hostname, address.port), timeout=15) as raw:
            with context.wrap_socket(raw, server_hostname=address.hostname) as conn:
                assert conn.version() == "TLSv1.3"
                conn.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: 2000000\r\n\r\n"
                              % address.path).encode("ascii"))
                readable, _, _ = select.select([conn], [], [], 15)   # the server's alert has come
                assert readable, "the server did not refuse the certificate"
                try:
                    for _ in range(30):   # the request's body, written after the refusal
                        conn.sendall(bytes(64 << 10))
                except OSError as e:
                    pytest.fail("the connection broke under the writer instead of answering with the alert: %r" % e)
                with pytest.raises(ssl.SSLError) as alert:
                    conn.recv(1)
                assert "CERTIFICATE_REQUIRED" in str(alert.value).upper(), alert.value
    finally:
        server.close()
    assert server.calls == {}
