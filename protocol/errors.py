"""Error codes, WebSocket close codes and the exceptions of the protocol package.

:mod:`protocol.errors` defines the following hierarchy of exceptions. Every failure
of :func:`protocol.decode` (whatever the input) and of :func:`protocol.encode` is an
instance of :exc:`ProtocolError`; its ``code`` attribute is an :class:`ErrorCode`
from the error-code table of ``PROTOCOL.md``.

* :exc:`ProtocolError` (``code``, ``path``, ``rid``, ``msg_type``)
    * :exc:`DecodeError`
        * :exc:`MalformedFrame` (``malformed``): not exactly one msgpack map: invalid
          msgpack, truncated, trailing bytes, invalid UTF-8, a non-string map key, a
          binary or ext value, a text frame, a top-level value that is not a map
        * :exc:`LimitExceeded` (``too_large``)
            * :exc:`FrameTooLarge`: the frame, or a string, binary, array or map in
              it, is larger than the limits of :mod:`protocol.limits`
            * :exc:`NestingTooDeep`: containers nested deeper than ``MAX_DEPTH``
        * :exc:`UnknownMessageType` (``unknown_type``): ``type`` names no message
          this side may receive
        * :exc:`InvalidMessage` (``bad_message``): a map that breaks its schema
            * :exc:`MissingField`: a required key is absent
            * :exc:`WrongType`: a value of the wrong msgpack type (``true`` is not
              an integer, ``1.0`` is not an integer, ``nil`` only where allowed)
            * :exc:`OutOfRange`: a number, length, enumeration value or pattern
              outside what the field allows
            * :exc:`InvalidValue`: fields that are each valid but not together
              (a card named twice, a bonus without a main bet, ...)
    * :exc:`EncodeError` (``internal``): a message object that cannot be encoded
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ErrorCode(enum.StrEnum):
    """The stable error codes sent in ``error`` replies (see ``ERRORS`` for meanings)."""

    MALFORMED = "malformed"
    TOO_LARGE = "too_large"
    BAD_MESSAGE = "bad_message"
    UNKNOWN_TYPE = "unknown_type"
    HELLO_REQUIRED = "hello_required"
    VERSION_UNSUPPORTED = "version_unsupported"
    UNAUTHORIZED = "unauthorized"
    RATE_LIMITED = "rate_limited"
    GUESTS_LIMITED = "guests_limited"
    NO_SUCH_TABLE = "no_such_table"
    WRONG_PHASE = "wrong_phase"
    NOT_SEATED = "not_seated"
    ALREADY_SEATED = "already_seated"
    SEAT_TAKEN = "seat_taken"
    TABLE_FULL = "table_full"
    TABLE_CLOSING = "table_closing"
    INSUFFICIENT_BALANCE = "insufficient_balance"
    BET_LIMITS = "bet_limits"
    NO_BET = "no_bet"
    BAD_HAND = "bad_hand"
    FOUL = "foul"
    ALREADY_SET = "already_set"
    BAD_CURSOR = "bad_cursor"
    RID_REUSED = "rid_reused"
    UNAVAILABLE = "unavailable"
    INTERNAL = "internal"
    # The operator's wallet (a server in wallet mode).
    WALLET_UNAVAILABLE = "wallet_unavailable"
    # A table whose commission is taken in whole chips (minor 4).
    COMMISSION_NOT_WHOLE = "commission_not_whole"


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """One row of the error-code table.

    ``retryable`` means: the same request, sent again unchanged later, can succeed.
    """

    meaning: str
    retryable: bool


ERRORS: dict[ErrorCode, ErrorInfo] = {
    ErrorCode.MALFORMED: ErrorInfo(
        "the frame is not exactly one valid msgpack map (bad msgpack, truncated, "
        "trailing bytes, invalid UTF-8, ext type, not a map)",
        retryable=False,
    ),
    ErrorCode.TOO_LARGE: ErrorInfo(
        "the frame or a string/array/map in it is over a limit, or nested too deep",
        retryable=False,
    ),
    ErrorCode.BAD_MESSAGE: ErrorInfo(
        "a known message breaks its schema: missing field, wrong type, out of range, "
        "inconsistent fields; the error's message names the field",
        retryable=False,
    ),
    ErrorCode.UNKNOWN_TYPE: ErrorInfo(
        "the `type` names no message this side accepts; the connection stays open",
        retryable=False,
    ),
    ErrorCode.HELLO_REQUIRED: ErrorInfo(
        "the first message must be `hello`, and `hello` may be sent only once",
        retryable=False,
    ),
    ErrorCode.VERSION_UNSUPPORTED: ErrorInfo(
        "no protocol version in the client's range is spoken by the server",
        retryable=False,
    ),
    ErrorCode.UNAUTHORIZED: ErrorInfo(
        "the token is invalid or expired, guests are not allowed, the resume token is "
        "unknown, or the session ended (its credential expired, or an operator ended it)",
        retryable=False,
    ),
    ErrorCode.RATE_LIMITED: ErrorInfo(
        "too many messages; wait `retry_after_ms` before sending again",
        retryable=True,
    ),
    ErrorCode.GUESTS_LIMITED: ErrorInfo(
        "no new guest now: too many were created in the last minute, from this address "
        "or in total; wait `retry_after_ms`, or sign in with a token",
        retryable=True,
    ),
    ErrorCode.NO_SUCH_TABLE: ErrorInfo("no table has this id", retryable=False),
    ErrorCode.WRONG_PHASE: ErrorInfo(
        "the request is not allowed in the table's current phase (or, for money "
        "moves, while you have a bet in a round)",
        retryable=True,
    ),
    ErrorCode.NOT_SEATED: ErrorInfo(
        "the request needs a seat at this table and you have none", retryable=False
    ),
    ErrorCode.ALREADY_SEATED: ErrorInfo("you already have a seat at this table", retryable=False),
    ErrorCode.SEAT_TAKEN: ErrorInfo("the seat asked for is occupied", retryable=False),
    ErrorCode.TABLE_FULL: ErrorInfo("every seat of the table is occupied", retryable=True),
    ErrorCode.TABLE_CLOSING: ErrorInfo(
        "the table is closing: no new seat, rebuy or bet; its seats stand up once the "
        "round in play ends",
        retryable=False,
    ),
    ErrorCode.INSUFFICIENT_BALANCE: ErrorInfo(
        "not enough chips: lower the bet, or rebuy (table balance), or lower the "
        "buy-in (account balance)",
        retryable=False,
    ),
    ErrorCode.BET_LIMITS: ErrorInfo(
        "bet, bonus, buy-in or rebuy outside the table's minimum/maximum, or not a "
        "multiple of the table's bet unit",
        retryable=False,
    ),
    ErrorCode.NO_BET: ErrorInfo(
        "the request needs a bet in this round (set hand, house way, bonus), or a "
        "previous bet (rebet)",
        retryable=False,
    ),
    ErrorCode.BAD_HAND: ErrorInfo(
        "the cards named for the low hand are not two of your seven cards", retryable=False
    ),
    ErrorCode.FOUL: ErrorInfo(
        "the split fouls (the high hand does not outrank the low hand); set again",
        retryable=False,
    ),
    ErrorCode.ALREADY_SET: ErrorInfo(
        "your hand for this round is already set; a set hand is final", retryable=False
    ),
    ErrorCode.BAD_CURSOR: ErrorInfo("the history cursor is unknown or expired", retryable=False),
    ErrorCode.RID_REUSED: ErrorInfo(
        "the rid of this money request was used within 24 hours for a different "
        "request of yours; a new request needs a new rid",
        retryable=False,
    ),
    ErrorCode.UNAVAILABLE: ErrorInfo(
        "the table or service is briefly unavailable (e.g. moving to another server)",
        retryable=True,
    ),
    ErrorCode.INTERNAL: ErrorInfo(
        "a server fault; the request had no effect unless an event says otherwise",
        retryable=True,
    ),
    ErrorCode.WALLET_UNAVAILABLE: ErrorInfo(
        "the operator's wallet did not answer the buy-in's debit in time, or could not "
        "take it now; no chip moved, and your wallet is left as it was (a debit it took "
        "late is given back); try again",
        retryable=True,
    ),
    ErrorCode.COMMISSION_NOT_WHOLE: ErrorInfo(
        "at this table the commission is taken in whole chips, so a main bet is a "
        "multiple of the table's main_bet_unit; bet a multiple of it",
        retryable=False,
    ),
}


class Reconnect(enum.StrEnum):
    """What a client does after the server closes the WebSocket with a given code."""

    NEVER = "never"  # a retry would fail the same way; tell the user
    NOW = "now"  # reconnect at once and resume the session
    BACKOFF = "backoff"  # reconnect with exponential backoff and jitter, then resume
    NEW_CREDENTIALS = "new_credentials"  # only after obtaining a new token


class CloseCode(enum.IntEnum):
    """WebSocket close codes the server uses (``CLOSES`` says whether to reconnect)."""

    NORMAL = 1000
    GOING_AWAY = 1001
    PROTOCOL_ERROR = 1002
    UNSUPPORTED_DATA = 1003
    POLICY_VIOLATION = 1008
    MESSAGE_TOO_BIG = 1009
    INTERNAL_ERROR = 1011
    SERVICE_RESTART = 1012
    TRY_AGAIN_LATER = 1013
    HELLO_REQUIRED = 4000
    UNAUTHORIZED = 4001
    VERSION_UNSUPPORTED = 4002
    HANDSHAKE_TIMEOUT = 4003
    HEARTBEAT_TIMEOUT = 4004
    SESSION_REPLACED = 4005
    TOO_MANY_ERRORS = 4006
    RATE_LIMITED = 4008


@dataclass(frozen=True, slots=True)
class CloseInfo:
    """One row of the close-code table."""

    meaning: str
    reconnect: Reconnect


CLOSES: dict[CloseCode, CloseInfo] = {
    CloseCode.NORMAL: CloseInfo("the session ended as asked", Reconnect.NEVER),
    CloseCode.GOING_AWAY: CloseInfo("the server process is shutting down", Reconnect.NOW),
    CloseCode.PROTOCOL_ERROR: CloseInfo("a WebSocket-level protocol error", Reconnect.BACKOFF),
    CloseCode.UNSUPPORTED_DATA: CloseInfo(
        "a text frame was received; only binary frames are allowed", Reconnect.NEVER
    ),
    CloseCode.POLICY_VIOLATION: CloseInfo(
        "the client broke the protocol in a way that ends the session", Reconnect.NEVER
    ),
    CloseCode.MESSAGE_TOO_BIG: CloseInfo(
        "a frame was larger than the frame limit", Reconnect.NEVER
    ),
    CloseCode.INTERNAL_ERROR: CloseInfo("a server fault", Reconnect.BACKOFF),
    CloseCode.SERVICE_RESTART: CloseInfo("the service is restarting", Reconnect.NOW),
    CloseCode.TRY_AGAIN_LATER: CloseInfo("the server is overloaded", Reconnect.BACKOFF),
    CloseCode.HELLO_REQUIRED: CloseInfo(
        "the first message was not a valid `hello`", Reconnect.NEVER
    ),
    CloseCode.UNAUTHORIZED: CloseInfo("credentials refused or expired", Reconnect.NEW_CREDENTIALS),
    CloseCode.VERSION_UNSUPPORTED: CloseInfo(
        "no common protocol version; upgrade the client", Reconnect.NEVER
    ),
    CloseCode.HANDSHAKE_TIMEOUT: CloseInfo(
        "no `hello` within the handshake timeout", Reconnect.BACKOFF
    ),
    CloseCode.HEARTBEAT_TIMEOUT: CloseInfo(
        "nothing received for two heartbeat intervals", Reconnect.NOW
    ),
    CloseCode.SESSION_REPLACED: CloseInfo(
        "another connection resumed this session", Reconnect.NEVER
    ),
    CloseCode.TOO_MANY_ERRORS: CloseInfo("too many invalid messages in a row", Reconnect.NEVER),
    CloseCode.RATE_LIMITED: CloseInfo(
        "far over the message rate after `rate_limited` errors", Reconnect.BACKOFF
    ),
}


class ProtocolError(Exception):
    """Base of every error the protocol package raises.

    ``code`` is the wire error code; ``path`` names the offending field
    (``seats[2].bet``), empty for the frame as a whole; ``rid`` and ``msg_type`` are
    the request id and message type when they could be read, so a server can still
    address its ``error`` reply.
    """

    code: ErrorCode = ErrorCode.INTERNAL

    def __init__(self, reason: str, path: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path
        self.rid: str | None = None
        self.msg_type: str | None = None

    def prefix(self, outer: str) -> None:
        """Prepend an enclosing field name to ``path`` (used while unwinding nesting)."""
        if not outer:
            return
        if not self.path:
            self.path = outer
        elif self.path.startswith("["):
            self.path = outer + self.path
        else:
            self.path = f"{outer}.{self.path}"

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason


class DecodeError(ProtocolError):
    """Bytes that do not decode to a valid message."""


class MalformedFrame(DecodeError):
    """Not exactly one msgpack map."""

    code = ErrorCode.MALFORMED


class LimitExceeded(DecodeError):
    """A size or nesting limit of :mod:`protocol.limits` is passed."""

    code = ErrorCode.TOO_LARGE


class FrameTooLarge(LimitExceeded):
    """The frame, or a string, binary, array or map inside it, is too large."""


class NestingTooDeep(LimitExceeded):
    """Containers are nested deeper than ``MAX_DEPTH``."""


class UnknownMessageType(DecodeError):
    """The ``type`` names no message this side may receive."""

    code = ErrorCode.UNKNOWN_TYPE


class InvalidMessage(DecodeError):
    """A map that breaks the schema of its message type."""

    code = ErrorCode.BAD_MESSAGE


class MissingField(InvalidMessage):
    """A required key is absent."""


class WrongType(InvalidMessage):
    """A value has the wrong msgpack type."""


class OutOfRange(InvalidMessage):
    """A number, length, enumeration value or pattern outside the field's range."""


class InvalidValue(InvalidMessage):
    """Fields that are valid one by one but not together."""


class EncodeError(ProtocolError):
    """A message object that cannot be encoded (not a message, or an unpackable value)."""

    code = ErrorCode.INTERNAL
