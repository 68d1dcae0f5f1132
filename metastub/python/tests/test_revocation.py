"""A Python server's certificate revocation lists (``switchboard.Tls(crl=...)``, the Java side's
``--tls-crl``): a revoked caller is refused at the handshake over tcp and SOAP and at the call over
gRPC, one revoked while its connections are open at its next calls on them, a list past its next
update refuses everyone, and a list no authority of the trust store signed is refused at start and
as a replacement. The suite's test CA keeps its key, so these tests make a PKI of their own."""

import datetime
import ipaddress
import os
import shutil

import pytest

import switchboard
from conftest import bits

PROTOCOLS = ("tcp", "grpc", "soap")
PASSWORD = "revocation-test"


class Echo:
    def echoDoubles(self, values):
        return values


class Pki:
    """A CA, a server certificate for 127.0.0.1, client certificates by name, and lists signed by
    the CA (or by a stranger), written as the PKCS#12 and PEM files the flags take."""

    def __init__(self, directory):
        from cryptography.hazmat.primitives.asymmetric import ec

        self.directory = str(directory)
        self.now = datetime.datetime.now(datetime.timezone.utc)
        self.ca_key = ec.generate_private_key(ec.SECP256R1())
        self.ca = self._certificate("revocation test CA", self.ca_key.public_key(), None, ca=True)
        self.serials = {}
        self.trust = self._store("trust.p12", None, None, [self.ca])
        self.server = self._leaf("server", dns="localhost")

    def _certificate(self, name, public_key, issuer, ca=False, dns=None, uri=None):
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.x509.oid import NameOID

        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        issuer_name, issuer_key = (subject, self.ca_key) if issuer is None else issuer
        builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer_name).public_key(public_key)
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(self.now - datetime.timedelta(days=1))
                   .not_valid_after(self.now + datetime.timedelta(days=2))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if dns:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName(dns)]), critical=False)
        if uri:
            builder = builder.add_extension(x509.SubjectAlternativeName([x509.UniformResourceIdentifier(uri)]),
                                            critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    def _store(self, file, key, certificate, extra):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.serialization import pkcs12

        path = os.path.join(self.directory, file)
        with open(path, "wb") as f:
            f.write(pkcs12.serialize_key_and_certificates(
                file.encode("ascii") if key else None, key, certificate, extra,
                serialization.BestAvailableEncryption(PASSWORD.encode("utf-8"))))
        return path

    def _leaf(self, name, dns=None):
        from cryptography.hazmat.primitives.asymmetric import ec

        key = ec.generate_private_key(ec.SECP256R1())
        certificate = self._certificate(name, key.public_key(), (self.ca.subject, self.ca_key), dns=dns,
                                        uri=None if dns else "spiffe://test/" + name)
        self.serials[name] = certificate.serial_number
        return self._store(name + ".p12", key, certificate, None)

    def client(self, name):
        """A client's Tls: its own certificate, trusting the CA."""
        if name not in self.serials:
            self._leaf(name)
        return switchboard.Tls(keystore=os.path.join(self.directory, name + ".p12"), truststore=self.trust,
                               password=PASSWORD)

    def crl(self, file, revoked=(), expired=False, signer=None):
        """A list revoking the named clients, PEM; ``expired``: past its next update; ``signer``: a
        (name, key) other than the CA's."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization

        issuer_name, key = signer or (self.ca.subject, self.ca_key)
        last = self.now - datetime.timedelta(days=2 if expired else 0, minutes=1)
        builder = (x509.CertificateRevocationListBuilder().issuer_name(issuer_name).last_update(last)
                   .next_update(last + datetime.timedelta(days=1)))
        for name in revoked:
            builder = builder.add_revoked_certificate(
                x509.RevokedCertificateBuilder().serial_number(self.serials[name]).revocation_date(last).build())
        path = os.path.join(self.directory, file)
        with open(path, "wb") as f:
            f.write(builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM))
        return path

    def stranger(self):
        from cryptography.hazmat.primitives.asymmetric import ec

        return self.ca.subject, ec.generate_private_key(ec.SECP256R1())   # the CA's name, another key

    def server_tls(self, crl):
        return switchboard.Tls(keystore=self.server, truststore=self.trust, password=PASSWORD, crl=crl)


@pytest.fixture
def pki(tmp_path):
    made = Pki(tmp_path)
    made.client("good")
    made.client("revoked")
    return made


def replace(path, source):
    shutil.copyfile(source, path + ".next")
    os.replace(path + ".next", path)


def serve(registry_url, secret, schemas, name, tls):
    return switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url, name=name,
                             secret=secret, tls=tls)


def refused_at_handshake(echo, protocol):
    with pytest.raises(switchboard.TransportError) as refused:
        echo.echoDoubles(values=[1.0], protocol=protocol, timeout=10)
    assert refused.value.delivery == switchboard.TransportError.NOT_DELIVERED, (protocol, refused.value)


def refused_unauthenticated(echo, protocol):
    with pytest.raises(switchboard.PermissionDenied) as refused:
        echo.echoDoubles(values=[1.0], protocol=protocol, timeout=10)
    assert refused.value.reason == switchboard.PermissionDenied.UNAUTHENTICATED, (protocol, refused.value)
    assert "no longer trusted" in str(refused.value), (protocol, refused.value)


def test_a_revoked_caller_is_refused_and_others_are_served_on_every_protocol(registry_url, secret, schemas, pki):
    server = serve(registry_url, secret, schemas, "PyRevocation", pki.server_tls(pki.crl("ca.crl", ["revoked"])))
    try:
        with switchboard.connect(registry_url, tls=pki.client("good")) as board:
            echo = board.lookup("PyRevocation")
            for protocol in PROTOCOLS:
                assert bits(echo.echoDoubles(values=[-0.0, 2.5], protocol=protocol)) == bits([-0.0, 2.5])
        with switchboard.connect(registry_url, tls=pki.client("revoked")) as board:
            echo = board.lookup("PyRevocation")
            refused_at_handshake(echo, "tcp")
            refused_at_handshake(echo, "soap")
            refused_unauthenticated(echo, "grpc")   # grpcio's handshake reads no lists: each call checks
        assert server.calls == {"tcp echoDoubles": 1, "grpc echoDoubles": 1, "soap echoDoubles": 1}
    finally:
        server.close()


def test_a_caller_revoked_while_its_connections_are_open_is_refused_at_its_next_calls(
        registry_url, secret, schemas, pki):
    crl = pki.crl("ca.crl")
    server = serve(registry_url, secret, schemas, "PyRevokedOpen", pki.server_tls(crl))
    try:
        with switchboard.connect(registry_url, tls=pki.client("good")) as board:
            echo = board.lookup("PyRevokedOpen")
            for protocol in PROTOCOLS:   # a connection open on each
                assert bits(echo.echoDoubles(values=[1.5], protocol=protocol)) == bits([1.5])
            replace(crl, pki.crl("next.crl", ["good"]))
            for protocol in PROTOCOLS:
                # the files are looked at at most every 100 ms: a call or two may pass before
                passed = 0
                while True:
                    try:
                        echo.echoDoubles(values=[1.0], protocol=protocol, timeout=10)
                    except switchboard.PermissionDenied:
                        break
                    passed += 1
                    assert passed < 1000, "%s calls still run on a revoked caller's connection" % protocol
                # refused on the connection it had (a new one would fail its handshake over tcp and SOAP)
                refused_unauthenticated(echo, protocol)
            ran = server.calls
            refused_unauthenticated(echo, "tcp")
            assert server.calls == ran, "a call of the revoked caller ran"
    finally:
        server.close()


def test_a_list_past_its_next_update_refuses_every_caller(registry_url, secret, schemas, pki):
    server = serve(registry_url, secret, schemas, "PyRevocationExpired", pki.server_tls(pki.crl("ca.crl", expired=True)))
    try:
        with switchboard.connect(registry_url, tls=pki.client("good")) as board:
            echo = board.lookup("PyRevocationExpired")
            refused_at_handshake(echo, "tcp")
            refused_at_handshake(echo, "soap")
            refused_unauthenticated(echo, "grpc")
        assert server.calls == {}
    finally:
        server.close()


def test_a_list_no_authority_of_the_trust_store_signed_is_refused(registry_url, secret, schemas, pki, tmp_path, capfd):
    forged = pki.crl("forged.crl", ["good"], signer=pki.stranger())
    with pytest.raises(ValueError, match="no certificate of the trust store signed"):
        pki.server_tls(forged)
    garbage = str(tmp_path / "garbage.crl")
    with open(garbage, "wb") as f:
        f.write(b"-----BEGIN X509 CRL-----\nbm90IGEgbGlzdA==\n-----END X509 CRL-----\n")
    with pytest.raises(ValueError, match="no certificate revocation list that can be read"):
        pki.server_tls(garbage)
    with pytest.raises(ValueError, match="needs a trust store"):
        switchboard.Tls(keystore=pki.server, password=PASSWORD, crl=forged)

    crl = pki.crl("ca.crl", ["revoked"])
    server = serve(registry_url, secret, schemas, "PyRevocationForged", pki.server_tls(crl))
    try:
        replace(crl, forged)   # refused with a warning: the list before stays in force
        with switchboard.connect(registry_url, tls=pki.client("good")) as board:
            echo = board.lookup("PyRevocationForged")
            for protocol in PROTOCOLS:
                assert bits(echo.echoDoubles(values=[3.0], protocol=protocol)) == bits([3.0])
        with switchboard.connect(registry_url, tls=pki.client("revoked")) as board:
            refused_at_handshake(board.lookup("PyRevocationForged"), "tcp")
        assert "which no certificate of the trust store signed" in capfd.readouterr().err
    finally:
        server.close()


def test_lists_are_read_in_der_and_several_to_a_pem_file(pki, tmp_path):
    """The forms ``keytool -gencrl`` and ``openssl ca -gencrl`` write: one list in DER, or PEM lists
    one after another (here a list past its next update beside the one in force)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    def certificate(name):
        with open(os.path.join(pki.directory, name + ".p12"), "rb") as f:
            return pkcs12.load_key_and_certificates(f.read(), PASSWORD.encode("utf-8"))[1]

    with open(pki.crl("ca.crl", ["revoked"]), "rb") as f:
        current = f.read()
    der = str(tmp_path / "ca.der.crl")
    with open(der, "wb") as f:
        f.write(x509.load_pem_x509_crl(current).public_bytes(serialization.Encoding.DER))
    both = str(tmp_path / "both.crl")
    with open(pki.crl("old.crl", ["good"], expired=True), "rb") as old, open(both, "wb") as f:
        f.write(old.read() + current)
    for path in (der, both):
        tls = pki.server_tls(path)
        assert tls.still_trusts(certificate("good")), path
        assert not tls.still_trusts(certificate("revoked")), path
