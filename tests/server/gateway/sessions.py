"""Sessions for the tests of the session's rules: options, a new session, a hello frame,
the handshake up to who the session speaks for, a welcomed guest, and a close checked;
every time is given (``T0`` the loop's, ``WALL_S`` the epoch seconds tokens are checked at)."""

from __future__ import annotations

import dataclasses
from typing import Any

from protocol.codec import encode
from protocol.errors import CloseCode
from protocol.messages import Hello
from server.config import Settings
from server.gateway.options import GatewayOptions, gateway_options
from server.gateway.session import Close, Credentials, Greeting, Identity, Session
from server.store.players.sessions import Session as StoredSession

SECRET = b"session-test-secret-0123456789"
WALL_S = 1_700_000_000
WALL_MS = WALL_S * 1000
T0 = 1000.0  # the loop's time when the connection opened
DAY_MS = 24 * 3600 * 1000
GUEST_ENDS = WALL_MS + DAY_MS  # a guest created at WALL_MS, with the default lifetime


def options(**changes: Any) -> GatewayOptions:
    settings = Settings(heartbeat_ms=1000, handshake_ms=10_000, rate_per_s=20)
    return gateway_options(dataclasses.replace(settings, **changes), SECRET)


def new_session(**changes: Any) -> Session:
    return Session(options(**changes), "s-new", T0)


def hello_frame(rid: str = "h", **fields: Any) -> bytes:
    base: dict[str, Any] = {"min_version": 1, "max_version": 1, "client": "t", "guest": True}
    return encode(Hello(rid=rid, **{**base, **fields}))


def greet(session: Session, frame: bytes) -> Greeting:
    greeting = session.receive_hello(frame)
    assert isinstance(greeting, Greeting), greeting
    return greeting


def identify(
    session: Session,
    frame: bytes,
    stored: StoredSession | None = None,
    wall_s: int = WALL_S,
    revoked_ms: int | None = None,
) -> Identity | Close:
    """The handshake at ``wall_s`` up to who the session speaks for, ``stored`` found in
    the store."""
    greeting = greet(session, frame)
    credentials = session.credentials(greeting.hello, wall_s)
    if isinstance(credentials, Close):
        return credentials
    found = stored if stored is not None and credentials.resume == stored.session_id else None
    return session.identify(greeting.hello, credentials, found, "g-new", wall_s * 1000, revoked_ms)


def welcomed(session: Session, now: float = T0) -> Session:
    """``session`` past its hello (a guest), its silence counted from ``now``."""
    greeting = greet(session, hello_frame())
    identity = session.identify(greeting.hello, Credentials(None, None), None, "g-1", WALL_MS)
    assert isinstance(identity, Identity)
    session.welcome(greeting, identity, WALL_S * 1000)
    session.heard(now)
    return session


def closed_with(result: object, code: CloseCode, error: str | None = None) -> Close:
    assert isinstance(result, Close), result
    assert result.code == code
    if error is None:
        assert result.reply is None
    else:
        assert result.reply is not None
        assert result.reply.code == error
    return result
