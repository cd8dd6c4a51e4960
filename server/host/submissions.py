"""What a request to a table is, and what becomes of it: the commit path's records
(:mod:`~server.host.applying`).

- :class:`MoneyRequest`: a request that moves chips, applied at most once;
- :class:`Queued`: an event waiting for its turn at a busy table, and its outcome (its
  change, or its own error);
- :class:`TableUnavailable` and :func:`rid_reused`: the errors the path raises itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from protocol.errors import ErrorCode
from server.table.errors import TableError
from server.table.events import Event
from server.table.machine import Transition


class TableUnavailable(TableError):
    """The table is not hosted here right now (starting, or owned by another process)."""

    def __init__(self, table_id: str) -> None:
        super().__init__(ErrorCode.UNAVAILABLE, f"table {table_id} is not available; retry")


class TableNotWritable(TableError):
    """Redis refused the table's writes (its primary has too few replicas in reach:
    :class:`~server.store.errors.WritesRefused`): nothing changed, and the table is
    still hosted here. Not a :class:`TableUnavailable`, which says it is not."""

    def __init__(self, table_id: str) -> None:
        super().__init__(ErrorCode.UNAVAILABLE, f"table {table_id} cannot be written now; retry")


@dataclass(frozen=True, slots=True)
class MoneyRequest:
    """A client's request that moves chips (join, rebuy, cash_out, leave), applied at
    most once per ``(session, rid)`` (protocol/PROTOCOL.md, section 3): a session
    survives a dropped connection (resumed with its token), and a client's request ids
    are its own only within one session (a counter may start again in a new one).

    ``fingerprint`` says what was asked: the same rid with another fingerprint is
    refused (``rid_reused``). ``memo(t)`` is what the reply needs from the change
    ``t`` besides the account balance; it is stored with the request.
    ``answer(memo, account)`` queues the ``ok`` from a memo and the player's account
    balance right after the change: the first time, and for every repeat with the
    stored ones, so that a repeat gets the very reply the first one got.
    """

    player: str
    session: str
    rid: str
    fingerprint: bytes
    memo: Callable[[Transition], bytes]
    answer: Callable[[bytes, int], None]

    @property
    def key(self) -> str:
        """What the request is stored under, for its player."""
        return f"{self.session}:{self.rid}"


@dataclass(slots=True, eq=False)
class Queued:
    """An event waiting for its turn at the table, and what became of it: its
    transition once applied, or the error that refused or failed it."""

    event: Event
    reply: Callable[[Transition], None] | None
    transition: Transition | None = None
    error: Exception | None = None
    answered: bool = False  # its change is stored and its reply went out: it stands


def answer(item: Queued) -> None:
    """Send ``item``'s reply (its change is stored): a reply that fails fails only its
    own request."""
    item.answered = True
    if item.reply is None:
        return
    assert item.transition is not None
    try:
        item.reply(item.transition)
    except Exception as exc:
        item.error = exc


def own_copy(exc: Exception) -> Exception:
    """An error of its own for another request that ``exc`` failed (one exception
    object raised in several tasks would gather all their tracebacks): the table's
    error again, or a server fault (the first request's task reports ``exc`` itself)."""
    if isinstance(exc, TableError):
        return TableError(exc.code, exc.message)
    return TableError(ErrorCode.INTERNAL, "server fault; try again")


def rid_reused(request: MoneyRequest) -> TableError:
    """The error of a rid used before for another request."""
    return TableError(
        ErrorCode.RID_REUSED,
        f"rid {request.rid!r} was used for another request of yours; a new request needs a new rid",
    )
