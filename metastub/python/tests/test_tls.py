"""TLS from the PKCS#12 files of the Java flags (--tls-keystore, --tls-truststore,
--tls-password-file): a Java component that requires client certificates, called over tcps://,
grpcs:// and https://, and a Python component served with TLS the same way; a client without a key
is turned away on every protocol; a Python server's stores replaced while it serves."""

import datetime
import ipaddress
import os
import select
import shutil
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


def rogue_stores(directory, password):
    """A self-signed key no trust store of the suite holds (for 127.0.0.1), and a trust store of its
    certificate alone: PKCS#12 files with the suite's password, as the Java stores are."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "rogue")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                               x509.DNSName("localhost")]), critical=False)
                   .sign(key, hashes.SHA256()))
    encryption = serialization.BestAvailableEncryption(password.encode("utf-8"))
    keystore, truststore = os.path.join(directory, "rogue.p12"), os.path.join(directory, "rogue-trust.p12")
    with open(keystore, "wb") as f:
        f.write(pkcs12.serialize_key_and_certificates(b"rogue", key, certificate, None, encryption))
    with open(truststore, "wb") as f:
        f.write(pkcs12.serialize_key_and_certificates(None, None, None, [certificate], encryption))
    return keystore, truststore


def replace(path, source):
    """Renames a copy of ``source`` into ``path``, as a renewal does: the server never reads half a file."""
    shutil.copyfile(source, path + ".next")
    os.replace(path + ".next", path)


def test_a_python_servers_stores_replaced_while_it_serves_take_effect_at_the_next_connection(
        registry_url, secret, schemas, tls_files, tmp_path):
    """The key and trust stores are read again when their files change, for the next connection, on
    every protocol: a caller of a withdrawn authority is refused (nothing runs) though its client's
    TLS could resume its earlier sessions, restored it is served, a replacement that cannot be read
    leaves the stores before in force, and a key store replaced is what new connections are shown."""
    with open(tls_files["password"], encoding="utf-8") as f:
        password = f.read().strip()
    rogue_key, rogue_trust = rogue_stores(str(tmp_path), password)
    key, trust = str(tmp_path / "server.p12"), str(tmp_path / "trust.p12")
    shutil.copyfile(tls_files["server.p12"], key)
    shutil.copyfile(tls_files["trust.p12"], trust)
    garbage = str(tmp_path / "garbage.p12")
    with open(garbage, "wb") as f:
        f.write(b"0 not a PKCS#12 store")
    server = switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url,
                               name="PyTlsRenewed", secret=secret,
                               tls=switchboard.Tls(keystore=key, truststore=trust, password_file=tls_files["password"]))
    caller = client_tls(tls_files)   # one client TLS throughout: it may resume its sessions

    def call_each(refused):
        with switchboard.connect(registry_url, tls=caller) as board:   # new connections
            echo = board.lookup("PyTlsRenewed")
            for protocol in PROTOCOLS:
                if refused:
                    with pytest.raises(switchboard.TransportError):
                        echo.echoDoubles(values=[1.0], protocol=protocol, timeout=10)
                else:
                    assert bits(echo.echoDoubles(values=[-0.0], protocol=protocol)) == bits([-0.0])

    try:
        call_each(refused=False)
        replace(trust, rogue_trust)
        call_each(refused=True)
        replace(trust, garbage)   # refused: the rogue-only store stays in force
        call_each(refused=True)
        replace(trust, tls_files["trust.p12"])
        call_each(refused=False)
        replace(key, rogue_key)   # the client refuses a server certificate no authority of its own signed
        call_each(refused=True)
        assert server.calls == {"tcp echoDoubles": 2, "grpc echoDoubles": 2, "soap echoDoubles": 2}
    finally:
        server.close()
