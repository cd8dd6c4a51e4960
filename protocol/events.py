"""The server's table events: what happens at a table, in ``seq`` order.

Every event carries ``table_id`` and ``seq``, the table's event number, which has no
gaps for any recipient (an event it may not see arrives as ``hidden``).
``PROTOCOL.md`` gives the meaning and sender of each; the constraints are in the
annotations (see :mod:`protocol.schema`). Fields without a default are required on
the wire; fields with one may be absent and then take the default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from protocol import limits as L
from protocol.schema import Int, Len
from protocol.structs import (
    Cards0or2,
    Cards0or7,
    Cards7,
    Chips,
    Code,
    HandView,
    Hex64,
    Phase,
    RoundNo,
    SeatNo,
    SeatRefund,
    SeatResult,
    SeatView,
    Seq,
    TableId,
    Text,
    TimeMs,
    Wagers,
)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The whole table as the recipient may see it, as of event ``seq``."""

    TYPE = "snapshot"
    table_id: TableId
    seq: Seq
    round: RoundNo
    phase: Phase
    server_time_ms: TimeMs
    seats: Annotated[tuple[SeatView, ...], Len(1, L.SEATS_PER_TABLE)]
    deadline_ms: TimeMs | None = None
    commitment: Hex64 | None = None
    your_seat: SeatNo | None = None
    your_cards: Cards0or7 = ()
    your_low: Cards0or2 = ()
    hands: Annotated[tuple[HandView, ...], Len(0, L.HANDS_PER_ROUND)] = ()
    results: Annotated[tuple[SeatResult, ...], Len(0, L.SEATS_PER_TABLE)] = ()


@dataclass(frozen=True, slots=True)
class PhaseChange:
    """The table entered ``phase``; it ends at ``deadline_ms`` (``None``: no deadline)."""

    TYPE = "phase"
    table_id: TableId
    seq: Seq
    round: RoundNo
    phase: Phase
    deadline_ms: TimeMs | None = None


@dataclass(frozen=True, slots=True)
class SeatChange:
    """A seat was taken, freed, or changed status or balance."""

    TYPE = "seat"
    table_id: TableId
    seq: Seq
    seat: SeatView


@dataclass(frozen=True, slots=True)
class BetPlaced:
    """A seat's bet for the round is now ``amount`` (0: removed) and ``bonus``."""

    TYPE = "bet_placed"
    table_id: TableId
    seq: Seq
    round: RoundNo
    seat: SeatNo
    amount: Chips
    bonus: Chips
    balance: Chips
    wagers: Wagers = ()  # minor 6: every side bet held, the bonus bet included


@dataclass(frozen=True, slots=True)
class Cards:
    """Your seven cards (sent only to the seat's player; others get ``hidden``)."""

    TYPE = "cards"
    table_id: TableId
    seq: Seq
    round: RoundNo
    seat: SeatNo
    cards: Cards7


@dataclass(frozen=True, slots=True)
class Hidden:
    """Stands in for an event this recipient may not see, so ``seq`` has no gaps."""

    TYPE = "hidden"
    table_id: TableId
    seq: Seq


@dataclass(frozen=True, slots=True)
class Commitment:
    """The shuffle commitment (SHA-256 of the seed) of the round, at start of betting."""

    TYPE = "commitment"
    table_id: TableId
    seq: Seq
    round: RoundNo
    commitment: Hex64
    shuffle: Annotated[int, Int(1, 65535)] = 1


@dataclass(frozen=True, slots=True)
class HandSet:
    """A seat's hand is set (cards stay hidden until the reveal)."""

    TYPE = "hand_set"
    table_id: TableId
    seq: Seq
    round: RoundNo
    seat: SeatNo
    house_way: bool


@dataclass(frozen=True, slots=True)
class Reveal:
    """Every dealt hand in play, set, with both halves named; the dealer is hand 6."""

    TYPE = "reveal"
    table_id: TableId
    seq: Seq
    round: RoundNo
    hands: Annotated[tuple[HandView, ...], Len(1, L.HANDS_PER_ROUND)]


@dataclass(frozen=True, slots=True)
class Results:
    """The settlement of every seat that played the round."""

    TYPE = "results"
    table_id: TableId
    seq: Seq
    round: RoundNo
    results: Annotated[tuple[SeatResult, ...], Len(0, L.SEATS_PER_TABLE)]


@dataclass(frozen=True, slots=True)
class SeedReveal:
    """The round's shuffle seed, after settlement, so anyone can re-derive the deal."""

    TYPE = "seed"
    table_id: TableId
    seq: Seq
    round: RoundNo
    seed: Hex64
    commitment: Hex64


@dataclass(frozen=True, slots=True)
class RoundVoid:
    """The round could not complete: every bet is returned (``refunds``)."""

    TYPE = "void"
    table_id: TableId
    seq: Seq
    round: RoundNo
    reason: Code
    message: Text
    refunds: Annotated[tuple[SeatRefund, ...], Len(0, L.SEATS_PER_TABLE)]


TableEvent = (
    Snapshot
    | PhaseChange
    | SeatChange
    | BetPlaced
    | Cards
    | Hidden
    | Commitment
    | HandSet
    | Reveal
    | Results
    | SeedReveal
    | RoundVoid
)

TABLE_EVENTS: tuple[type[TableEvent], ...] = (
    Snapshot,
    PhaseChange,
    SeatChange,
    BetPlaced,
    Cards,
    Hidden,
    Commitment,
    HandSet,
    Reveal,
    Results,
    SeedReveal,
    RoundVoid,
)
