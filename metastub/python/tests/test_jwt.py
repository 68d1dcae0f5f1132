"""JWT bearer tokens verified on the Python server (switchboard.tokens, with PyJWT): a valid
token's subject is the caller, over each protocol and against the policy; every hostile token
(expired, not yet valid, another issuer or audience, unsigned, an HMAC made with the public key,
signed by another key, without a subject, not a JWT) is refused as unauthenticated without its
text in the message, and never taken as no token."""

import base64
import hashlib
import hmac
import json
import os
import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

import switchboard
from switchboard.tokens import JwtVerifier

ISSUER, AUDIENCE = "https://issuer.example", "switchboard"
ECHO = "/switchboard.echo.Echo/"


class Keys:
    def __init__(self, workdir):
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        self.other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwks = {"keys": [dict(json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.rsa.public_key())), kid="r1"),
                         dict(json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.ec.public_key())), kid="e1")]}
        self.jwks = os.path.join(workdir, "jwks.json")
        with open(self.jwks, "w", encoding="utf-8") as f:
            json.dump(jwks, f)
        self.public_pem = self.rsa.public_key().public_bytes(serialization.Encoding.PEM,
                                                             serialization.PublicFormat.SubjectPublicKeyInfo)
        self.pem = os.path.join(workdir, "issuer.pem")
        with open(self.pem, "wb") as f:
            f.write(self.public_pem)

    def token(self, sub="alice", key=None, alg="RS256", kid="r1", **claims):
        now = int(time.time())
        body = {"iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + 600}
        if sub is not None:
            body["sub"] = sub
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(body, key or self.rsa, algorithm=alg, headers={"kid": kid})

    def hostile(self):
        now = int(time.time())
        b64 = lambda d: base64.urlsafe_b64encode(d).rstrip(b"=").decode()   # noqa: E731
        claims = b64(json.dumps({"iss": ISSUER, "aud": AUDIENCE, "sub": "mallory", "exp": now + 600}).encode())
        unsigned = b64(b'{"alg":"none","typ":"JWT"}') + "." + claims + "."
        hs_head = b64(b'{"alg":"HS256","typ":"JWT"}') + "." + claims
        hs = hs_head + "." + b64(hmac.new(self.public_pem, hs_head.encode(), hashlib.sha256).digest())
        return {
            "expired": self.token("mallory", exp=now - 3600, iat=now - 7200),
            "not yet valid": self.token("mallory", nbf=now + 3600),
            "another issuer": self.token("mallory", iss="https://elsewhere.example"),
            "another audience": self.token("mallory", aud="someone-else"),
            "unsigned": unsigned,
            "hmac with the public key": hs,
            "another key": self.token("mallory", key=self.other),
            "no subject": self.token(None),
            "no expiry": self.token("mallory", exp=None),
            "not a jwt": "not.a.jwt",
        }


@pytest.fixture(scope="module")
def keys(workdir):
    return Keys(workdir)


@pytest.fixture(scope="module")
def verifier(keys):
    return JwtVerifier(jwks=keys.jwks, issuer=ISSUER, audience=AUDIENCE)


def test_a_valid_token_proves_its_subject(keys, verifier):
    assert verifier.verify(keys.token("alice")) == "alice"
    assert verifier.verify(keys.token("erin", key=keys.ec, alg="ES256", kid="e1")) == "erin"
    pem = JwtVerifier(pem=keys.pem, issuer=ISSUER, audience=AUDIENCE)
    assert pem.verify(keys.token("bob")) == "bob"
    by_issuer = JwtVerifier(jwks=keys.jwks, issuer=ISSUER, audience=AUDIENCE, claim="iss")
    assert by_issuer.verify(keys.token("carol")) == ISSUER
    # within the clock skew of its expiry: still valid
    assert verifier.verify(keys.token("dave", exp=int(time.time()) - 30)) == "dave"


def test_every_hostile_token_is_refused_as_unauthenticated(keys, verifier):
    for what, token in keys.hostile().items():
        with pytest.raises(switchboard.PermissionDenied) as refusal:
            verifier.verify(token)
        assert refusal.value.reason == "unauthenticated", what
        assert token not in str(refusal.value), what + ": the message holds the token"


class Echo:
    def echoDoubles(self, values):
        return values

    def empty(self):
        pass


POLICY = {"name": "tokens", "allow_rules": [
    {"name": "alice-echoes", "source": {"principals": ["alice"]}, "request": {"paths": [ECHO + "echoDoubles"]}}]}


def test_the_tokens_subject_is_the_caller_on_both_protocols(keys, verifier, schemas, registry_url, secret):
    server = switchboard.serve(Echo(), schema=os.path.join(schemas, "echo.xsd"), registry=registry_url,
                               name="PyJwt", secret=secret, jwt=verifier, authz=POLICY, handle_sigterm=False)
    try:
        with switchboard.connect(registry_url, token=keys.token("alice"), watch=False) as alice:
            echo = alice.lookup("PyJwt")
            for protocol in ("grpc", "soap"):
                assert echo.echoDoubles(values=[1.5], protocol=protocol) == [1.5]
                with pytest.raises(switchboard.PermissionDenied) as refusal:
                    echo.empty(protocol=protocol)
                assert refusal.value.reason == "permission-denied"
        with switchboard.connect(registry_url, token=keys.token("bob"), watch=False) as bob:
            with pytest.raises(switchboard.PermissionDenied):
                bob.lookup("PyJwt").echoDoubles(values=[1.5], protocol="grpc")
        for what, token in keys.hostile().items():
            with switchboard.connect(registry_url, token=token, watch=False) as mallory:
                echo = mallory.lookup("PyJwt")
                for protocol in ("grpc", "soap"):
                    with pytest.raises(switchboard.PermissionDenied) as refusal:
                        echo.echoDoubles(values=[1.5], protocol=protocol)
                    assert refusal.value.reason == "unauthenticated", (what, protocol)
        assert server.calls == {"grpc echoDoubles": 1, "soap echoDoubles": 1}
        assert server.denials == {("TOKEN:alice", ECHO + "empty"): 2, ("TOKEN:bob", ECHO + "echoDoubles"): 1}
    finally:
        server.close()


def test_a_call_id_is_its_callers(keys, verifier, schemas, workdir, registry_url, secret):
    """divide, made not idempotent (so its call ids are remembered): Bob's call under Alice's call id
    runs and gets its own answer, and Alice's repeat over the other protocol gets her first one."""
    d = os.path.join(workdir, "jwt-divide-not-idempotent")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(schemas, "echo.xsd"), encoding="utf-8") as f:
        xsd = f.read().replace('<sb:operation name="divide" idempotent="true"/>', '<sb:operation name="divide"/>')
    with open(os.path.join(schemas, "Echo.proto"), encoding="utf-8") as f:
        proto = f.read().replace("  // divide: idempotent, may be repeated\n", "  // divide\n")
    for name, text in (("echo.xsd", xsd), ("Echo.proto", proto)):
        with open(os.path.join(d, name), "w", encoding="utf-8") as f:
            f.write(text)

    class Divider(Echo):
        def divide(self, dividend, divisor):
            return {"quotient": dividend // divisor, "remainder": dividend % divisor}

    server = switchboard.serve(Divider(), schema=os.path.join(d, "echo.xsd"), registry=registry_url, name="PyJwtIds",
                               secret=secret, jwt=verifier, handle_sigterm=False)
    call_id = "ab" * 16
    try:
        with switchboard.connect(registry_url, token=keys.token("alice"), watch=False) as alice, \
                switchboard.connect(registry_url, token=keys.token("bob"), watch=False) as bob:
            as_alice, as_bob = alice.lookup("PyJwtIds"), bob.lookup("PyJwtIds")
            assert not as_alice.iface.operations["divide"].idempotent
            assert as_alice.divide(dividend=7, divisor=2, protocol="grpc", call_id=call_id).quotient == 3
            assert as_bob.divide(dividend=9, divisor=2, protocol="soap", call_id=call_id).quotient == 4
            assert as_alice.divide(dividend=7, divisor=2, protocol="soap", call_id=call_id).quotient == 3
        assert server.calls == {"grpc divide": 1, "soap divide": 1}, "Alice's repeat did not run again, Bob's ran"
    finally:
        server.close()
