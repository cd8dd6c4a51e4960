"""The rules of one client connection, with no I/O and no clock of its own.

As ``websockets`` keeps its protocol (``websockets.protocol``) apart from the asyncio
connection that drives it, a :class:`Session` decides and the shell around it
(:mod:`server.gateway.connection` and :class:`~server.gateway.gateway.Gateway`) reads,
writes, waits and looks things up in Redis. Each method is given the frame received
and the time (``now``: the event loop's clock, in seconds; ``wall_s``/``wall_ms``:
epoch time, where tokens expire or the client is told the time) and answers with what
to send and whether to close. The rules (protocol/PROTOCOL.md, sections 5 and 12):

- the first frame must be a ``hello``, within the handshake time; the version is the
  highest both sides speak; a later ``hello`` is refused and the session carries on;
- who the connection speaks for: the player of a login token (resuming their session
  the resume token names, unless an operator ended it), the session a resume token
  names (if still stored, and neither past its credential's expiry nor ended by an
  operator), else a new guest where guests are allowed (and the shell's count of
  new guests allows one more);
- a session ends when the credential that opened it expires (a guest's: a fixed time
  after the guest was created): the connection is closed then (4001);
- a token bucket limits the message rate; far over it, the connection is closed;
- ten invalid frames in a row close it;
- so do two heartbeats without a frame, the time a request is being handled not
  counting (the client's next frames wait unread meanwhile);
- the error that explains a close is sent before the close frame, and once closing
  the session takes no more requests.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Protocol

from protocol import limits as L
from protocol.codec import decode_client
from protocol.errors import ERRORS, CloseCode, ErrorCode, ProtocolError
from protocol.messages import ClientMessage, ErrorReply, Hello, OkReply
from protocol.structs import Welcome
from protocol.version import (
    MAX_SUPPORTED_VERSION,
    MIN_SUPPORTED_VERSION,
    PROTOCOL_MINOR,
    negotiate,
)
from server.auth import tokens
from server.auth.operator import OperatorIdentity, OperatorTokenError
from server.gateway.options import GatewayOptions
from server.gateway.rate import RateLimiter

RESUME_TTL_S = 24 * 3600
"""How long a resume token is good for (the stored session may end sooner)."""


def error_reply(
    code: ErrorCode, message: str, rid: str | None, table_id: str | None = None
) -> ErrorReply:
    """The ``error`` reply for ``code``."""
    return ErrorReply(
        code=code.value,
        message=message[: L.MAX_TEXT_LEN],
        retryable=ERRORS[code].retryable,
        rid=rid,
        table_id=table_id,
    )


# --- what a session answers ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Close:
    """Close the connection with ``code``, after sending ``reply`` (if any)."""

    code: CloseCode
    reason: str
    reply: ErrorReply | None = None


SILENCE = Close(CloseCode.HEARTBEAT_TIMEOUT, "no message for two heartbeats")
EXPIRED = Close(
    CloseCode.UNAUTHORIZED,
    "credentials expired",
    error_reply(ErrorCode.UNAUTHORIZED, "the session's credentials expired: sign in again", None),
)
REVOKED = Close(
    CloseCode.UNAUTHORIZED,
    "session ended",
    error_reply(ErrorCode.UNAUTHORIZED, "an operator ended this session", None),
)
GUEST_TOUCH_S = 300.0
"""How often a connected guest's activity is recorded (idle guests are closed)."""


def guests_limited(hello: Hello, which: str, retry_after_ms: int) -> Close:
    """The close of a hello refused a new guest by the ``which`` limit (protocol/PROTOCOL.md,
    section 5): ``guests_limited`` with when to retry, then 1013."""
    reply = error_reply(
        ErrorCode.GUESTS_LIMITED,
        f"too many new guests this minute ({which}): retry later, or sign in",
        hello.rid,
    )
    return Close(
        CloseCode.TRY_AGAIN_LATER,
        "too many new guests",
        replace(reply, retry_after_ms=max(1, retry_after_ms)),
    )


NO_HELLO = Close(CloseCode.HANDSHAKE_TIMEOUT, "no hello in time")
TEXT_FRAME = Close(CloseCode.UNSUPPORTED_DATA, "text frames are not part of the protocol")


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


@dataclass(frozen=True, slots=True)
class Refuse:
    """A well-formed request refused without handling (a second ``hello``): send ``reply``."""

    message: ClientMessage
    reply: ErrorReply


@dataclass(frozen=True, slots=True)
class Invalid:
    """A frame that is no valid request: send ``reply``, then close with ``then`` if set."""

    reply: ErrorReply
    then: Close | None = None


@dataclass(frozen=True, slots=True)
class Throttle:
    """A request dropped for the rate: send ``reply`` (it says when to retry)."""

    reply: ErrorReply


Received = ClientMessage | Refuse | Invalid | Throttle | Close
"""What :meth:`Session.receive` makes of a frame: a request to hand to its handler (as
it is: most frames are, and they cost no wrapper), or what to do instead."""


# --- the session --------------------------------------------------------------------


class Stage(enum.Enum):
    """Where a session is in its life."""

    HELLO = "hello"  # waiting for the hello
    OPEN = "open"  # welcomed: taking requests
    CLOSING = "closing"  # a close was decided: nothing more is taken


class Session:
    """One connection's rules; see the module docstring.

    ``session_id`` is the id a new session gets (a resumed one takes the stored id);
    ``now`` is when the connection opened: the handshake time runs from it.
    """

    # Slots: one a connection (10,000 a node), a fifth of the size with a dict.
    __slots__ = (
        "busy",
        "closing",
        "errors",
        "expires_at",
        "guest",
        "heard_at",
        "hello_due",
        "limiter",
        "name",
        "options",
        "player",
        "session_id",
        "silence_s",
        "stage",
        "touch_at",
    )

    def __init__(self, options: GatewayOptions, session_id: str, now: float) -> None:
        self.options = options
        self.session_id = session_id
        self.stage = Stage.HELLO
        self.player: str | None = None
        self.name = ""
        self.guest = False
        self.hello_due = now + options.handshake_ms / 1000
        self.limiter = RateLimiter(options.rate, 2 * options.rate, now)
        self.errors = 0  # consecutive invalid frames
        self.closing: Close | None = None  # the close decided, first one standing
        self.silence_s = 2 * options.heartbeat_ms / 1000
        self.heard_at = now  # when the last frame came in, or the last request was handled
        self.busy = False  # a request is being handled: the client's next frames wait
        self.expires_at: float | None = None  # when the session ends (loop time)
        self.touch_at = now + GUEST_TOUCH_S  # when a guest's activity is next recorded

    # --- the handshake --------------------------------------------------------------

    def hello_wait(self, now: float) -> float:
        """Seconds left at ``now`` for the hello to come; when they run out with no
        frame, the connection closes with :data:`NO_HELLO` (4003)."""
        return max(0.0, self.hello_due - now)

    def receive_hello(self, frame: bytes | str) -> Greeting | Close:
        """The first frame (come in time): a hello and its version, or the close."""
        if isinstance(frame, str):
            return TEXT_FRAME
        try:
            hello = decode_client(frame)
        except ProtocolError as exc:
            reply = error_reply(exc.code, str(exc), exc.rid)
            return Close(CloseCode.HELLO_REQUIRED, "first message must be hello", reply)
        if not isinstance(hello, Hello):
            reply = error_reply(
                ErrorCode.HELLO_REQUIRED, "the first message must be hello", hello.rid
            )
            return Close(CloseCode.HELLO_REQUIRED, "first message must be hello", reply)
        version = negotiate(hello.min_version, hello.max_version)
        if version is None:
            reply = error_reply(
                ErrorCode.VERSION_UNSUPPORTED,
                f"this server speaks protocol {MIN_SUPPORTED_VERSION}..{MAX_SUPPORTED_VERSION}",
                hello.rid,
            )
            return Close(CloseCode.VERSION_UNSUPPORTED, "no common version", reply)
        return Greeting(hello, version)

    def credentials(
        self,
        hello: Hello,
        wall_s: int,
        operator: OperatorIdentity | OperatorTokenError | None = None,
    ) -> Credentials | Close:
        """Check the hello's tokens at ``wall_s`` (epoch seconds): a token that is bad
        or expired closes (4001); the shell then looks up the session a resume token
        names (:meth:`identify` decides the rest). ``operator``: what the shell's
        check of the login token as an operator's JWT found (None: it is not one, and
        is checked here as this server's own)."""
        resume = player = None
        if hello.resume_token is not None:
            try:
                resume = tokens.verify(self.options.resume_secret, hello.resume_token, wall_s)
            except tokens.TokenError as exc:
                reply = error_reply(
                    ErrorCode.UNAUTHORIZED, f"resume token refused: {exc}", hello.rid
                )
                return Close(CloseCode.UNAUTHORIZED, "resume refused", reply)
        if isinstance(operator, OperatorTokenError):
            reply = error_reply(ErrorCode.UNAUTHORIZED, f"token refused: {operator}", hello.rid)
            return Close(CloseCode.UNAUTHORIZED, "token refused", reply)
        if operator is not None:
            return Credentials(resume, operator.player_id, operator.expires_at, operator.name)
        expires = None
        if hello.token is not None:
            try:
                player, expires = tokens.read(self.options.secret, hello.token, wall_s)
            except tokens.TokenError as exc:
                reply = error_reply(ErrorCode.UNAUTHORIZED, f"token refused: {exc}", hello.rid)
                return Close(CloseCode.UNAUTHORIZED, "token refused", reply)
        return Credentials(resume, player, expires)

    def identify(
        self,
        hello: Hello,
        credentials: Credentials,
        stored: StoredSession | None,
        guest_id: str,
        wall_ms: int,
        revoked_ms: int | None = None,
    ) -> Identity | Close:
        """Who the connection speaks for at ``wall_ms``, given the session stored under
        ``credentials.resume`` (None: none named, or gone), when an operator last ended
        that session's player's sessions (``revoked_ms``) and the id a new guest would
        get.

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
                ends_ms = wall_ms + self.options.guest_lifetime_ms
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
                    "the session has ended (its credential expired, or it was ended): "
                    "sign in again",
                    hello.rid,
                )
                return Close(CloseCode.UNAUTHORIZED, "session ended", reply)
            player, guest, name = session.player, session.guest, hello.name or session.name
            assert ends_ms is not None
            expires_ms = ends_ms
        elif not self.options.guests:
            reply = error_reply(ErrorCode.UNAUTHORIZED, "guests are not allowed here", hello.rid)
            return Close(CloseCode.UNAUTHORIZED, "no guests", reply)
        else:
            player, guest, name = guest_id, True, hello.name or "Guest"
            expires_ms = wall_ms + self.options.guest_lifetime_ms
        opened_ms = wall_ms
        if session is not None:
            self.session_id = session.session_id
            opened_ms = session.opened_ms
        self.player, self.name, self.guest = player, name, guest
        return Identity(
            session_id=self.session_id,
            player=player,
            name=name,
            guest=guest,
            resumed=session is not None,
            new_guest=guest and session is None,
            expires_ms=expires_ms,
            opened_ms=opened_ms,
        )

    def welcome(
        self, greeting: Greeting, identity: Identity, wall_ms: int, now: float | None = None
    ) -> OkReply:
        """The hello's ``ok`` (a ``welcome``, with a fresh resume token, good for
        :data:`RESUME_TTL_S`: past the session's credential, so that a new token of the
        same player resumes it; :meth:`identify` refuses it without one); from now on
        the session takes requests, until it ends (``now``: the loop's time at
        ``wall_ms``; None: not watched)."""
        self.stage = Stage.OPEN
        left_ms = identity.expires_ms - wall_ms
        if now is not None:
            self.expires_at = now + left_ms / 1000
        token = tokens.issue(
            self.options.resume_secret, self.session_id, RESUME_TTL_S, wall_ms // 1000
        )
        welcome = Welcome(
            version=greeting.version,
            minor=PROTOCOL_MINOR,
            session_id=self.session_id,
            resume_token=token,
            player_id=identity.player,
            name=identity.name,
            guest=identity.guest,
            resumed=identity.resumed,
            server_time_ms=wall_ms,
            heartbeat_ms=self.options.heartbeat_ms,
        )
        return OkReply(rid=greeting.hello.rid, result=welcome)

    # --- requests -------------------------------------------------------------------

    def receive(self, frame: bytes | str, now: float) -> Received | None:
        """What to do with a frame received at ``now``, after the welcome: a request
        to handle (then :meth:`handled` once it is answered), or what to do instead
        (None: the session is closing, read no more)."""
        if self.stage is Stage.CLOSING:
            return None
        self.heard_at = now
        if self.expires_at is not None and now >= self.expires_at:
            return EXPIRED
        if isinstance(frame, str):
            return TEXT_FRAME
        if not self.limiter.take(now):
            if self.limiter.flooding:
                return Close(CloseCode.RATE_LIMITED, "far over the message rate")
            # The request is dropped, but its reply still carries its rid (every
            # request gets exactly one reply) and when to retry.
            rid: str | None
            try:
                rid = decode_client(frame).rid
            except ProtocolError as exc:
                rid = exc.rid
            reply = error_reply(ErrorCode.RATE_LIMITED, "too many messages: slow down", rid)
            return Throttle(replace(reply, retry_after_ms=self.limiter.wait_ms()))
        try:
            message = decode_client(frame)
        except ProtocolError as exc:
            self.errors += 1
            reply = error_reply(exc.code, str(exc), exc.rid)
            if self.errors >= L.MAX_CONSECUTIVE_ERRORS:
                return Invalid(reply, Close(CloseCode.TOO_MANY_ERRORS, "too many invalid messages"))
            return Invalid(reply)
        self.errors = 0
        if isinstance(message, Hello):
            refused = error_reply(
                ErrorCode.HELLO_REQUIRED, "hello may be sent only once", message.rid
            )
            return Refuse(message, refused)
        self.busy = True
        return message

    def handled(self, now: float) -> None:
        """The request :meth:`receive` handed out was answered at ``now``."""
        self.busy = False
        self.heard_at = now

    # --- silence and closing --------------------------------------------------------

    def heard(self, now: float) -> None:
        """Count silence from ``now`` (the welcome is sent: the heartbeat starts)."""
        self.heard_at = now

    def check_silence(self, now: float) -> float | Close:
        """At ``now``: when to check again (the loop's time), or the close for a client
        silent for two heartbeats (4004), or for a session that has ended (4001). While a
        request is handled the wait starts again: the client did speak, and its next
        frames wait unread."""
        if self.expires_at is not None and now >= self.expires_at:
            return EXPIRED
        due = now + self.silence_s if self.busy else self.heard_at + self.silence_s
        if now >= due:
            return SILENCE
        return due if self.expires_at is None else min(due, self.expires_at)

    def touch_due(self, now: float) -> bool:
        """Whether a guest's activity is to be recorded at ``now`` (then not again for
        :data:`GUEST_TOUCH_S`)."""
        if not self.guest or now < self.touch_at:
            return False
        self.touch_at = now + GUEST_TOUCH_S
        return True

    def close(self, close: Close) -> list[ErrorReply] | None:
        """Decide to close as ``close`` says. Returns what to send before the close
        frame (the error that explains it comes first), or None when a close was
        decided already: the first one stands, and nothing more is sent."""
        if self.closing is not None:
            return None
        self.closing = close
        self.stage = Stage.CLOSING
        return [close.reply] if close.reply is not None else []
