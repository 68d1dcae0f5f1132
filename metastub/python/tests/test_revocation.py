"""Certificate revocation lists in the Python package (``switchboard.Tls(crl=...)``, the Java side's
``--tls-crl``). A server: a revoked caller is refused at the handshake over tcp and SOAP and at the
call over gRPC, one revoked while its connections are open at its next calls on them, a list past
its next update refuses everyone, a list no authority of the trust store signed is refused at start
and as a replacement, and the lists ``keytool -gencrl`` writes are read. Without lists, a caller
whose authority leaves the trust store while its connections are open is refused at its next calls
on them, and one under an intermediate authority is served on while its root stays. A client: a server its lists
revoke is refused over tcp and https, gRPC (whose TLS in grpcio reads no lists) is not used, and an
https registry's changes are polled rather than streamed. Most tests make a PKI of their own; the
suite's test CA (the Java side's, which keeps its key) signed the keytool lists."""

import datetime
import ipaddress
import os
import shutil
import time

import pytest
import requests

import switchboard
from conftest import bits, setting, until
from switchboard import _tcp
from test_limits import recording_peers

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

    def _leaf(self, name, dns=None, issuer=None):
        """``issuer``: (certificate, key) of an intermediate authority, which the store holds too."""
        from cryptography.hazmat.primitives.asymmetric import ec

        key = ec.generate_private_key(ec.SECP256R1())
        signer = (self.ca.subject, self.ca_key) if issuer is None else (issuer[0].subject, issuer[1])
        certificate = self._certificate(name, key.public_key(), signer, dns=dns,
                                        uri=None if dns else "spiffe://test/" + name)
        self.serials[name] = certificate.serial_number
        return self._store(name + ".p12", key, certificate, None if issuer is None else [issuer[0]])

    def intermediate_client(self, name):
        """A client's Tls whose certificate an intermediate authority (signed by the CA) issued; the
        client sends both."""
        from cryptography.hazmat.primitives.asymmetric import ec

        key = ec.generate_private_key(ec.SECP256R1())
        intermediate = self._certificate(name + " issuing CA", key.public_key(), (self.ca.subject, self.ca_key),
                                         ca=True)
        self._leaf(name, issuer=(intermediate, key))
        return self.client(name)

    def trust_store(self, file, *authorities):
        """A trust store of these certificates (``another_ca()``'s, ``self.ca``)."""
        return self._store(file, None, None, list(authorities))

    def another_ca(self):
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "another test CA")])
        return (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(self.now - datetime.timedelta(days=1))
                .not_valid_after(self.now + datetime.timedelta(days=2))
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .sign(key, hashes.SHA256()))

    def client(self, name):
        """A client's Tls: its own certificate, trusting the CA."""
        if name not in self.serials:
            self._leaf(name)
        return switchboard.Tls(keystore=os.path.join(self.directory, name + ".p12"), truststore=self.trust,
                               password=PASSWORD)

    def crl(self, file, revoked=(), expired=False, signer=None, lapsing=None):
        """A list revoking the named clients, PEM; ``expired``: past its next update; ``lapsing``:
        due for its next update that many seconds from now; ``signer``: a (name, key) other than
        the CA's."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization

        issuer_name, key = signer or (self.ca.subject, self.ca_key)
        last = self.now - datetime.timedelta(days=2 if expired else 0, minutes=1)
        next_update = last + datetime.timedelta(days=1)
        if lapsing is not None:
            next_update = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=lapsing)
        builder = (x509.CertificateRevocationListBuilder().issuer_name(issuer_name).last_update(last)
                   .next_update(next_update))
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


def calls_until_refused(echo, protocol):
    """Calls until one is refused as no longer trusted (the files are looked at at most every 100 ms:
    a call or two may pass before), then once more on the same connection."""
    passed = 0
    while True:
        try:
            echo.echoDoubles(values=[1.0], protocol=protocol, timeout=10)
        except switchboard.PermissionDenied:
            break
        passed += 1
        assert passed < 1000, "%s calls still run on an untrusted caller's connection" % protocol
    refused_unauthenticated(echo, protocol)


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


@pytest.mark.parametrize("withdrawn_by", ["revocation list", "trust store without lists"])
def test_a_caller_revoked_while_its_connections_are_open_is_refused_at_its_next_calls(
        registry_url, secret, schemas, pki, withdrawn_by):
    if withdrawn_by == "revocation list":
        path = pki.crl("ca.crl")
        tls = pki.server_tls(path)

        def withdraw():
            replace(path, pki.crl("next.crl", ["good"]))
    else:   # its authority leaves the trust store
        path = pki.trust_store("server-trust.p12", pki.ca)
        tls = switchboard.Tls(keystore=pki.server, truststore=path, password=PASSWORD)

        def withdraw():
            replace(path, pki.trust_store("others.p12", pki.another_ca()))
    server = serve(registry_url, secret, schemas, "PyRevokedOpen", tls)
    try:
        with switchboard.connect(registry_url, tls=pki.client("good")) as board:
            echo = board.lookup("PyRevokedOpen")
            for protocol in PROTOCOLS:   # a connection open on each
                assert bits(echo.echoDoubles(values=[1.5], protocol=protocol)) == bits([1.5])
            withdraw()
            for protocol in PROTOCOLS:
                # refused on the connection it had (a new one would fail its handshake over tcp and SOAP)
                calls_until_refused(echo, protocol)
            ran = server.calls
            refused_unauthenticated(echo, "tcp")
            assert server.calls == ran, "a call of the revoked caller ran"
    finally:
        server.close()


def test_a_caller_under_an_intermediate_authority_is_served_while_its_root_stays_in_the_trust_store(
        registry_url, secret, schemas, pki):
    trust = pki.trust_store("server-trust.p12", pki.ca)
    server_tls = switchboard.Tls(keystore=pki.server, truststore=trust, password=PASSWORD)
    server = serve(registry_url, secret, schemas, "PyIntermediate", server_tls)
    try:
        with switchboard.connect(registry_url, tls=pki.intermediate_client("branch")) as board:
            echo = board.lookup("PyIntermediate")
            for protocol in PROTOCOLS:
                assert bits(echo.echoDoubles(values=[2.5], protocol=protocol)) == bits([2.5])
            replace(trust, pki.trust_store("wider.p12", pki.another_ca(), pki.ca))   # the root stays
            until(lambda: server_tls.refresh() or server_tls.generation == 2, "the new trust store is read")
            for protocol in PROTOCOLS:   # judged again, by the chain the caller sent, on the same connections
                assert bits(echo.echoDoubles(values=[-0.0], protocol=protocol)) == bits([-0.0]), protocol
            replace(trust, pki.trust_store("others.p12", pki.another_ca()))   # the root leaves
            for protocol in PROTOCOLS:
                calls_until_refused(echo, protocol)
        assert all(server.calls.get("%s echoDoubles" % p, 0) >= 2 for p in PROTOCOLS), server.calls
    finally:
        server.close()


def test_the_path_to_the_trust_store_is_walked_through_the_sent_chain_and_nothing_else(pki):
    from cryptography.hazmat.primitives.serialization import pkcs12

    def sent(name):
        with open(os.path.join(pki.directory, name + ".p12"), "rb") as f:
            store = pkcs12.load_pkcs12(f.read(), PASSWORD.encode("utf-8"))
        return store.cert.certificate, [c.certificate for c in store.additional_certs]

    pki.intermediate_client("branch")
    leaf, chain = sent("branch")
    other = pki.another_ca()
    trusts_root = switchboard.Tls(keystore=pki.server, truststore=pki.trust_store("root.p12", pki.ca),
                                  password=PASSWORD)
    trusts_other = switchboard.Tls(keystore=pki.server, truststore=pki.trust_store("other.p12", other),
                                   password=PASSWORD)
    assert trusts_root.still_trusts(leaf, chain)
    assert not trusts_root.still_trusts(leaf), "an intermediate's certificate without its chain"
    assert not trusts_other.still_trusts(leaf, chain)
    good, _ = sent("good")
    assert trusts_root.still_trusts(good) and not trusts_other.still_trusts(good)
    assert not trusts_root.still_trusts(leaf, [good]), "a chain that does not lead to the leaf's issuer"
    # a stranger's chain padded with certificates of its own: at most MAX_CHAIN_SENT are looked at
    from switchboard.tls import MAX_CHAIN_SENT
    padding = [pki.another_ca() for _ in range(MAX_CHAIN_SENT)]
    assert trusts_root.still_trusts(leaf, chain + padding), "the intermediate sent first, padding after"
    assert not trusts_root.still_trusts(leaf, padding + chain), "the intermediate past the walk's bound"
    # no chain shown (a resumed session): the verdict of a handshake by the stores in force stands
    assert trusts_root.still_trusts(leaf, (), judged_by=trusts_root.generation)
    assert not trusts_root.still_trusts(leaf, (), judged_by=trusts_root.generation - 1)
    assert not trusts_other.still_trusts(good, (), judged_by=trusts_other.generation - 1)


def test_a_client_presents_its_renewed_certificate_on_its_next_connections(registry_url, secret, schemas, pki,
                                                                           monkeypatch):
    """The client's key store replaced while it runs (a renewed certificate, here of another name):
    the connections it makes from then on, on each protocol, present the new one; no restart, as on
    the servers. gRPC takes it at the next call (a new channel), SOAP at its next request (a new
    connection pool), tcp at its next connection (here after 0.2 s unused instead of 30)."""
    monkeypatch.setattr(_tcp, "IDLE_REPLACE_SECONDS", 0.2)
    server = switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url,
                               name="PyRenewedClient", secret=secret,
                               tls=switchboard.Tls(keystore=pki.server, truststore=pki.trust, password=PASSWORD))
    principals = recording_peers(server, lambda peer: peer.principal)
    client = pki.client("first")
    try:
        with switchboard.connect(registry_url, tls=client) as board:
            echo = board.lookup("PyRenewedClient")
            for protocol in PROTOCOLS:
                assert bits(echo.echoDoubles(values=[1.5], protocol=protocol)) == bits([1.5])
            assert principals == ["spiffe://test/first"] * 3
            pki.client("second")   # a certificate of another name, in a key store of its own
            replace(os.path.join(pki.directory, "first.p12"), os.path.join(pki.directory, "second.p12"))
            time.sleep(0.3)   # over the files' look interval (0.1 s) and tcp's idle replacement (0.2 s here)
            del principals[:]
            for protocol in PROTOCOLS:
                assert bits(echo.echoDoubles(values=[-0.0], protocol=protocol)) == bits([-0.0])
                assert echo.last_call.protocol == protocol
            assert principals == ["spiffe://test/second"] * 3
            assert client.generation == 2
        assert server.calls == {"tcp echoDoubles": 2, "grpc echoDoubles": 2, "soap echoDoubles": 2}
    finally:
        server.close()


def test_a_list_past_its_next_update_refuses_every_caller(registry_url, secret, schemas, pki):
    server = serve(registry_url, secret, schemas, "PyRevocationExpired",
                   pki.server_tls(pki.crl("ca.crl", expired=True)))
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


def p12_certificate(pki, name):
    from cryptography.hazmat.primitives.serialization import pkcs12

    with open(os.path.join(pki.directory, name + ".p12"), "rb") as f:
        return pkcs12.load_key_and_certificates(f.read(), PASSWORD.encode("utf-8"))[1]


def test_a_caller_judged_trusted_is_refused_once_the_list_passes_its_next_update(pki):
    """A server remembers its judgement of a caller's certificate until the files change, and no
    longer than the lists it rested on are in force: calls on a connection already open are refused
    once the list is past its next update (fail closed), with no file changed."""
    tls = pki.server_tls(pki.crl("ca.crl", lapsing=3))
    good = p12_certificate(pki, "good")
    assert tls.still_trusts(good)
    until(lambda: not tls.still_trusts(good), "still trusted past the list's next update", seconds=30)
    assert not tls.still_trusts(good)


def test_lists_are_read_in_der_and_several_to_a_pem_file(pki, tmp_path):
    """The forms ``keytool -gencrl`` and ``openssl ca -gencrl`` write: one list in DER, or PEM lists
    one after another (here a list past its next update beside the one in force)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

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
        assert tls.still_trusts(p12_certificate(pki, "good")), path
        assert not tls.still_trusts(p12_certificate(pki, "revoked")), path


def test_a_python_server_reads_the_lists_keytool_writes(registry_url, secret, schemas, tls_files, tmp_path):
    """The Java side's lists (``keytool -gencrl``, signed by the suite's CA): first one that revokes
    nothing, then, replaced, one that revokes the Java test client's certificate."""
    lists = os.path.dirname(tls_files["trust.p12"])
    crl = str(tmp_path / "ca.crl")
    shutil.copyfile(os.path.join(lists, "ca-none.crl"), crl)
    server = serve(registry_url, secret, schemas, "PyKeytoolLists",
                   switchboard.Tls(keystore=tls_files["server.p12"], truststore=tls_files["trust.p12"],
                                   password_file=tls_files["password"], crl=crl))
    caller = switchboard.Tls(keystore=tls_files["client.p12"], truststore=tls_files["trust.p12"],
                             password_file=tls_files["password"])
    try:
        with switchboard.connect(registry_url, tls=caller) as board:
            echo = board.lookup("PyKeytoolLists")
            for protocol in PROTOCOLS:
                assert bits(echo.echoDoubles(values=[0.5], protocol=protocol)) == bits([0.5])
        replace(crl, os.path.join(lists, "ca-client.crl"))
        with switchboard.connect(registry_url, tls=caller) as board:   # new connections
            echo = board.lookup("PyKeytoolLists")
            refused_at_handshake(echo, "tcp")
            refused_at_handshake(echo, "soap")
            until(lambda: calls_refused(echo, "grpc"), "the revoked client's gRPC calls still ran")
        assert server.calls == {"tcp echoDoubles": 1, "grpc echoDoubles": 1, "soap echoDoubles": 1}
    finally:
        server.close()


def calls_refused(echo, protocol):
    try:
        echo.echoDoubles(values=[1.0], protocol=protocol, timeout=10)
        return False
    except switchboard.PermissionDenied as refused:
        assert refused.reason == switchboard.PermissionDenied.UNAUTHENTICATED, refused
        return True


def test_a_client_refuses_a_server_its_lists_revoke_and_does_not_call_over_grpc(registry_url, secret, schemas, pki):
    server = serve(registry_url, secret, schemas, "PyRevokedServer",
                   switchboard.Tls(keystore=pki.server, truststore=pki.trust, password=PASSWORD))
    good = os.path.join(pki.directory, "good.p12")
    try:
        revoking = switchboard.Tls(keystore=good, truststore=pki.trust, password=PASSWORD,
                                   crl=pki.crl("server.crl", ["server"]))
        with switchboard.connect(registry_url, tls=revoking) as board:
            assert board.protocols == ("tcp", "soap")
            echo = board.lookup("PyRevokedServer")
            refused_at_handshake(echo, "tcp")
            refused_at_handshake(echo, "soap")
            with pytest.raises(switchboard.NoCommonProtocol,
                               match="call pins grpc, which client and server do not share"):
                echo.echoDoubles(values=[1.0], protocol="grpc")
            with pytest.raises(ValueError, match="reads no revocation lists"):
                revoking.grpc_credentials()
        trusting = switchboard.Tls(keystore=good, truststore=pki.trust, password=PASSWORD, crl=pki.crl("none.crl"))
        with switchboard.connect(registry_url, tls=trusting) as board:
            echo = board.lookup("PyRevokedServer")
            for protocol in ("tcp", "soap"):
                assert bits(echo.echoDoubles(values=[float("nan")], protocol=protocol)) == bits([float("nan")])
            assert bits(echo.echoDoubles(values=[-1.0])) == bits([-1.0])   # as the policy chooses
            assert echo.last_call.protocol in ("tcp", "soap")
        assert server.calls == {"tcp echoDoubles": 1 + (echo.last_call.protocol == "tcp"),
                                "soap echoDoubles": 1 + (echo.last_call.protocol == "soap")}
    finally:
        server.close()


def test_a_client_with_lists_polls_an_https_registry_and_refuses_one_they_revoke(secret, schemas, tls_files):
    """The Java TLS registry streams its changes over grpcs://, whose TLS in grpcio reads no lists:
    a client with lists polls it over https, where they are read. One whose lists revoke the
    registry's certificate (the suite's server.p12) gets nothing from it."""
    registry = setting("SWITCHBOARD_TEST_TLS_REGISTRY")
    lists = os.path.dirname(tls_files["trust.p12"])

    def client(crl):
        return switchboard.Tls(keystore=tls_files["client.p12"], truststore=tls_files["trust.p12"],
                               password_file=tls_files["password"], crl=crl)

    server = switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry,
                               name="PyListsWatch", secret=secret, handle_sigterm=False,
                               tls=switchboard.Tls(keystore=tls_files["server.p12"], truststore=tls_files["trust.p12"],
                                                   password_file=tls_files["password"]))
    try:
        with switchboard.connect(registry, tls=client(None)) as streaming:
            streaming.lookup("PyListsWatch")
            until(lambda: streaming.watcher.mode == "stream", "a client without lists did not stream")
        with switchboard.connect(registry, tls=client(os.path.join(lists, "ca-none.crl"))) as board:
            echo = board.lookup("PyListsWatch")
            until(lambda: board.watcher.mode == "poll", "a client with lists did not poll")
            assert bits(echo.echoDoubles(values=[4.0], protocol="tcp")) == bits([4.0])
        with pytest.raises(switchboard.RegistryUnavailable, match="certificate revoked") as refused:   # its WSDL
            switchboard.connect(registry, tls=client(os.path.join(lists, "ca-server.crl")), watch=False)
        assert refused.value.delivery == switchboard.TransportError.NOT_DELIVERED
        assert isinstance(refused.value.__cause__, requests.exceptions.SSLError)
    finally:
        server.close()
