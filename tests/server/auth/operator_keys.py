"""An operator for the tests: signing keys (RSA, EC P-256, Ed25519) made with
cryptography, JWTs signed with them, and the operator's JWKS served over HTTP by a real
aiohttp server on 127.0.0.1 (its keys changed at will: a rotation)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import jwt
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

ISSUER = "https://login.operator.test/"
AUDIENCE = "paigow-tables"

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey


@dataclass(frozen=True)
class SigningKey:
    """One of the operator's keys: its kid, algorithm and private half."""

    kid: str
    alg: str
    private: PrivateKey = field(repr=False)

    def jwk(self) -> dict[str, Any]:
        """The public half as a JWK (what the JWKS lists)."""
        private = self.private
        data: dict[str, Any]
        if isinstance(private, rsa.RSAPrivateKey):
            data = RSAAlgorithm.to_jwk(private.public_key(), as_dict=True)
        elif isinstance(private, ec.EllipticCurvePrivateKey):
            data = ECAlgorithm.to_jwk(private.public_key(), as_dict=True)
        else:
            data = OKPAlgorithm.to_jwk(private.public_key(), as_dict=True)
        return {**data, "kid": self.kid, "use": "sig", "alg": self.alg}

    def sign(self, claims: dict[str, Any], **header: Any) -> str:
        """A JWT of ``claims`` signed with this key (``header`` overrides its fields)."""
        return jwt.encode(
            claims, self.private, algorithm=self.alg, headers={"kid": self.kid, **header}
        )


def rsa_key(kid: str) -> SigningKey:
    return SigningKey(kid, "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))


def ec_key(kid: str) -> SigningKey:
    return SigningKey(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))


def ed_key(kid: str) -> SigningKey:
    return SigningKey(kid, "EdDSA", ed25519.Ed25519PrivateKey.generate())


def claims(player: str = "alice", ttl_s: int = 600, **more: Any) -> dict[str, Any]:
    """A player's claims, valid from now for ``ttl_s`` (``more`` adds or overrides)."""
    now = int(time.time())
    base = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": player,
        "name": player.capitalize(),
        "iat": now,
        "nbf": now,
        "exp": now + ttl_s,
    }
    return {**base, **more}


def jwks(*keys: SigningKey) -> dict[str, Any]:
    return {"keys": [k.jwk() for k in keys]}


def unsigned(claims: dict[str, Any], kid: str) -> str:
    """A token with ``alg: none`` (no signature at all)."""
    head = _b64(json.dumps({"alg": "none", "typ": "JWT", "kid": kid}).encode())
    return f"{head}.{_b64(json.dumps(claims).encode())}."


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hs256_with_public_key(key: SigningKey, claims: dict[str, Any]) -> str:
    """The key-confusion forgery: HS256 with the operator's public key (its PEM, as a
    verifier that let the token pick the algorithm would use it) as the secret. PyJWT
    refuses to sign with a PEM, so the token is put together by hand."""
    pem = key.private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    head = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": key.kid}).encode())
    body = _b64(json.dumps(claims).encode())
    mac = hmac.new(pem, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64(mac)}"


class JwksServer:
    """The operator's JWKS on a real HTTP server: ``keys`` is what it serves now,
    ``requests`` how many times it was asked, ``failing`` makes it answer 500."""

    def __init__(self, *keys: SigningKey) -> None:
        self.keys: list[SigningKey] = list(keys)
        self.requests = 0
        self.failing = False
        self.url = ""

    async def _serve(self, request: web.Request) -> web.Response:
        self.requests += 1
        if self.failing:
            return web.Response(status=500, text="down")
        return web.json_response(jwks(*self.keys))

    @asynccontextmanager
    async def running(self) -> AsyncIterator[JwksServer]:
        app = web.Application()
        app.router.add_get("/.well-known/jwks.json", self._serve)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        self.url = f"http://{host}:{port}/.well-known/jwks.json"
        try:
            yield self
        finally:
            await runner.cleanup()
