"""Who a connection speaks for: the hello's tokens checked (:func:`check_credentials`),
then the stored session resumed, a player's fresh one or a new guest
(:func:`identify`), with no I/O and the time passed in (protocol/PROTOCOL.md, section 5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from protocol.errors import CloseCode, ErrorCode
from protocol.messages import Hello
from server.auth import tokens
from server.auth.operator import OperatorIdentity, OperatorTokenError
from server.gateway.answers import Close, error_reply
from server.gateway.options import GatewayOptions


@dataclass(frozen=True, slots=True)
class Greeting:
    """A ``hello`` accepted as the first frame, and the version agreed on."""

    hello: Hello
    version: int


@dataclass(frozen=True, slots=True)
class Credentials:
    """What a hello's tokens say, their signatures and times checked: the session a
    resume token names and the player a login token names (None: no such token), and
    when the login token expires (epoch seconds)."""

    resume: str | None
    player: str | None
    player_expires_s: int | None = None
    name: str | None = None
    """The display name the login token carries (an operator's JWT may), None if none."""


class StoredSession(Protocol):
    """A session as stored (``server.store.players.sessions.Session``)."""

    @property
    def session_id(self) -> str: ...
    @property
    def player(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def guest(self) -> bool: ...
    @property
    def expires_ms(self) -> int | None: ...
    @property
    def opened_ms(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a connection speaks for, as its hello decided."""

    session_id: str
    player: str
    name: str
    guest: bool
    resumed: bool
    """A live session was resumed (its tables are picked up, its other connection closed)."""
    new_guest: bool
    """A guest not seen before: their account is to be opened."""
    expires_ms: int
    """When the session ends: its credential's expiry (epoch ms)."""
    opened_ms: int
    """When the session was opened (epoch ms)."""


def check_credentials(
    options: GatewayOptions,
    hello: Hello,
    wall_s: int,
    operator: OperatorIdentity | OperatorTokenError | None = None,
) -> Credentials | Close:
    """Check the hello's tokens at ``wall_s`` (epoch seconds) with ``options``' secrets:
    a token that is bad or expired closes (4001); the shell then looks up the session a resume token
    names (:func:`identify` decides the rest). ``operator``: what the shell's
    check of the login token as an operator's JWT found (None: it is not one, and
    is checked here as this server's own)."""
    resume = player = None
    if hello.resume_token is not None:
        try:
            resume = tokens.verify(options.resume_secret, hello.resume_token, wall_s)
        except tokens.TokenError as exc:
            reply = error_reply(ErrorCode.UNAUTHORIZED, f"resume token refused: {exc}", hello.rid)
            return Close(CloseCode.UNAUTHORIZED, "resume refused", reply)
    if isinstance(operator, OperatorTokenError):
        reply = error_reply(ErrorCode.UNAUTHORIZED, f"token refused: {operator}", hello.rid)
        return Close(CloseCode.UNAUTHORIZED, "token refused", reply)
    if operator is not None:
        return Credentials(resume, operator.player_id, operator.expires_at, operator.name)
    expires = None
    if hello.token is not None:
        try:
            player, expires = tokens.read(options.secret, hello.token, wall_s)
        except tokens.TokenError as exc:
            reply = error_reply(ErrorCode.UNAUTHORIZED, f"token refused: {exc}", hello.rid)
            return Close(CloseCode.UNAUTHORIZED, "token refused", reply)
    return Credentials(resume, player, expires)


def identify(
    options: GatewayOptions,
    session_id: str,
    hello: Hello,
    credentials: Credentials,
    stored: StoredSession | None,
    guest_id: str,
    wall_ms: int,
    revoked_ms: int | None = None,
) -> Identity | Close:
    """Who the connection speaks for at ``wall_ms``, given the session id a new session
    gets (``session_id``), the session stored under ``credentials.resume`` (None: none
    named, or gone), when an operator last ended that session's player's sessions
    (``revoked_ms``) and the id a new guest would get.

    A login token names the player: their stored session is resumed, bounded by
    that token, even one that ended when its earlier credential expired; one opened
    before ``revoked_ms`` (ended by an operator) is refused (4001); another
    player's is not resumed and a fresh one starts. Without a token, a stored
    session is resumed as it was unless it has ended (its credential expired, or it
    was opened before ``revoked_ms``: 4001), and else a new guest comes in where
    guests are allowed (4001 if not).
    """
    session = stored
    ends_ms = None
    if session is not None:
        ends_ms = session.expires_ms
        if ends_ms is None and session.guest:
            # Stored before sessions had an end: a guest's ends a lifetime from now,
            # a player's has ended (its token is unknown).
            ends_ms = wall_ms + options.guest_lifetime_ms
    revoked = session is not None and revoked_ms is not None and session.opened_ms < revoked_ms
    ended = session is not None and (ends_ms is None or ends_ms <= wall_ms or revoked)
    if credentials.player is not None:
        if session is not None and session.player != credentials.player:
            session = None  # someone else's: start a fresh one
        elif session is not None and revoked:
            # Ended by an operator: no token brings it back (protocol/PROTOCOL.md,
            # section 5); a hello without the resume token starts a fresh one.
            reply = error_reply(
                ErrorCode.UNAUTHORIZED,
                "an operator ended this session: sign in again without resume_token",
                hello.rid,
            )
            return Close(CloseCode.UNAUTHORIZED, "session ended", reply)
        # A session that ended with its credential is resumed with the new one.
        player, guest = credentials.player, False
        # The operator's name for the player wins: the player does not choose it.
        kept = session.name if session is not None else player
        name = credentials.name or hello.name or kept
        assert credentials.player_expires_s is not None
        expires_ms = credentials.player_expires_s * 1000
    elif session is not None:
        if ended:
            reply = error_reply(
                ErrorCode.UNAUTHORIZED,
                "the session has ended (its credential expired, or it was ended): sign in again",
                hello.rid,
            )
            return Close(CloseCode.UNAUTHORIZED, "session ended", reply)
        player, guest, name = session.player, session.guest, hello.name or session.name
        assert ends_ms is not None
        expires_ms = ends_ms
    elif not options.guests:
        reply = error_reply(ErrorCode.UNAUTHORIZED, "guests are not allowed here", hello.rid)
        return Close(CloseCode.UNAUTHORIZED, "no guests", reply)
    else:
        player, guest, name = guest_id, True, hello.name or "Guest"
        expires_ms = wall_ms + options.guest_lifetime_ms
    opened_ms = wall_ms
    if session is not None:
        session_id = session.session_id
        opened_ms = session.opened_ms
    return Identity(
        session_id=session_id,
        player=player,
        name=name,
        guest=guest,
        resumed=session is not None,
        new_guest=guest and session is None,
        expires_ms=expires_ms,
        opened_ms=opened_ms,
    )
