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

What a session answers besides a request (a close, a refusal, an invalid frame's or a
throttled request's reply) is in :mod:`server.gateway.answers`; who a hello speaks for,
its tokens checked, in :mod:`server.gateway.identity`.
"""

from __future__ import annotations

import enum
from dataclasses import replace

from protocol import limits as L
from protocol.codec import decode_client
from protocol.errors import CloseCode, ErrorCode, ProtocolError
from protocol.messages import ErrorReply, Hello, OkReply
from protocol.structs import Welcome
from protocol.version import (
    MAX_SUPPORTED_VERSION,
    MIN_SUPPORTED_VERSION,
    PROTOCOL_MINOR,
    negotiate,
)
from server.auth import tokens
from server.auth.operator import OperatorIdentity, OperatorTokenError
from server.gateway import identity as who
from server.gateway.answers import (
    EXPIRED,
    NO_HELLO,
    REVOKED,
    SILENCE,
    TEXT_FRAME,
    Close,
    Invalid,
    Received,
    Refuse,
    Throttle,
    error_reply,
    guests_limited,
)
from server.gateway.identity import Credentials, Greeting, Identity, StoredSession
from server.gateway.options import GatewayOptions
from server.gateway.rate import RateLimiter

# The answers and the identity's types were defined here: their importers still find them.
__all__ = [
    "EXPIRED",
    "GUEST_TOUCH_S",
    "NO_HELLO",
    "RESUME_TTL_S",
    "REVOKED",
    "SILENCE",
    "TEXT_FRAME",
    "Close",
    "Credentials",
    "Greeting",
    "Identity",
    "Invalid",
    "Received",
    "Refuse",
    "Session",
    "Stage",
    "StoredSession",
    "Throttle",
    "error_reply",
    "guests_limited",
]

RESUME_TTL_S = 24 * 3600
"""How long a resume token is good for (the stored session may end sooner)."""
GUEST_TOUCH_S = 300.0
"""How often a connected guest's activity is recorded (idle guests are closed)."""


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
        """The hello's tokens checked at ``wall_s``:
        :func:`server.gateway.identity.check_credentials`."""
        return who.check_credentials(self.options, hello, wall_s, operator)

    def identify(
        self,
        hello: Hello,
        credentials: Credentials,
        stored: StoredSession | None,
        guest_id: str,
        wall_ms: int,
        revoked_ms: int | None = None,
    ) -> Identity | Close:
        """Who the connection speaks for: :func:`server.gateway.identity.identify`; the
        session takes the identity's session id, player, name and guest flag."""
        found = who.identify(
            self.options,
            self.session_id,
            hello,
            credentials,
            stored,
            guest_id,
            wall_ms,
            revoked_ms,
        )
        if isinstance(found, Identity):
            self.session_id = found.session_id
            self.player, self.name, self.guest = found.player, found.name, found.guest
        return found

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
