"""What a session answers a frame with, besides a request to handle: a close (with the
error that explains it), a refusal, an invalid frame's reply, a throttled request's;
and the ``error`` reply they carry (protocol/PROTOCOL.md, sections 5 and 12)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from protocol import limits as L
from protocol.errors import ERRORS, CloseCode, ErrorCode
from protocol.messages import ClientMessage, ErrorReply, Hello


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
