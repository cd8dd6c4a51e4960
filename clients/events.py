"""The client's own events, handed to listeners beside the server's table events.

A listener of :meth:`clients.session.Session.listen` receives :data:`ClientEvent`: every
table event (already applied to its table's model) and these records, which say what
happened to the session itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from clients.model import Verification
from protocol.messages import ErrorReply, JackpotChange, TableEvent
from protocol.structs import Welcome


@dataclass(frozen=True, slots=True)
class Connected:
    """A connection is open and its ``hello`` accepted (``welcome.resumed`` on a resume)."""

    welcome: Welcome


@dataclass(frozen=True, slots=True)
class Disconnected:
    """The connection is gone; ``retrying`` says whether the client reconnects by itself."""

    code: int | None
    reason: str
    retrying: bool
    delay_s: float = 0.0


def ended_reason(event: Disconnected) -> str:
    """Why a connection ended for good, in a few words (``disconnected (4005): ...``)."""
    code = f" ({event.code})" if event.code is not None else ""
    return f"disconnected{code}: {event.reason}"


@dataclass(frozen=True, slots=True)
class Verified:
    """A round's seed was revealed and checked against its commitment and deal."""

    verification: Verification


@dataclass(frozen=True, slots=True)
class Notice:
    """An ``error`` that answers no request of ours (e.g. ``rate_limited`` with rid nil)."""

    error: ErrorReply


ClientEvent = TableEvent | Connected | Disconnected | Verified | Notice | JackpotChange
