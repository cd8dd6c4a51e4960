"""Signed, expiring player tokens (HMAC-SHA256), pure: the time is an argument.

A token is ``<payload>.<signature>``, both unpadded base64url. The payload is the
ASCII text ``v1|<player>|<expires_s>`` (``expires_s`` in whole seconds since the
epoch); the signature is HMAC-SHA256 with the server's secret over the encoded
payload, so a token is checked before anything in it is believed.

:func:`verify` raises one :class:`TokenError` subclass per failure: a token that is
not of this shape is :class:`TokenMalformed`, a wrong signature
:class:`TokenBadSignature`, a good token past its time :class:`TokenExpired`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from enum import StrEnum

PLAYER_NAME = re.compile(r"[A-Za-z0-9_.-]{1,32}")
"""A player name: 1 to 32 of letters, digits, ``_``, ``.`` and ``-``."""

MIN_SECRET_BYTES = 16
MAX_TOKEN_CHARS = 256  # longer input is refused before any decoding work
_VERSION = "v1"


class TokenErrorReason(StrEnum):
    """Why a token was refused."""

    MALFORMED = "malformed"
    BAD_SIGNATURE = "bad_signature"
    EXPIRED = "expired"


class TokenError(ValueError):
    """A token was refused; ``reason`` says why."""

    reason: TokenErrorReason = TokenErrorReason.MALFORMED


class TokenMalformed(TokenError):
    """Not a token of this format."""

    reason = TokenErrorReason.MALFORMED


class TokenBadSignature(TokenError):
    """The signature does not match (forged, altered, or another secret)."""

    reason = TokenErrorReason.BAD_SIGNATURE


class TokenExpired(TokenError):
    """A genuine token whose time has passed."""

    reason = TokenErrorReason.EXPIRED


def is_valid_player(name: str) -> bool:
    """Whether ``name`` is an acceptable player name."""
    return PLAYER_NAME.fullmatch(name) is not None


def check_player(name: str) -> str:
    """Return ``name`` if it is an acceptable player name, else raise ``ValueError``."""
    if not is_valid_player(name):
        raise ValueError(f"a player name is 1 to 32 of [A-Za-z0-9_.-]: {name!r}")
    return name


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


_B64URL = re.compile(r"[A-Za-z0-9_-]+")


def _b64decode(text: str) -> bytes:
    if _B64URL.fullmatch(text) is None or len(text) % 4 == 1:
        raise TokenMalformed("not base64url")
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise TokenMalformed("not base64url") from exc
    # Refuse non-canonical encodings (stray bits in the last character), so that one
    # token has exactly one spelling.
    if _b64encode(data) != text:
        raise TokenMalformed("not canonical base64url")
    return data


def _sign(secret: bytes, signing_input: bytes) -> bytes:
    return hmac.new(secret, signing_input, hashlib.sha256).digest()


def _check_secret(secret: bytes) -> None:
    if len(secret) < MIN_SECRET_BYTES:
        raise ValueError(f"the token secret must be at least {MIN_SECRET_BYTES} bytes")


def issue(secret: bytes, player: str, ttl_s: int, now_s: int) -> str:
    """A token for ``player``, valid from ``now_s`` for ``ttl_s`` (> 0) seconds.

    Raises ``ValueError`` for a bad player name, a non-positive ``ttl_s`` or a secret
    shorter than :data:`MIN_SECRET_BYTES`.
    """
    _check_secret(secret)
    check_player(player)
    if ttl_s <= 0:
        raise ValueError(f"a token lives a positive number of seconds: {ttl_s!r}")
    payload = _b64encode(f"{_VERSION}|{player}|{now_s + ttl_s}".encode("ascii"))
    return f"{payload}.{_b64encode(_sign(secret, payload.encode('ascii')))}"


def verify(secret: bytes, token: str, now_s: int) -> str:
    """The player named by ``token`` if it is genuine and ``now_s`` is before its expiry.

    Raises :class:`TokenMalformed`, :class:`TokenBadSignature` or
    :class:`TokenExpired` (all :class:`TokenError`). The signature is checked before
    the expiry, so a forged token is never reported as merely expired.
    """
    return read(secret, token, now_s)[0]


def read(secret: bytes, token: str, now_s: int) -> tuple[str, int]:
    """The player named by ``token`` and when it expires (epoch seconds), if it is
    genuine and ``now_s`` is before its expiry; raises as :func:`verify` does."""
    _check_secret(secret)
    if not isinstance(token, str) or not token.isascii() or len(token) > MAX_TOKEN_CHARS:
        raise TokenMalformed("not a token")
    parts = token.split(".")
    if len(parts) != 2:
        raise TokenMalformed("a token has two parts")
    payload_b64, signature_b64 = parts
    signature = _b64decode(signature_b64)
    payload = _b64decode(payload_b64)
    expected = _sign(secret, payload_b64.encode("ascii"))
    if not hmac.compare_digest(signature, expected):
        raise TokenBadSignature("bad signature")
    # Signed by us, so a parse failure below means a format change, still reported.
    try:
        version, player, expires = payload.decode("ascii").split("|")
    except (UnicodeDecodeError, ValueError) as exc:
        raise TokenMalformed("bad payload") from exc
    if version != _VERSION or not is_valid_player(player) or not expires.isdigit():
        raise TokenMalformed("bad payload")
    if now_s >= int(expires):
        raise TokenExpired(f"expired at {expires}")
    return player, int(expires)
