"""The errors the client raises, and the plain sentence a person reads for a refusal.

Every error is a :class:`ClientError`. Its type says what went wrong: the server
refused (:class:`ServerError`, with the protocol's error code), the connection is gone
or could not be opened (:class:`ConnectionLost`), or the session is over
(:class:`SessionEnded`). Callers choose by type, never by the message's words.
"""

from __future__ import annotations

from typing import Final

from protocol.errors import CLOSES, CloseCode, Reconnect
from protocol.messages import ErrorReply

# The words for a refusal whose reply carries no message of its own. The server's
# message is already a sentence for a person, often with what to do ("a bet of 40 is
# above your table balance of 30: lower the bet or rebuy"): put beside it, these said
# the same thing twice ("you need a seat at this table (you have no seat at this table)").
_PLAIN: Final = {
    "insufficient_balance": "not enough chips: lower the bet or rebuy",
    "bet_limits": "outside the table's limits",
    "commission_not_whole": "its commission would not be whole: bet in the table's steps",
    "wrong_phase": "not now: wait for the right phase",
    "foul": "that split fouls: the high hand must outrank the low hand; set again",
    "not_seated": "you need a seat at this table",
    "no_bet": "you have no bet in this round",
    "already_set": "your hand is already set",
    "seat_taken": "that seat is taken",
    "table_full": "the table is full",
    "rate_limited": "too many messages: slow down",
}


class ClientError(Exception):
    """Base of the errors the client core raises."""


class ServerError(ClientError):
    """The server answered a request with ``error``; ``str()`` is a plain sentence."""

    def __init__(self, reply: ErrorReply) -> None:
        self.reply = reply
        self.code = reply.code
        self.retryable = reply.retryable
        super().__init__(plain_error(reply))


class ConnectionLost(ClientError):
    """The request could not complete: the connection is gone (it may come back), or
    could not be opened at all."""


class TryLater(ConnectionLost):
    """The server turned the connection away for now (close 1013: full, too many
    connections from this address, too many new guests): try again with backoff.
    ``after_s``: when the server said to (None: the backoff decides)."""

    def __init__(self, reason: str, after_s: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.after_s = after_s


class SessionEnded(ClientError):
    """The connection was closed for good (refused, replaced, or closed by us)."""


def plain_error(reply: ErrorReply) -> str:
    """One sentence for a person, said once: the server's message; when it has none,
    the client's words for the code (else the code itself)."""
    message = reply.message.strip()
    return message or _PLAIN.get(reply.code, reply.code)


def close_policy(code: int | None, reason: str | None) -> tuple[str, Reconnect]:
    """Why a connection closed with ``code`` and the server's ``reason``, in words, and
    whether to reconnect (protocol/PROTOCOL.md, section 11). No close frame (a network
    fault) or a code not in the table: retried with backoff."""
    if code is None:
        return "connection lost", Reconnect.BACKOFF
    try:
        info = CLOSES[CloseCode(code)]
    except ValueError:
        return reason or f"closed with code {code}", Reconnect.BACKOFF
    return reason or info.meaning, info.reconnect
