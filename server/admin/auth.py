"""Who calls the operator's API: a bearer credential, checked on every request.

Two kinds of bearer token are accepted:

- an admin token of this server (:mod:`server.admin.tokens`): genuine, not expired,
  and still standing in the store (a revoked token fails at its next request);
- any other token, when the server is given a ``bearer`` check for them (the
  operator's JWTs, by ``server.auth``): the identity it returns must hold the role
  :data:`ADMIN_ROLE`, else 403. Whatever the check raises refuses the token (401).

Without a ``bearer`` check only admin tokens are accepted: a player's token (this
server's or a JWT) is never one.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Collection
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from server.admin import tokens
from server.store import AdminTokens

if TYPE_CHECKING:  # PyJWT is loaded only with a JWKS configured
    from server.auth.operator_jwt import OperatorTokens

ADMIN_ROLE = "admin"
"""The role an operator's identity (a JWT's) needs to use the API."""


class BearerIdentity(Protocol):
    """What a ``bearer`` check returns (``server.auth``'s operator identity fits)."""

    @property
    def name(self) -> str: ...

    @property
    def roles(self) -> Collection[str]: ...


BearerCheck = Callable[[str], Awaitable[BearerIdentity]]
"""Verifies a bearer token that is not an admin token; raises if it is not good."""


@dataclass(frozen=True, slots=True)
class _JwtOperator:
    name: str
    roles: frozenset[str]


def jwt_bearer(operator_tokens: OperatorTokens) -> BearerCheck:
    """The ``bearer`` check of the operator's JWTs: ``operator_tokens`` verifies the
    token (raising refuses it); the operator is named by the name claim, else the
    player claim (every ledger entry they make carries it)."""

    async def check(token: str) -> BearerIdentity:
        identity = await operator_tokens.verify(token)
        return _JwtOperator(identity.name or identity.player_id, identity.roles)

    return check


class Unauthorized(Exception):
    """No good credential (401): ``code`` says which way (``unauthorized``,
    ``token_refused``, ``token_revoked``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class Forbidden(Exception):
    """A good credential without the admin role (403)."""


@dataclass(frozen=True, slots=True)
class Operator:
    """Who is calling: ``name`` (on every ledger entry they make), ``via``
    (``admin_token`` or ``bearer``), the admin token's id (None for a bearer's)."""

    name: str
    via: str
    token_id: str | None = None
    expires_s: int | None = None


CALLER: ContextVar[Operator] = ContextVar("admin_caller")
"""The operator of the request being handled (set by the server's middleware; each
request is handled in a task of its own, so this is the request's)."""


class Authenticator:
    """Checks the ``Authorization`` header of each request."""

    def __init__(
        self, secret: bytes, records: AdminTokens, bearer: BearerCheck | None = None
    ) -> None:
        self.secret = secret
        self.records = records
        self.bearer = bearer

    async def operator(self, authorization: str | None) -> Operator:
        """The operator behind ``authorization`` (the header's value); raises
        :class:`Unauthorized` or :class:`Forbidden`."""
        scheme, _, token = (authorization or "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise Unauthorized("unauthorized", "a bearer token is needed")
        if tokens.is_admin_token(token):
            try:
                claims = tokens.read(self.secret, token, int(time.time()))
            except tokens.AdminTokenError as exc:
                raise Unauthorized("token_refused", f"admin token refused: {exc}") from None
            if await self.records.standing(claims.token_id) is None:
                raise Unauthorized("token_revoked", "admin token revoked")
            return Operator(claims.name, "admin_token", claims.token_id, claims.expires_s)
        if self.bearer is None:
            raise Unauthorized("token_refused", "not an admin token")
        try:
            identity = await self.bearer(token)
        except Exception:
            raise Unauthorized("token_refused", "token refused") from None
        if ADMIN_ROLE not in identity.roles:
            raise Forbidden(f"{identity.name} does not have the {ADMIN_ROLE!r} role")
        return Operator(identity.name, "bearer")
