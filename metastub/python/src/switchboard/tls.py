"""TLS from the same PKCS#12 files as the Java side's ``--tls-keystore``, ``--tls-truststore`` and
``--tls-password-file``: the key store holds this party's key and certificate chain (a client's
certificate for servers that ask for one, a server's own), the trust store the certificates to
trust. Read with ``cryptography`` (``pip install switchboard[tls]``); the PEM forms the HTTP and
gRPC libraries need are kept in a private temporary directory removed at exit.

Servers and clients may take certificate revocation lists too (``crl=``, as the Java side's
``--tls-crl``)::

    tls = switchboard.Tls(keystore="server.p12", truststore="ca.p12", password_file="password", crl="ca.crl")
    switchboard.serve(Bank(), schema="bank.xsd", registry=url, tls=tls)
"""

import atexit
import os
import shutil
import ssl
import sys
import tempfile
import threading
import time

NO_LONGER_TRUSTED = ("the client certificate of this connection is no longer trusted (revoked, or its authority "
                     "withdrawn)")   # the Java servers' words (CallerIdentity.NO_LONGER_TRUSTED)
LOOK_SECONDS = 0.1   # how often a call looks at the files, as the Java servers do
_VERDICTS_KEPT = 4096   # certificates judged under the files in force; more, and the judgements start over


class Tls:
    """``crl``: a file of certificate revocation lists (PEM or DER, one or more, each signed by a
    certificate of the trust store). A server refuses callers whose chain holds a certificate they
    revoke, or whose issuer has no list in force (past its next update), at the handshake over tcp
    and SOAP, and at every call on every protocol (gRPC's handshake does not read the lists): a
    call over a connection opened before the caller's revocation is refused ``unauthenticated``.
    A client refuses such servers at the handshake over tcp and https; since grpcio's TLS reads no
    lists, a client with lists calls over tcp and SOAP only and polls an https registry for changes
    instead of streaming them (``checks_grpc``). A client's and a server's stores are read again when
    their files change (``look``): the connections made from then on take them. With or without
    lists, a server checks each call on a connection with a client certificate against the stores
    in force (``still_trusts``): a caller whose authority left the trust store is refused at its
    next call."""

    def __init__(self, keystore=None, truststore=None, password=None, password_file=None, crl=None):
        if password is None and password_file is not None:
            with open(password_file, encoding="utf-8") as f:
                password = f.read().strip()
        if crl is not None and truststore is None:
            raise ValueError("a revocation list needs a trust store: each list must be signed by one of its "
                             "certificates")
        self.password = password
        self._keystore, self._truststore, self._crl = keystore, truststore, crl
        self._lock = threading.Lock()
        self._seen = self._files_state()
        self._refused = None
        self._looked = time.monotonic()
        self._verdicts = {}   # a certificate's signature -> (generation, still trusted, until when: epoch s or None)
        self.generation = 1   # counts the reads of the stores (``refresh``)
        self.key_pem, self.chain_pem, self.trust_pem, self.revocation, self._authorities = self._read()
        self._dir = None
        self._files_lock = threading.Lock()
        self._trust_files = {}   # generation -> its trust store's PEM file (a client's https connections)

    def _read(self):
        key_pem = chain_pem = trust_pem = revocation = None
        authorities = ()
        if self._keystore is not None:
            key_pem, chain_pem = _read_keystore(self._keystore, self.password)
        if self._truststore is not None:
            trust_pem = _read_truststore(self._truststore, self.password)
            from cryptography import x509

            authorities = tuple(x509.load_pem_x509_certificates(trust_pem))
        if self._crl is not None:
            revocation = _Revocation(self._crl, trust_pem)
        return key_pem, chain_pem, trust_pem, revocation, authorities

    def _paths(self):
        return [p for p in (self._keystore, self._truststore, self._crl) if p is not None]

    def _files_state(self):
        """What tells one content of the stores from another without reading them: time, size, file."""
        state = []
        for path in self._paths():
            st = os.stat(path)
            state.append((st.st_mtime_ns, st.st_size, st.st_ino))
        return tuple(state)

    def refresh(self):
        """Reads the stores again if a file changed since the last read (servers call it for each
        new connection, so a renewed certificate or a replaced trust store needs no restart). A
        store that cannot be read, or a file gone, is refused with one line on stderr, and what was
        read before stays in force. Returns whether the stores were read again."""
        try:
            state = self._files_state()
        except OSError as e:
            self._refuse(("gone", str(e)), "cannot be read: %s" % e)
            return False
        if state == self._seen:
            return False
        with self._lock:
            if state == self._seen or state == self._refused:
                return False
            try:
                read = self._read()
            except (OSError, ValueError) as e:
                self._refuse(state, "was refused: %s" % e)
                return False
            self.key_pem, self.chain_pem, self.trust_pem, self.revocation, self._authorities = read
            self._seen, self.generation = state, self.generation + 1
            return True

    def look(self):
        """``refresh`` at most every ``LOOK_SECONDS``: what a call may afford on its way. Returns
        the ``generation`` in force."""
        now = time.monotonic()
        if now - self._looked >= LOOK_SECONDS:
            self._looked = now
            self.refresh()
        return self.generation

    def _refuse(self, state, why):
        if state != self._refused:
            self._refused = state
            print("switchboard: the TLS stores (%s) %s; what was read before stays in force"
                  % (", ".join(self._paths()), why), file=sys.stderr, flush=True)

    def still_trusts(self, certificate, chain=(), judged_by=None):
        """Whether a caller's certificate (a ``cryptography`` x509 object), trusted at its
        connection's handshake, is still trusted by the trust store and revocation lists in force.
        With lists: its issuer a certificate of the store that signed it, with a list in force that
        does not revoke it. Without: a path from it through ``chain`` (the certificates the caller
        sent with it) to a certificate of the store, each signed by the next and none past its
        validity; or, where that path is not there (a resumed session shows no chain), its handshake
        ``judged_by`` the stores in force (a ``generation``). Always true without a trust store. The
        files are looked at at most every ``LOOK_SECONDS``, and a certificate is judged again after
        they were read again or once what its judgement rested on passes (a list's next update, a
        certificate's end)."""
        if self._truststore is None:
            return True
        self.look()
        key = (certificate.signature, judged_by) + tuple(chain)
        with self._lock:
            generation, revocation, authorities = self.generation, self.revocation, self._authorities
            verdict = self._verdicts.get(key)
        if verdict is not None and verdict[0] == generation and (verdict[2] is None or time.time() < verdict[2]):
            return verdict[1]
        if revocation is not None:
            trusted, until = revocation.trusts(certificate)
        else:
            trusted, until = _issued_under(certificate, _certificates(chain), authorities)
            if not trusted and judged_by == generation:
                trusted, until = True, None
        with self._lock:
            if len(self._verdicts) >= _VERDICTS_KEPT:
                self._verdicts.clear()
            self._verdicts[key] = (generation, trusted, until)
        return trusted

    @property
    def checks_grpc(self):
        """Whether grpcs:// peers are checked as this Tls asks: not with revocation lists, which
        grpcio's TLS does not read."""
        return self._crl is None

    def _load_lists(self, context, revocation):
        """Makes ``context`` check every certificate of a peer's chain against the lists; a
        certificate whose issuer has no list in force fails: closed, as in Java. ssl reads lists
        from a file only (cadata takes certificates)."""
        crl_file = self._file("crl-%s.pem" % os.urandom(6).hex(), revocation.pem)
        try:
            context.load_verify_locations(cafile=crl_file)
        finally:
            os.remove(crl_file)
        context.verify_flags |= ssl.VERIFY_CRL_CHECK_CHAIN

    def _file(self, name, data):
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="switchboard-tls-")
            os.chmod(self._dir, 0o700)
            atexit.register(shutil.rmtree, self._dir, True)
        path = os.path.join(self._dir, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def _load_chain(self, context, chain_pem, key_pem):
        """Loads a key and its chain into ``context`` through files of their own (names no other
        thread writes), removed once read: ``ssl`` takes a key from files only, and the key then
        stays in none."""
        tag = os.urandom(6).hex()
        chain_file, key_file = self._file("chain-%s.pem" % tag, chain_pem), self._file("key-%s.pem" % tag, key_pem)
        try:
            context.load_cert_chain(chain_file, key_file)
        finally:
            os.remove(chain_file)
            os.remove(key_file)

    # clients

    def configure(self, session):
        """A requests session for https:// addresses: its connections take this Tls's key, trust and
        lists, and new ones take the stores as read again when their files change."""
        if self.trust_pem is not None:
            # the trust store given wins: requests would otherwise take REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE
            # from the environment over session.verify (and with it no proxy settings from the environment)
            session.trust_env = False
        session.mount("https://", _renewing_adapter(self))

    def _trust_file(self):
        """The trust store in force as a PEM file (requests hands a file to each connection it makes)."""
        with self._lock:
            generation, trust_pem = self.generation, self.trust_pem
        with self._files_lock:   # written once per generation, whole before any thread reads it
            path = self._trust_files.get(generation)
            if path is None:
                path = self._trust_files[generation] = self._file("trust-%d.pem" % generation, trust_pem)
        return path

    def grpc_credentials(self):
        """A gRPC channel's credentials from the stores in force (read again if their files changed)."""
        if not self.checks_grpc:
            raise ValueError("grpcio's TLS reads no revocation lists: a client with lists does not call over grpcs://")
        import grpc

        self.look()
        with self._lock:
            key_pem, chain_pem, trust_pem = self.key_pem, self.chain_pem, self.trust_pem
        return grpc.ssl_channel_credentials(root_certificates=trust_pem, private_key=key_pem,
                                            certificate_chain=chain_pem)

    def client_ssl_context(self):
        """An ssl context for tcps:// addresses: the trust store's certificates, this key if any; from
        the stores in force (read again if their files changed), so each new connection takes them."""
        self.look()
        with self._lock:   # one read of the stores: key, chain, trust and lists of the same generation
            key_pem, chain_pem, trust_pem, revocation = self.key_pem, self.chain_pem, self.trust_pem, self.revocation
            generation = self.generation
        context = ssl.create_default_context(cadata=trust_pem.decode("ascii") if trust_pem else None)
        context.switchboard_generation = generation   # which read of the stores it holds
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        if key_pem is not None:
            self._load_chain(context, chain_pem, key_pem)
        if revocation is not None:
            self._load_lists(context, revocation)
        return context

    # servers

    def server_ssl_context(self):
        if self.key_pem is None:
            raise ValueError("a server needs a key store")
        with self._lock:   # one read of the stores: key, chain, trust and lists of the same generation
            key_pem, chain_pem, trust_pem, revocation = self.key_pem, self.chain_pem, self.trust_pem, self.revocation
            generation = self.generation
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.switchboard_generation = generation   # which read of the stores its handshakes were judged by
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        self._load_chain(context, chain_pem, key_pem)
        if trust_pem is not None:   # a trust store: clients must present a certificate it trusts
            context.load_verify_locations(cadata=trust_pem.decode("ascii"))
            context.verify_mode = ssl.CERT_REQUIRED
        if revocation is not None:
            self._load_lists(context, revocation)
        return context

    def server_contexts(self):
        """The server's ssl contexts, one per read of the stores: ``current()`` reads the stores
        again when their files changed and makes a new context. A session begun under an earlier
        context cannot be resumed under a new one (session tickets and caches are a context's own),
        so a client whose authority was withdrawn shows its certificate again and is refused."""
        return _ServerContexts(self)

    def grpc_server_credentials(self):
        import grpc

        if self.key_pem is None:
            raise ValueError("a server needs a key store")

        def configuration():
            with self._lock:
                return grpc.ssl_server_certificate_configuration([(self.key_pem, self.chain_pem)],
                                                                 root_certificates=self.trust_pem)

        def on_connection():   # grpcio asks before each new connection's handshake; None: no change
            self.refresh()
            with self._lock:
                if self.generation == given[0]:
                    return None
                given[0] = self.generation
            return configuration()

        given = [self.generation]
        # a client certificate is required if the trust store was there at start
        return grpc.dynamic_ssl_server_credentials(configuration(), on_connection,
                                                   require_client_authentication=self.trust_pem is not None)


def _renewing_adapter(tls):
    """A requests adapter whose connections take ``tls.client_ssl_context()`` (trust, key and
    revocation lists in it: requests would otherwise make an ssl context of its own, without the
    lists), made again for new connections once the stores were read again; connections under way
    end as they are."""
    from requests.adapters import HTTPAdapter

    class RenewingAdapter(HTTPAdapter):
        def init_poolmanager(self, *args, **kwargs):
            kwargs["ssl_context"] = context = tls.client_ssl_context()
            self.generation = context.switchboard_generation
            # urllib3 loads it into the context too (the same store), once per connection it makes
            self.trust_file = tls._trust_file() if tls.trust_pem is not None else None
            return super().init_poolmanager(*args, **kwargs)

        def send(self, request, **kwargs):
            if tls.look() != self.generation:
                with renewing:
                    if tls.generation != self.generation:
                        retired = self.poolmanager
                        self.init_poolmanager(self._pool_connections, self._pool_maxsize, block=self._pool_block)
                        retired.clear()   # its idle connections; those under way close when they are done
            if self.trust_file is not None:
                kwargs["verify"] = self.trust_file
            return super().send(request, **kwargs)

    renewing = threading.Lock()
    return RenewingAdapter()


class _ServerContexts:
    def __init__(self, tls):
        self._tls = tls
        self._context, self._generation = tls.server_ssl_context(), tls.generation

    def current(self):
        self._tls.refresh()
        if self._tls.generation != self._generation:
            self._context, self._generation = self._tls.server_ssl_context(), self._tls.generation
        return self._context


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


MAX_CHAIN_SENT = 8   # intermediates of a caller's chain walked, at most: real chains hold one to three


def _certificates(chain):
    """The first ``MAX_CHAIN_SENT`` certificates of a chain as a transport gives it (DER bytes,
    PEM blocks, or certificates already read); what cannot be read is left out."""
    from cryptography import x509

    read = []
    for item in chain:
        if len(read) >= MAX_CHAIN_SENT:
            break
        try:
            if not isinstance(item, bytes):
                read.append(item)
            elif item.lstrip().startswith(b"-----BEGIN"):
                read.extend(x509.load_pem_x509_certificates(item))
            else:
                read.append(x509.load_der_x509_certificate(item))
        except ValueError:
            continue
    return read[:MAX_CHAIN_SENT]


def _issued_under(certificate, chain, authorities):
    """Whether a path leads from ``certificate`` through ``chain`` (authorities' certificates, in
    any order) to one of ``authorities``, each certificate signed by the next and within its
    validity now; and until when (epoch seconds) that holds: the first end of validity on the path."""
    import datetime

    from cryptography import x509

    now = datetime.datetime.now(datetime.timezone.utc)

    def valid(c):
        return c.not_valid_before_utc <= now < c.not_valid_after_utc

    def signed(c, issuer):
        if issuer.subject != c.issuer:
            return False
        try:
            c.verify_directly_issued_by(issuer)
            return True
        except Exception:   # another key of the same name, or not a signature it made
            return False

    def authority(c):
        try:
            return c.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
        except x509.ExtensionNotFound:
            return False

    current, left, ends = certificate, list(chain), []
    while valid(current):
        ends.append(current.not_valid_after_utc.timestamp())
        for ca in authorities:
            if valid(ca) and signed(current, ca):
                return True, min(ends + [ca.not_valid_after_utc.timestamp()])
        current = next((c for c in left if authority(c) and signed(current, c)), None)
        if current is None:
            break
        left.remove(current)
    return False, None


class _Revocation:
    """The revocation lists of one read of a ``crl`` file, each checked to be signed by a
    certificate of the trust store (else ValueError, with the reason)."""

    def __init__(self, path, trust_pem):
        from cryptography import x509
        from cryptography.hazmat.primitives import serialization

        with open(path, "rb") as f:
            data = f.read()
        try:
            begin, end = b"-----BEGIN X509 CRL-----", b"-----END X509 CRL-----"
            if begin in data:
                self.lists = [x509.load_pem_x509_crl(block[block.index(begin):] + end)
                              for block in data.split(end)[:-1]]
            else:
                self.lists = [x509.load_der_x509_crl(data)]
        except ValueError as e:
            raise ValueError("%s holds no certificate revocation list that can be read: %s" % (path, e)) from None
        self.authorities = x509.load_pem_x509_certificates(trust_pem)
        for crl in self.lists:
            if not any(ca.subject == crl.issuer and crl.is_signature_valid(ca.public_key()) for ca in self.authorities):
                raise ValueError("%s holds a revocation list by %s, which no certificate of the trust store signed"
                                 % (path, crl.issuer.rfc4514_string()))
        self.pem = b"".join(crl.public_bytes(serialization.Encoding.PEM) for crl in self.lists)

    def trusts(self, certificate):
        """Whether an authority of the trust store signed ``certificate`` and has a list in force
        (not past its next update) that does not revoke it; and until when (epoch seconds) that
        holds, the first next update of those lists (None: no list will pass)."""
        import datetime

        now = datetime.datetime.now(datetime.timezone.utc)
        for ca in self.authorities:
            if ca.subject != certificate.issuer:
                continue
            try:
                certificate.verify_directly_issued_by(ca)
            except Exception:   # another key of the same name, or not a signature this ca made
                continue
            in_force = [crl for crl in self.lists if crl.issuer == ca.subject
                        and crl.is_signature_valid(ca.public_key())
                        and (crl.next_update_utc is None or crl.next_update_utc > now)]
            updates = [crl.next_update_utc.timestamp() for crl in in_force if crl.next_update_utc is not None]
            return (bool(in_force) and all(crl.get_revoked_certificate_by_serial_number(certificate.serial_number)
                                           is None for crl in in_force), min(updates, default=None))
        return False, None
