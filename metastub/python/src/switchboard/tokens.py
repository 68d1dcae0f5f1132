"""Verifying bearer tokens on the Python server: JWTs checked with PyJWT, as the Java servers'
``JwtTokenVerifier`` checks them with nimbus-jose-jwt (``pip install switchboard[jwt]``).

::

    verifier = switchboard.tokens.JwtVerifier(jwks="jwks.json", issuer="https://issuer.example",
                                              audience="switchboard")
    server = switchboard.serve(Echo(), schema="echo.xsd", jwt=verifier, authz="authz.json")

The signature is checked against public keys (a JWKS file or PEM ``PUBLIC KEY`` blocks; RSA, EC or
Ed25519), then the issuer, the audience, ``exp`` (required) and ``nbf`` with a clock skew (60 s).
The principal is ``sub``, or the claim named by ``claim=``. Only the algorithms of each key's own
type are taken, so an unsigned token (``alg: none``) or an HMAC token made with a public key as its
secret never verifies. A token that does not verify is refused (``PermissionDenied``,
``unauthenticated``), never taken as no token; its text is never put in a message or a log."""

import json
import os

from .errors import PermissionDenied

ALGORITHMS = {"RSA": ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512"),
              "EC": ("ES256", "ES384", "ES512"), "OKP": ("EdDSA",)}
PEM_BEGIN, PEM_END = "-----BEGIN PUBLIC KEY-----", "-----END PUBLIC KEY-----"


def _refused(why):
    return PermissionDenied("the bearer token does not verify: " + why, PermissionDenied.UNAUTHENTICATED)


class JwtVerifier:
    def __init__(self, jwks=None, pem=None, issuer=None, audience=None, claim="sub", clock_skew=60):
        self.keys = []   # (kid or None, key type, public key)
        if jwks is not None:
            self.keys += _jwks_keys(jwks)
        if pem is not None:
            self.keys += _pem_keys(pem)
        if not self.keys:
            raise ValueError("a JWT verifier needs public keys: jwks= or pem=")
        self.issuer, self.audience, self.claim, self.clock_skew = issuer, audience, claim, clock_skew

    def verify(self, token):
        """The token's principal; raises PermissionDenied (unauthenticated) when it does not verify."""
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise _refused("not a JWT") from None
        alg, kid = header.get("alg"), header.get("kid")
        candidates = [(t, k) for key_id, t, k in self.keys
                      if alg in ALGORITHMS[t] and (kid is None or key_id is None or key_id == kid)]
        if not candidates:
            raise _refused("no key of this verifier takes algorithm %r%s" % (alg, "" if kid is None else
                                                                             " with key id %r" % kid))
        options = {"require": ["exp", self.claim], "verify_aud": self.audience is not None,
                   "verify_iss": self.issuer is not None}
        last = None
        for _, key in candidates:
            try:
                claims = jwt.decode(token, key, algorithms=[alg], audience=self.audience, issuer=self.issuer,
                                    leeway=self.clock_skew, options=options)
            except jwt.InvalidSignatureError as e:
                last = e
                continue   # another key may have signed it
            except jwt.PyJWTError as e:
                raise _refused(str(e)) from None
            principal = claims.get(self.claim)
            if not isinstance(principal, str) or not principal:
                raise _refused("the claim %r is not a non-empty string" % self.claim)
            return principal
        raise _refused(str(last) if last else "no key verifies it")

    def __repr__(self):
        return "<JWT verifier: %d keys, issuer %s, audience %s, principal %s>" % (
            len(self.keys), self.issuer, self.audience, self.claim)


def _jwks_keys(path):
    import jwt

    with open(os.fspath(path), encoding="utf-8") as f:
        data = json.load(f)
    keys = []
    for i, raw in enumerate(data.get("keys") or []):
        if raw.get("kty") not in ALGORITHMS:
            raise ValueError("%s: key %d is of type %r; only public RSA, EC and OKP keys verify tokens"
                             % (path, i, raw.get("kty")))
        keys.append((raw.get("kid"), raw["kty"], jwt.PyJWK(raw).key))
    return keys


def _pem_keys(path):
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    with open(os.fspath(path), encoding="utf-8") as f:
        text = f.read()
    keys = []
    for block in text.split(PEM_BEGIN)[1:]:
        key = load_pem_public_key((PEM_BEGIN + block.split(PEM_END)[0] + PEM_END + "\n").encode("ascii"))
        kind = "RSA" if isinstance(key, rsa.RSAPublicKey) else "EC" if isinstance(key, ec.EllipticCurvePublicKey) \
            else "OKP" if isinstance(key, ed25519.Ed25519PublicKey) else None
        if kind is None:
            raise ValueError("%s: a public key of an unsupported type" % path)
        keys.append((None, kind, key))
    return keys


def bearer(header):
    """The token of an ``Authorization`` value, None without one; a value that is not a bearer
    token reads as one that cannot verify (refused, not ignored)."""
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return ""
    return token.strip()
