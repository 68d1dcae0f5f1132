"""TLS from the PKCS#12 files of the Java flags (--tls-keystore, --tls-truststore,
--tls-password-file): a Java component that requires client certificates, called over tcps://,
grpcs:// and https://, and a Python component served with TLS the same way; a client without a key
is turned away on every protocol."""

import os

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
                with pytest.raises(switchboard.TransportError):
                    echo.echoDoubles(values=[1.0], protocol=protocol, timeout=10)
        assert server.calls == {"tcp echoDoubles": 1, "grpc echoDoubles": 1, "soap echoDoubles": 1}
    finally:
        server.close()
