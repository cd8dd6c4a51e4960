"""Operator JWTs: a player signed in by the operator's own login service -- what a
check of one answers (:class:`OperatorIdentity`) or raises (:class:`OperatorTokenError`
with a :class:`Reason`), the rules it checks (:class:`OperatorTokenRules`), and a JWT's
shape (:func:`looks_like_jwt`).

The check itself, with PyJWT, is :class:`server.auth.operator_jwt.OperatorTokens`. This
module imports neither PyJWT nor an HTTP client: the gateway reads these types on every
start, and a node without a JWKS configured never loads those (they cost a restart
after a crash a few hundred milliseconds).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

ALLOWED_ALGORITHMS = frozenset({"RS256", "ES256", "EdDSA"})
"""The algorithms an operator's tokens may be signed with: asymmetric only."""

MAX_JWT_CHARS = 2048  # the hello's token field's limit (protocol/PROTOCOL.md, section 6)
MAX_NAME_CHARS = 32  # a display name (protocol/PROTOCOL.md, section 8, welcome)


class Reason(StrEnum):
    """Why an operator token was refused."""

    MALFORMED = "malformed"
    ALGORITHM = "algorithm_not_allowed"
    UNKNOWN_KEY = "unknown_key"
    BAD_SIGNATURE = "bad_signature"
    EXPIRED = "expired"
    NOT_YET_VALID = "not_yet_valid"
    WRONG_ISSUER = "wrong_issuer"
    WRONG_AUDIENCE = "wrong_audience"
    BAD_CLAIM = "bad_claim"
    KEYS_UNAVAILABLE = "keys_unavailable"


class OperatorTokenError(ValueError):
    """An operator token was refused; ``reason`` says why (the message says more)."""

    def __init__(self, reason: Reason, message: str) -> None:
        super().__init__(f"{reason.value}: {message}")
        self.reason = reason


@dataclass(frozen=True, slots=True)
class OperatorIdentity:
    """Who a verified operator token speaks for."""

    player_id: str
    """The player (the player claim; 1 to 32 of ``[A-Za-z0-9_.-]``)."""
    name: str | None
    """The display name (the name claim, cut to 32 characters), None when absent."""
    roles: frozenset[str]
    """The roles claim's strings (an ``admin`` role opens the operator's API)."""
    expires_at: int
    """The token's ``exp`` (epoch seconds)."""


@dataclass(frozen=True, slots=True)
class OperatorTokenRules:
    """What an operator token must satisfy, and where its claims are."""

    issuer: str
    audience: str
    algorithms: frozenset[str] = ALLOWED_ALGORITHMS
    player_claim: str = "sub"
    name_claim: str = "name"
    roles_claim: str = "roles"
    leeway_s: int = 30
    """The clock skew allowed on ``exp`` and ``nbf`` (seconds)."""

    def __post_init__(self) -> None:
        unsafe = set(self.algorithms) - ALLOWED_ALGORITHMS
        if unsafe or not self.algorithms:
            raise ValueError(
                f"operator tokens may use only {', '.join(sorted(ALLOWED_ALGORITHMS))}: "
                f"not {', '.join(sorted(unsafe)) or 'none at all'}"
            )
        if not self.issuer or not self.audience:
            raise ValueError("operator tokens need an issuer and an audience to check")
        if not 0 <= self.leeway_s <= 300:
            raise ValueError(f"the clock skew is 0 to 300 seconds: {self.leeway_s}")


def looks_like_jwt(token: str) -> bool:
    """Whether ``token`` has a JWT's shape (three dot-separated parts); this server's own
    tokens have two (:mod:`server.auth.tokens`)."""
    return token.count(".") == 2
