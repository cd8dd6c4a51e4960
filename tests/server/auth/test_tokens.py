"""Player tokens: valid, expired, forged, malformed."""

from __future__ import annotations

import base64

import pytest

from server.auth.tokens import (
    TokenBadSignature,
    TokenError,
    TokenErrorReason,
    TokenExpired,
    TokenMalformed,
    check_player,
    issue,
    verify,
)

SECRET = b"s" * 32
NOW = 1_700_000_000


def test_valid_token() -> None:
    token = issue(SECRET, "ann_1.x-y", 60, NOW)
    assert verify(SECRET, token, NOW) == "ann_1.x-y"
    assert verify(SECRET, token, NOW + 59) == "ann_1.x-y"


def test_expired_token() -> None:
    token = issue(SECRET, "ann", 60, NOW)
    with pytest.raises(TokenExpired) as info:
        verify(SECRET, token, NOW + 60)
    assert info.value.reason is TokenErrorReason.EXPIRED


def test_forged_tokens() -> None:
    token = issue(SECRET, "ann", 60, NOW)
    with pytest.raises(TokenBadSignature):
        verify(b"t" * 32, token, NOW)  # another secret
    payload, signature = token.split(".")
    # Claim to be bob, or to live longer, with ann's signature.
    for claim in (f"v1|bob|{NOW + 60}", f"v1|ann|{NOW + 10**6}"):
        forged = base64.urlsafe_b64encode(claim.encode()).rstrip(b"=").decode()
        with pytest.raises(TokenBadSignature):
            verify(SECRET, f"{forged}.{signature}", NOW)
    flipped = signature[:-2] + ("A" if signature[-2] != "A" else "B") + signature[-1]
    with pytest.raises(TokenBadSignature):
        verify(SECRET, f"{payload}.{flipped}", NOW)
    # A forged token that is also expired is reported as forged.
    with pytest.raises(TokenBadSignature):
        verify(b"t" * 32, token, NOW + 10**6)


@pytest.mark.parametrize(
    "token",
    ["", "abc", "a.b.c", "***.***", "é.é", "x" * 1000, "YQ.", ".YQ", "YQ==.YQ=="],
)
def test_malformed_tokens(token: str) -> None:
    with pytest.raises(TokenMalformed) as info:
        verify(SECRET, token, NOW)
    assert isinstance(info.value, TokenError)
    assert info.value.reason is TokenErrorReason.MALFORMED


def test_signed_but_unparsable_payload_is_malformed() -> None:
    import hashlib
    import hmac

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    for payload in (b"v2|ann|1", b"v1|ann", b"v1|a:b|99999999999", b"v1|ann|-5"):
        encoded = b64(payload)
        signature = b64(hmac.new(SECRET, encoded.encode(), hashlib.sha256).digest())
        with pytest.raises(TokenMalformed):
            verify(SECRET, f"{encoded}.{signature}", NOW)


@pytest.mark.parametrize("name", ["", "a" * 33, "a b", "a:b", "é", "{x}"])
def test_bad_player_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="player name"):
        issue(SECRET, name, 60, NOW)
    with pytest.raises(ValueError, match="player name"):
        check_player(name)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="at least"):
        issue(b"short", "ann", 60, NOW)
    with pytest.raises(ValueError, match="positive"):
        issue(SECRET, "ann", 0, NOW)
