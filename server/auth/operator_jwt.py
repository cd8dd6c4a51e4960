"""Operator JWTs checked with PyJWT: :meth:`OperatorTokens.verify` checks a JWT against
the operator's keys (:mod:`server.auth.jwks`): its algorithm is one allowed (asymmetric
only: RS256, ES256, EdDSA; never ``none`` nor an HMAC one, so a public key can never
serve as an HMAC secret), the key its ``kid`` names signed it, and its issuer, audience,
expiry and not-before hold, within a small clock skew. It answers an
:class:`~server.auth.operator.OperatorIdentity` (the player id, display name and roles
from the configured claims) or raises :class:`~server.auth.operator.OperatorTokenError`
with a :class:`~server.auth.operator.Reason`.

Imported only where a JWKS is configured (PyJWT and ``cryptography`` are slow to load).
"""

from __future__ import annotations

from collections.abc import Mapping

import jwt

from server.auth.jwks import JwksUnavailable, KeySet
from server.auth.operator import (
    MAX_JWT_CHARS,
    MAX_NAME_CHARS,
    OperatorIdentity,
    OperatorTokenError,
    OperatorTokenRules,
    Reason,
    looks_like_jwt,
)
from server.auth.tokens import is_valid_player


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
