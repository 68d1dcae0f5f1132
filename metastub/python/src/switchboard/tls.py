"""TLS from the same PKCS#12 files as the Java side's ``--tls-keystore``, ``--tls-truststore`` and
``--tls-password-file``: the key store holds this party's key and certificate chain (a client's
certificate for servers that ask for one, a server's own), the trust store the certificates to
trust. Read with ``cryptography`` (``pip install switchboard[tls]``); the PEM forms the HTTP and
gRPC libraries need are kept in a private temporary directory removed at exit."""

import atexit
import os
import shutil
import ssl
import tempfile


class Tls:
    def __init__(self, keystore=None, truststore=None, password=None, password_file=None):
        if password is None and password_file is not None:
            with open(password_file, encoding="utf-8") as f:
                password = f.read().strip()
        self.password = password
        self.key_pem = self.chain_pem = self.trust_pem = None
        if keystore is not None:
            self.key_pem, self.chain_pem = _read_keystore(keystore, password)
        if truststore is not None:
            self.trust_pem = _read_truststore(truststore, password)
        self._dir = None

    def _file(self, name, data):
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="switchboard-tls-")
            os.chmod(self._dir, 0o700)
            atexit.register(shutil.rmtree, self._dir, True)
        path = os.path.join(self._dir, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    # clients

    def configure(self, session):
        """A requests session for https:// addresses."""
        if self.trust_pem is not None:
            session.verify = self._file("trust.pem", self.trust_pem)
            # the trust store given wins: requests would otherwise take REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE
            # from the environment over session.verify (and with it no proxy settings from the environment)
            session.trust_env = False
        if self.key_pem is not None:
            session.cert = (self._file("chain.pem", self.chain_pem), self._file("key.pem", self.key_pem))

    def grpc_credentials(self):
        import grpc

        return grpc.ssl_channel_credentials(root_certificates=self.trust_pem, private_key=self.key_pem,
                                            certificate_chain=self.chain_pem)

    def client_ssl_context(self):
        """An ssl context for tcps:// addresses: the trust store's certificates, this key if any."""
        context = ssl.create_default_context(cadata=self.trust_pem.decode("ascii") if self.trust_pem else None)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        if self.key_pem is not None:
            context.load_cert_chain(self._file("chain.pem", self.chain_pem), self._file("key.pem", self.key_pem))
        return context

    # servers

    def server_ssl_context(self):
        if self.key_pem is None:
            raise ValueError("a server needs a key store")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(self._file("chain.pem", self.chain_pem), self._file("key.pem", self.key_pem))
        if self.trust_pem is not None:   # a trust store: clients must present a certificate it trusts
            context.load_verify_locations(self._file("trust.pem", self.trust_pem))
            context.verify_mode = ssl.CERT_REQUIRED
        return context

    def grpc_server_credentials(self):
        import grpc

        if self.key_pem is None:
            raise ValueError("a server needs a key store")
        return grpc.ssl_server_credentials([(self.key_pem, self.chain_pem)], root_certificates=self.trust_pem,
                                           require_client_auth=self.trust_pem is not None)


def _password(password):
    return password.encode("utf-8") if password is not None else None


def _read_keystore(path, password):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    with open(path, "rb") as f:
        key, cert, extra = pkcs12.load_key_and_certificates(f.read(), _password(password))
    if key is None or cert is None:
        raise ValueError("%s holds no private key with its certificate" % path)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    chain = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in [cert] + list(extra or []))
    return key_pem, chain


def _read_truststore(path, password):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    with open(path, "rb") as f:
        store = pkcs12.load_pkcs12(f.read(), _password(password))
    certs = [c.certificate for c in store.additional_certs]
    if store.cert is not None:
        certs.append(store.cert.certificate)
    if not certs:
        raise ValueError("%s holds no certificates" % path)
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)
