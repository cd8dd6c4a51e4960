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
- who the connection speaks for: the player of a login token, the session a resume
  token names (if still stored), else a new guest where guests are allowed;
- a token bucket limits the message rate; far over it, the connection is closed;
- ten invalid frames in a row close it;
- so do two heartbeats without a frame, the time a request is being handled not
  counting (the client's next frames wait unread meanwhile);
- the error that explains a close is sent before the close frame, and once closing
  the session takes no more requests.
"""

from __future__ import annotations

import enum
import math
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
from server.gateway.options import GatewayOptions

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
    resume token names and the player a login token names (None: no such token)."""

    resume: str | None
    player: str | None


class StoredSession(Protocol):
    """A session as stored (``server.store.sessions.Session``)."""

    @property
    def session_id(self) -> str: ...
    @property
    def player(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def guest(self) -> bool: ...


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


# --- the rate -----------------------------------------------------------------------


class RateLimiter:
    """A token bucket: ``rate`` messages a second, bursts up to ``burst``.

    :attr:`flooding` tells a client far over the rate: more than ``close_factor``
    times the rate within one second (protocol/PROTOCOL.md, section 12: close 4008).
    """

    def __init__(
        self, rate: float, burst: float, now: float, close_factor: float = L.RATE_CLOSE_FACTOR
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = now
        self.window = now  # start of the current one-second window
        self.seen = 0  # messages in the window
        self.close_at = close_factor * rate

    def take(self, now: float) -> bool:
        """Count a message arrived at ``now``; whether it is within the rate."""
        if now - self.window >= 1:
            self.window, self.seen = now, 0
        self.seen += 1
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    @property
    def flooding(self) -> bool:
        """Whether the client sent far more than the rate in the current second."""
        return self.seen > self.close_at

    def wait_ms(self) -> int:
        """Milliseconds until the next message is allowed."""
        return max(1, math.ceil((1 - self.tokens) / self.rate * 1000))


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

    def credentials(self, hello: Hello, wall_s: int) -> Credentials | Close:
        """Check the hello's tokens at ``wall_s`` (epoch seconds): a token that is bad
        or expired closes (4001); the shell then looks up the session a resume token
        names (:meth:`identify` decides the rest)."""
        resume = player = None
        if hello.resume_token is not None:
            try:
                resume = tokens.verify(self.options.resume_secret, hello.resume_token, wall_s)
            except tokens.TokenError as exc:
                reply = error_reply(
                    ErrorCode.UNAUTHORIZED, f"resume token refused: {exc}", hello.rid
                )
                return Close(CloseCode.UNAUTHORIZED, "resume refused", reply)
        if hello.token is not None:
            try:
                player = tokens.verify(self.options.secret, hello.token, wall_s)
            except tokens.TokenError as exc:
                reply = error_reply(ErrorCode.UNAUTHORIZED, f"token refused: {exc}", hello.rid)
                return Close(CloseCode.UNAUTHORIZED, "token refused", reply)
        return Credentials(resume, player)

    def identify(
        self,
        hello: Hello,
        credentials: Credentials,
        stored: StoredSession | None,
        guest_id: str,
    ) -> Identity | Close:
        """Who the connection speaks for, given the session stored under
        ``credentials.resume`` (None: none named, or gone) and the id a new guest
        would get.

        A login token names the player; a resumed session of another player is not
        theirs and a fresh one starts. Without a token, a stored session is resumed as
        it was, and else a new guest comes in where guests are allowed (4001 if not).
        """
        session = stored
        if credentials.player is not None:
            if session is not None and session.player != credentials.player:
                session = None  # a session of someone else: start a fresh one
            player, guest = credentials.player, False
            name = hello.name or (session.name if session is not None else player)
        elif session is not None:
            player, guest, name = session.player, session.guest, hello.name or session.name
        elif not self.options.guests:
            reply = error_reply(ErrorCode.UNAUTHORIZED, "guests are not allowed here", hello.rid)
            return Close(CloseCode.UNAUTHORIZED, "no guests", reply)
        else:
            player, guest, name = guest_id, True, hello.name or "Guest"
        if session is not None:
            self.session_id = session.session_id
        self.player, self.name, self.guest = player, name, guest
        return Identity(
            session_id=self.session_id,
            player=player,
            name=name,
            guest=guest,
            resumed=session is not None,
            new_guest=guest and session is None,
        )

    def welcome(self, greeting: Greeting, identity: Identity, wall_ms: int) -> OkReply:
        """The hello's ``ok`` (a ``welcome``, with a fresh resume token); from now on
        the session takes requests."""
        self.stage = Stage.OPEN
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
        silent for two heartbeats (4004). While a request is handled the wait starts
        again: the client did speak, and its next frames wait unread."""
        due = now + self.silence_s if self.busy else self.heard_at + self.silence_s
        return SILENCE if now >= due else due

    def close(self, close: Close) -> list[ErrorReply] | None:
        """Decide to close as ``close`` says. Returns what to send before the close
        frame (the error that explains it comes first), or None when a close was
        decided already: the first one stands, and nothing more is sent."""
        if self.closing is not None:
            return None
        self.closing = close
        self.stage = Stage.CLOSING
        return [close.reply] if close.reply is not None else []
