"""What a client knows of one table, kept up to date by applying table events.

:class:`TableModel` is pure (no I/O, no clock): :meth:`TableModel.apply` takes one
decoded table event and says whether it was applied, was a duplicate, or revealed
a gap in ``seq`` (the client then watches the table again and the ``snapshot`` that
follows replaces everything: protocol/PROTOCOL.md, section 3). When a round's ``seed``
arrives, the model checks the deal against it (:func:`check_deal`) and keeps the
outcome in :attr:`TableModel.verification`.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from protocol import fairness
from protocol.messages import (
    BetPlaced,
    Cards,
    Commitment,
    HandSet,
    Hidden,
    PhaseChange,
    Results,
    Reveal,
    RoundVoid,
    SeatChange,
    SeedReveal,
    Snapshot,
    TableEvent,
)
from protocol.structs import HandView, Phase, RoundRecord, SeatResult, SeatView

DEALER = fairness.DEALER_HAND


class Applied(enum.Enum):
    """What :meth:`TableModel.apply` did with an event."""

    APPLIED = "applied"
    DUPLICATE = "duplicate"  # seq already seen: ignored
    GAP = "gap"  # seq skipped (or no snapshot yet): ignored, a resync is needed


@dataclass(frozen=True, slots=True)
class Verification:
    """The fairness check of one round: the seed against its commitment and the deal."""

    table_id: str
    round: int
    ok: bool
    detail: str
    hands_checked: int = 0


def check_deal(
    seed_hex: str,
    commitment: str,
    *,
    dealt: Mapping[int, Sequence[int]] | None = None,
    split: Mapping[int, Collection[int]] | None = None,
) -> tuple[bool, str, int]:
    """Check a revealed seed: (ok, plain explanation, number of hands compared).

    ``commitment`` must be SHA-256 of the seed (protocol/PROTOCOL.md, section 13). ``dealt``
    maps a hand index (seats 0..5, dealer 6) to seven cards in deal order (a
    ``cards`` event, a history record); ``split`` maps a hand index to the seven
    cards of a set hand, order free (a ``reveal``'s high and low halves).
    """
    try:
        seed = bytes.fromhex(seed_hex)
        expected = fairness.commitment(seed)
    except (ValueError, fairness.SeedError):
        return False, "the seed is not 32 bytes of hex", 0
    if expected != commitment.lower():
        return False, "the seed does not match the published commitment", 0
    deal = fairness.deal(seed)
    checked = 0
    for index, cards in (dealt or {}).items():
        if tuple(deal[index]) != tuple(cards):
            who = "dealer" if index == DEALER else f"seat {index}"
            return False, f"the seed does not deal the {who}'s cards in that order", checked
        checked += 1
    for index, hand in (split or {}).items():
        if set(deal[index]) != set(hand) or len(hand) != fairness.HAND_SIZE:
            who = "dealer" if index == DEALER else f"seat {index}"
            return False, f"the seed does not deal the {who}'s revealed hand", checked
        checked += 1
    return True, f"commitment matches the seed; {checked} hand(s) re-dealt exactly", checked


def verify_record(record: RoundRecord) -> Verification:
    """Verify a history record: commitment, the player's seven cards, both splits."""
    if record.seed is None:
        return Verification(record.table_id, record.round, False, "no seed (round voided early)")
    dealt = {record.seat: record.cards} if record.cards else {}
    split: dict[int, tuple[int, ...]] = {}
    if record.hand is not None:
        split[record.seat] = record.hand.high + record.hand.low
    if record.dealer is not None:
        split[DEALER] = record.dealer.high + record.dealer.low
    ok, detail, checked = check_deal(record.seed, record.commitment, dealt=dealt, split=split)
    return Verification(record.table_id, record.round, ok, detail, checked)


def _empty_seat(index: int) -> SeatView:
    return SeatView(seat=index, status="empty", balance=0, bet=0, bonus=0, hand_set=False)


@dataclass
class TableModel:
    """One table as this client sees it. ``seq`` is -1 until the first snapshot."""

    table_id: str
    player_id: str | None = None
    seq: int = -1
    round: int = 0
    phase: Phase = "idle"
    deadline_ms: int | None = None
    seats: list[SeatView] = field(default_factory=list)
    your_seat: int | None = None
    commitment: str | None = None
    shuffle: int = 1
    your_cards: tuple[int, ...] = ()
    your_low: tuple[int, ...] = ()
    house_way: dict[int, bool] = field(default_factory=dict)  # seat -> set by the house way
    hands: dict[int, HandView] = field(default_factory=dict)
    results: dict[int, SeatResult] = field(default_factory=dict)
    seed: str | None = None
    void: RoundVoid | None = None
    verification: Verification | None = None
    resyncing: bool = False
    version: int = 0  # grows with every applied event: a cheap "has it changed?"

    @property
    def synced(self) -> bool:
        """Whether a snapshot has been applied (events are only applied after one)."""
        return self.seq >= 0

    @property
    def my_seat(self) -> SeatView | None:
        """The recipient's seat, when seated."""
        if self.your_seat is None or self.your_seat >= len(self.seats):
            return None
        return self.seats[self.your_seat]

    @property
    def my_result(self) -> SeatResult | None:
        """This round's result for the recipient's seat, once settled."""
        return None if self.your_seat is None else self.results.get(self.your_seat)

    def apply(self, event: TableEvent) -> Applied:
        """Apply one event of this table; see :class:`Applied` for the outcomes."""
        if isinstance(event, Snapshot):
            self._snapshot(event)
        elif not self.synced or self.resyncing:
            return Applied.GAP
        elif event.seq <= self.seq:
            return Applied.DUPLICATE
        elif event.seq != self.seq + 1:
            self.resyncing = True
            return Applied.GAP
        else:
            self._event(event)
            self.seq = event.seq
        self.version += 1
        return Applied.APPLIED

    def count_unknown(self, seq: int) -> Applied:
        """Count the ``seq`` of an event of a type this client does not know
        (protocol/PROTOCOL.md, section 14)."""
        if not self.synced or self.resyncing:
            return Applied.GAP
        if seq <= self.seq:
            return Applied.DUPLICATE
        if seq != self.seq + 1:
            self.resyncing = True
            return Applied.GAP
        self.seq = seq
        self.version += 1
        return Applied.APPLIED

    # --- applying -----------------------------------------------------------------

    def _snapshot(self, s: Snapshot) -> None:
        self.seq = s.seq
        self.resyncing = False
        self.round = s.round
        self.phase = s.phase
        self.deadline_ms = s.deadline_ms
        self.seats = [_empty_seat(i) for i in range(len(s.seats))]
        for seat in s.seats:
            if seat.seat < len(self.seats):
                self.seats[seat.seat] = seat
        self.your_seat = s.your_seat
        if s.commitment != self.commitment:
            self.seed = None
            self.verification = None
        self.commitment = s.commitment
        self.your_cards = s.your_cards
        self.your_low = s.your_low
        self.hands = {h.hand: h for h in s.hands}
        self.house_way = {h.hand: h.house_way for h in s.hands if h.hand != DEALER}
        self.results = {r.seat: r for r in s.results}
        self.void = None

    def _new_round(self, round_no: int) -> None:
        self.round = round_no
        self.commitment = None
        self.your_cards = ()
        self.your_low = ()
        self.house_way = {}
        self.hands = {}
        self.results = {}
        self.seed = None
        self.void = None
        self.verification = None
        self.seats = [replace(s, bet=0, bonus=0, wagers=(), hand_set=False) for s in self.seats]
        for index in range(len(self.seats)):  # sitting out lasts until the next betting phase
            self._back_in(index)

    def _back_in(self, index: int) -> None:
        """A seat sitting out plays again (its status comes with no event of its own)."""
        if 0 <= index < len(self.seats) and self.seats[index].status == "sitting_out":
            self._set_seat(index, status="playing")

    def _set_seat(self, index: int, **changes: object) -> None:
        if 0 <= index < len(self.seats):
            self.seats[index] = replace(self.seats[index], **changes)  # type: ignore[arg-type]

    def _event(self, e: TableEvent) -> None:
        if isinstance(e, PhaseChange):
            # A betting phase with a new round number opens a fresh round. The same
            # number again is a round an idle table reuses: its commitment and any
            # bet already placed in idle (bet_placed may precede this event) stay.
            if e.phase == "betting" and e.round != self.round:
                self._new_round(e.round)
            elif e.phase == "betting":
                self.void = None
            self.round, self.phase, self.deadline_ms = e.round, e.phase, e.deadline_ms
        elif isinstance(e, SeatChange):
            self._seat(e.seat)
        elif isinstance(e, BetPlaced):
            self._set_seat(e.seat, bet=e.amount, bonus=e.bonus, balance=e.balance, wagers=e.wagers)
            if e.amount:
                # Betting again cancels sitting out (protocol/PROTOCOL.md, section 6): no seat
                # event says so, the bet does.
                self._back_in(e.seat)
        elif isinstance(e, Cards):
            self.your_seat = e.seat if self.your_seat is None else self.your_seat
            self.your_cards = e.cards
            self.your_low = ()
        elif isinstance(e, Commitment):
            self.round, self.commitment, self.shuffle = e.round, e.commitment, e.shuffle
        elif isinstance(e, HandSet):
            self._set_seat(e.seat, hand_set=True)
            self.house_way[e.seat] = e.house_way
        elif isinstance(e, Reveal):
            self.hands = {h.hand: h for h in e.hands}
            mine = self.hands.get(self.your_seat) if self.your_seat is not None else None
            if mine is not None:
                self.your_low = mine.low
        elif isinstance(e, Results):
            self.results = {r.seat: r for r in e.results}
            for r in e.results:
                self._set_seat(r.seat, balance=r.balance)
        elif isinstance(e, SeedReveal):
            self.seed = e.seed
            self.verification = self._verify(e)
        elif isinstance(e, RoundVoid):
            self.void = e
            for refund in e.refunds:
                self._set_seat(refund.seat, balance=refund.balance, bet=0, bonus=0, wagers=())
        elif isinstance(e, Hidden):
            pass

    def _seat(self, seat: SeatView) -> None:
        while len(self.seats) <= seat.seat:
            self.seats.append(_empty_seat(len(self.seats)))
        self.seats[seat.seat] = seat
        if self.player_id is not None and seat.player_id == self.player_id:
            self.your_seat = seat.seat
        elif self.your_seat == seat.seat:
            self.your_seat = None  # our seat was freed (left, or the grace ran out)

    def _verify(self, e: SeedReveal) -> Verification:
        published = self.commitment or e.commitment
        if self.commitment is not None and e.commitment != self.commitment:
            detail = "the seed event's commitment differs from the one published at betting"
            return Verification(self.table_id, e.round, False, detail)
        dealt: dict[int, tuple[int, ...]] = {}
        if self.your_cards and self.your_seat is not None:
            dealt[self.your_seat] = self.your_cards
        split = {h.hand: h.high + h.low for h in self.hands.values()}
        ok, detail, checked = check_deal(e.seed, published, dealt=dealt, split=split)
        return Verification(self.table_id, e.round, ok, detail, checked)
