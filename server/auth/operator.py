"""Operator JWTs: a player signed in by the operator's own login service.

:meth:`OperatorTokens.verify` checks a JWT against the operator's keys
(:mod:`server.auth.jwks`) with PyJWT: its algorithm is one allowed (asymmetric only:
RS256, ES256, EdDSA; never ``none`` nor an HMAC one, so a public key can never serve as
an HMAC secret), the key its ``kid`` names signed it, and its issuer, audience, expiry
and not-before hold, within a small clock skew. It answers an
:class:`OperatorIdentity` (the player id, display name and roles from the configured
claims) or raises :class:`OperatorTokenError` with a :class:`Reason`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

import jwt

from server.auth.jwks import JwksUnavailable, KeySet
from server.auth.tokens import is_valid_player

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


class OperatorTokens:
    """Verifies operator JWTs by ``rules`` with the keys of ``keys``, at the wall
    clock's time (PyJWT reads it)."""

    def __init__(self, rules: OperatorTokenRules, keys: KeySet) -> None:
        self.rules = rules
        self.keys = keys

    async def verify(self, token: str) -> OperatorIdentity:
        """The identity ``token`` proves; raises :class:`OperatorTokenError`. The
        signature is checked before any claim is believed."""
        rules = self.rules
        if not isinstance(token, str) or len(token) > MAX_JWT_CHARS or not looks_like_jwt(token):
            raise OperatorTokenError(Reason.MALFORMED, "not a JWT")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise OperatorTokenError(Reason.MALFORMED, str(exc)) from None
        alg = header.get("alg")
        if alg not in rules.algorithms:
            raise OperatorTokenError(Reason.ALGORITHM, f"algorithm {alg!r} is not accepted")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise OperatorTokenError(Reason.MALFORMED, "kid is not a string")
        try:
            key = await self.keys.find(kid)
        except JwksUnavailable as exc:
            raise OperatorTokenError(Reason.KEYS_UNAVAILABLE, str(exc)) from None
        if key is None:
            raise OperatorTokenError(Reason.UNKNOWN_KEY, f"no key {kid!r} in the operator's keys")
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=sorted(rules.algorithms),
                audience=rules.audience,
                issuer=rules.issuer,
                leeway=rules.leeway_s,
                options={"require": ["exp", "iss", "aud", rules.player_claim]},
            )
        except jwt.InvalidAlgorithmError as exc:
            raise OperatorTokenError(Reason.ALGORITHM, str(exc)) from None
        except jwt.InvalidSignatureError:
            raise OperatorTokenError(Reason.BAD_SIGNATURE, "signature does not verify") from None
        except jwt.ExpiredSignatureError:
            raise OperatorTokenError(Reason.EXPIRED, "the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise OperatorTokenError(Reason.NOT_YET_VALID, "the token is not valid yet") from None
        except jwt.InvalidIssuerError:
            raise OperatorTokenError(Reason.WRONG_ISSUER, "not issued by the operator") from None
        except jwt.InvalidAudienceError:
            raise OperatorTokenError(Reason.WRONG_AUDIENCE, "not meant for this server") from None
        except jwt.MissingRequiredClaimError as exc:
            raise OperatorTokenError(Reason.BAD_CLAIM, str(exc)) from None
        except jwt.PyJWTError as exc:
            raise OperatorTokenError(Reason.MALFORMED, str(exc)) from None
        return self._identity(claims)

    def _identity(self, claims: Mapping[str, object]) -> OperatorIdentity:
        rules = self.rules
        player = claims.get(rules.player_claim)
        if not isinstance(player, str) or not is_valid_player(player):
            raise OperatorTokenError(
                Reason.BAD_CLAIM,
                f"claim {rules.player_claim!r} is no player id (1 to 32 of [A-Za-z0-9_.-])",
            )
        name = claims.get(rules.name_claim)
        display = (name.strip()[:MAX_NAME_CHARS] or None) if isinstance(name, str) else None
        raw_roles = claims.get(rules.roles_claim, ())
        if isinstance(raw_roles, str):
            raw_roles = raw_roles.split()  # an OAuth-style space-separated "scope" string
        roles = (
            frozenset(r for r in raw_roles if isinstance(r, str))
            if isinstance(raw_roles, (list, tuple))
            else frozenset()
        )
        expires = claims["exp"]
        if not isinstance(expires, (int, float)) or isinstance(expires, bool):
            raise OperatorTokenError(Reason.BAD_CLAIM, "exp is not a number")
        return OperatorIdentity(player, display, roles, int(expires))
