"""What the gateway is configured with: one :class:`GatewayOptions`, made from the
process's :class:`~server.config.Settings` by :func:`gateway_options`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from server.auth.operator import OperatorTokenRules
from server.config import Settings

if TYPE_CHECKING:
    from server.auth.jwks import KeySet
    from server.auth.operator_jwt import OperatorTokens


@dataclass(frozen=True)
class GatewayOptions:
    """The gateway's settings (the fields of :class:`~server.config.Settings` it uses,
    and the token secret)."""

    secret: bytes = field(repr=False)
    """Signs login tokens; resume tokens are signed with a key derived from it."""
    guests: bool
    guest_balance: int
    heartbeat_ms: int
    handshake_ms: int
    queue_size: int
    rate: int
    server_name: str
    max_connections: int
    guest_lifetime_ms: int = 24 * 3600 * 1000
    """How long a guest's session lasts at most, from the guest's creation."""
    guests_per_minute: int = 0
    """New guests a minute at most, in total (0: no limit)."""
    guests_per_address: int = 0
    """New guests a minute at most from one client address (0: no limit)."""
    connections_per_address: int = 0
    """Open connections from one client address at most (0: no limit)."""
    handshakes_per_address: int = 0
    """Connections from one client address before their hello at most (0: no limit)."""
    trusted_proxies: tuple[str, ...] = ()
    """Addresses or CIDRs of the proxies whose ``forwarded_header`` is believed."""
    forwarded_header: str = "X-Forwarded-For"
    """The header in which a trusted proxy passes the client's address."""
    resume_secret: bytes = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # A key of its own: a resume token is never also a login token.
        derived = hashlib.sha256(b"paigow-resume\0" + self.secret).digest()
        object.__setattr__(self, "resume_secret", derived)


def gateway_options(settings: Settings, secret: bytes) -> GatewayOptions:
    """The gateway's options from the process's settings and its token secret."""
    return GatewayOptions(
        secret=secret,
        guests=settings.guests,
        guest_balance=settings.guest_balance,
        heartbeat_ms=settings.heartbeat_ms,
        handshake_ms=settings.handshake_ms,
        queue_size=settings.send_queue,
        rate=settings.rate_per_s,
        server_name=settings.server_name,
        max_connections=settings.max_connections,
        guest_lifetime_ms=settings.guest_lifetime_ms,
        guests_per_minute=settings.guests_per_minute,
        guests_per_address=settings.guests_per_address,
        connections_per_address=settings.connections_per_address,
        handshakes_per_address=settings.handshakes_per_address,
        trusted_proxies=settings.trusted_proxies,
        # The older setting names the header still, believed only from trusted proxies.
        forwarded_header=settings.guest_address_header or settings.forwarded_header,
    )


def operator_tokens(settings: Settings) -> OperatorTokens | None:
    """The check of operator JWTs the settings configure (None: no JWKS, none accepted).
    Raises ``ValueError`` for settings that cannot be used (both a URL and a file, no
    issuer or audience, an algorithm not allowed)."""
    s = settings
    if s.jwt_jwks_url is None and s.jwt_jwks_file is None:
        return None
    # Here only: PyJWT, cryptography and aiohttp take a few hundred milliseconds to load,
    # which a node without a JWKS does not spend on each start (after a crash too).
    from server.auth.jwks import FileKeySet, UrlKeySet
    from server.auth.operator_jwt import OperatorTokens

    if s.jwt_jwks_url is not None and s.jwt_jwks_file is not None:
        raise ValueError("the operator's JWKS comes from a URL or a file, not both")
    rules = OperatorTokenRules(
        issuer=s.jwt_issuer or "",
        audience=s.jwt_audience or "",
        algorithms=frozenset(s.jwt_algorithms),
        player_claim=s.jwt_player_claim,
        name_claim=s.jwt_name_claim,
        roles_claim=s.jwt_roles_claim,
        leeway_s=s.jwt_leeway_ms // 1000,
    )
    ages = {
        "max_age_s": s.jwt_jwks_max_age_ms / 1000,
        "min_refresh_s": s.jwt_jwks_refresh_ms / 1000,
    }
    keys: KeySet
    if s.jwt_jwks_url is not None:
        keys = UrlKeySet(s.jwt_jwks_url, **ages)
    else:
        assert s.jwt_jwks_file is not None
        keys = FileKeySet(s.jwt_jwks_file, **ages)
    return OperatorTokens(rules, keys)
