"""Admin tokens of the operator's API, pure: the time is an argument.

A token is ``pgadmin1.<payload>.<signature>``, both parts unpadded base64url: the
payload is ``<id>|<name>|<expires_s>``, the signature HMAC-SHA256 over the encoded
payload with a key derived from the server's token secret for this use alone
(``HMAC(secret, "paigow admin token v1")``). So a player token (two parts, signed with
the secret itself) is never an admin token, nor an admin token a player's: each fails
the other's format and signature. A genuine token is good only while its id stands in
the store (:class:`server.store.AdminTokens`): revoking deletes it there.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

PREFIX = "pgadmin1."
"""How every admin token starts (and nothing else the server issues)."""

NAME = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
"""Whom a token is minted for: 1 to 64 of letters, digits, ``_ . @ -``."""

MAX_CHARS = 512
_DOMAIN = b"paigow admin token v1"


class AdminTokenError(ValueError):
    """Not a good admin token (malformed, forged or expired): the message says which."""


@dataclass(frozen=True, slots=True)
class AdminClaims:
    """What a genuine admin token says: its id, whom it was minted for, its expiry."""

    token_id: str
    name: str
    expires_s: int


def is_admin_token(token: str) -> bool:
    """Whether ``token`` claims to be an admin token (its prefix), genuine or not."""
    return token.startswith(PREFIX)


def _key(secret: bytes) -> bytes:
    return hmac.new(secret, _DOMAIN, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise AdminTokenError("malformed admin token") from exc
    if _b64(data) != text:
        raise AdminTokenError("malformed admin token")
    return data


def mint(secret: bytes, name: str, ttl_s: int, now_s: int) -> tuple[str, AdminClaims]:
    """A new token for ``name``, valid ``ttl_s`` (> 0) seconds from ``now_s``, and its
    claims (record them in the store, or it is refused)."""
    if NAME.fullmatch(name) is None:
        raise ValueError(f"an admin token's name is 1 to 64 of [A-Za-z0-9_.@-]: {name!r}")
    if ttl_s <= 0:
        raise ValueError("a token lives a positive number of seconds")
    claims = AdminClaims(secrets.token_hex(8), name, now_s + ttl_s)
    payload = _b64(f"{claims.token_id}|{name}|{claims.expires_s}".encode())
    signature = _b64(hmac.new(_key(secret), payload.encode(), hashlib.sha256).digest())
    return f"{PREFIX}{payload}.{signature}", claims


def read(secret: bytes, token: str, now_s: int) -> AdminClaims:
    """The claims of ``token`` if it is genuine and not expired at ``now_s``; raises
    :class:`AdminTokenError` (the signature checked before anything in it is read)."""
    if not token.isascii() or len(token) > MAX_CHARS or not is_admin_token(token):
        raise AdminTokenError("not an admin token")
    parts = token.removeprefix(PREFIX).split(".")
    if len(parts) != 2:
        raise AdminTokenError("malformed admin token")
    payload, signature = parts
    expected = hmac.new(_key(secret), payload.encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(_unb64(signature), expected):
        raise AdminTokenError("bad signature")
    try:
        token_id, name, expires = _unb64(payload).decode().split("|")
    except (UnicodeDecodeError, ValueError) as exc:
        raise AdminTokenError("malformed admin token") from exc
    if not expires.isdigit():
        raise AdminTokenError("malformed admin token")
    if now_s >= int(expires):
        raise AdminTokenError("expired")
    return AdminClaims(token_id, name, int(expires))
