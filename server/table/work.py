"""The working set of one step of the table: the state so far and what it produced.

Every handler of :mod:`server.table.machine` receives a :class:`Work` and changes
the table only through it: :meth:`Work.set` and :meth:`Work.set_seat` build the new
state, :meth:`Work.emit` numbers a table event, :meth:`Work.move` lists a ledger
entry. The machine turns what is left in it into a
:class:`~server.table.machine.Transition`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from protocol.errors import ErrorCode
from protocol.structs import HandChoice, RoundRecord
from server.table import views
from server.table.errors import TableError
from server.table.ledger import Kind, LedgerEntry, Pot
from server.table.state import Seat, TableState, evolve
from server.table.views import Message, Outbound

GameLog = tuple[str, RoundRecord]


class Work:
    """The state so far in one step, and the events, ledger entries, game logs and
    reply it produced.

    ``seed`` is the seed of the round this step may open (the event's, for an event
    that carries one), None for an event that opens no round.
    """

    def __init__(self, state: TableState, now: int, seed: bytes | None = None) -> None:
        self.state = state
        self.now = now
        self.seed = seed
        self.version = state.version + 1  # the version this step writes
        # The last event's seq: written into the state once, at the end of the step
        # (state.seq lags behind it meanwhile: read this one).
        self.seq = state.seq
        self.events: list[Outbound] = []
        self.entries: list[LedgerEntry] = []
        self.logs: list[GameLog] = []
        self.reply: HandChoice | None = None

    def set(self, **changes: Any) -> None:
        """Change fields of the state."""
        self.state = evolve(self.state, **changes)

    def set_seat(self, index: int, seat: Seat | None) -> None:
        """Put ``seat`` (None: nobody) in seat ``index``."""
        seats = list(self.state.seats)
        seats[index] = seat
        self.state = evolve(self.state, seats=tuple(seats))

    def emit(self, public: Message, private: dict[str, Message] | None = None) -> None:
        """Send one table event: ``public`` to everyone but the keys of ``private``."""
        seq = self.seq = self.seq + 1
        numbered = {p: views.with_seq(m, seq) for p, m in (private or {}).items()}
        self.events.append(Outbound(seq, views.with_seq(public, seq), numbered))

    def move(self, key: str, kind: Kind, player: str, amount: int, source: Pot, dest: Pot) -> None:
        """List a movement of chips (none when ``amount`` is 0)."""
        if amount > 0:
            self.entries.append(LedgerEntry(key, kind, player, amount, source, dest))


Handler = Callable[[Work, Any], None]
"""What a row of the event table runs: the working set and the event."""


def seat_index(work: Work, player: str) -> tuple[int, Seat]:
    """``player``'s seat and its index; refused if they have none."""
    index = work.state.seat_of(player)
    if index is None:
        raise TableError(ErrorCode.NOT_SEATED, "you have no seat at this table")
    seat = work.state.seats[index]
    assert seat is not None
    return index, seat


def seat_at(work: Work, index: int) -> Seat:
    """The seat at ``index``, which is occupied."""
    seat = work.state.seats[index]
    assert seat is not None
    return seat


def ledger_key(work: Work, who: str, label: str) -> str:
    """A ledger key unique to this step (table, version, who, what)."""
    return f"{work.state.config.table_id}:v{work.version}:{who}:{label}"


def round_key(work: Work, seat: int, label: str) -> str:
    """A ledger key unique to the round's settlement of one seat: settled once, ever."""
    return f"{work.state.config.table_id}:r{work.state.round_no}:s{seat}:{label}"
