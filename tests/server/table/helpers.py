"""A small harness around the pure table: accounts, ledger checks and visibility checks."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import msgpack

from protocol.codec import check
from protocol.messages import Cards, Hidden, OkReply, Reveal, SeedReveal, Snapshot
from protocol.structs import HistoryPage, RoundRecord
from server.rules.bonus import BONUS
from server.rules.wagers import options_to_plain
from server.store.tables.parts import (
    CLOSING_PART,
    CONFIG_PART,
    DEAL_PART,
    HEADER_PART,
    PENDING_CONFIG_PART,
    RESULT_FIELDS,
    SEAT_FIELDS,
    _plain,
    from_bytes,
    from_parts,
    seat_part,
    to_parts,
)
from server.table.events import Event, SitDown, Tick
from server.table.ledger import LedgerEntry, Pot
from server.table.machine import DEADLINES, ROWS, Transition, step
from server.table.state import (
    Phase,
    Seat,
    SeatResult,
    TableConfig,
    TableState,
    evolve,
    new_table,
)
from server.table.views import Outbound, snapshot

CONFIG = TableConfig(table_id="t1", name="Test table")


def seed(n: int) -> bytes:
    """A fixed 32-byte seed."""
    return n.to_bytes(32, "big")


def pot_deltas(entries: tuple[LedgerEntry, ...]) -> Counter[tuple[Pot, str]]:
    """How much each (pot, player) gains from ``entries`` (house and held by player too)."""
    deltas: Counter[tuple[Pot, str]] = Counter()
    for e in entries:
        deltas[(e.source, e.player)] -= e.amount
        deltas[(e.dest, e.player)] += e.amount
    return deltas


def table_pots(state: TableState) -> Counter[tuple[Pot, str]]:
    """Chips in the TABLE and HELD pots per player."""
    pots: Counter[tuple[Pot, str]] = Counter()
    for _, s in state.occupied():
        pots[(Pot.TABLE, s.player)] += s.balance
        pots[(Pot.HELD, s.player)] += s.held
    return pots


def legacy_blob(state: TableState) -> bytes:
    """``state`` stored whole, in one value, as the store held states before parts
    (format 1: what the writer of that time gave, a test checked it). That writer
    knew no pending config: it is left out (and the settled options, newer still)."""
    newer = ("pending_config", "closing", "settled_options")
    plain = {k: v for k, v in _plain(state).items() if k not in newer}
    packed: bytes = msgpack.packb([1, plain], use_bin_type=True)
    return packed


def legacy_parts(state: TableState) -> dict[str, bytes]:
    """Every part of ``state`` in format 2, each record a map keyed by field name, as
    the first writer of parts gave them (the walk of the slots it was checked against,
    and the bytes of ``tests/server/store/data/table_parts_v2.txt``)."""
    plain = _plain(state)
    own = ("config", "pending_config", "closing", "settled_options")  # parts, or newer
    header = {k: v for k, v in plain.items() if k not in own}
    header["seats"] = len(state.seats)
    parts = {
        HEADER_PART: msgpack.packb([2, header]),
        CONFIG_PART: msgpack.packb(plain["config"]),
    }
    if state.pending_config is not None:
        parts[PENDING_CONFIG_PART] = msgpack.packb(plain["pending_config"])
    for i, seat in enumerate(state.seats):
        parts[seat_part(i)] = msgpack.packb(_plain(seat))
    return parts


def _fields(record: object) -> list[object]:
    """A record's fields in order, as plain data (a record of format 3): a seat's and a
    result's by their stored names (the bonus bet's stake, class and payout as 0.1.0
    wrote them, read through the records' properties), with the other side bets'
    fields at the end only when there is one; any other record's slots."""
    if isinstance(record, Seat):
        out = [_plain(getattr(record, name)) for name in SEAT_FIELDS[:-2]]
        others = [[k, a] for k, a in record.side if k != BONUS]
        last = [[k, a] for k, a in record.last_side if k != BONUS]
        return [*out, others, last] if others or last else out
    if isinstance(record, SeatResult):
        out = [_plain(getattr(record, name)) for name in RESULT_FIELDS[:-1]]
        wagers = [[w.kind, w.stake, w.pay_class, w.payout] for w in record.wagers]
        wagers = [w for w in wagers if w[0] != BONUS]
        return [*out, wagers] if wagers else out
    return [_plain(getattr(record, name)) for name in type(record).__slots__]  # type: ignore[attr-defined]


def plain_parts(state: TableState) -> dict[str, bytes]:
    """Every part of ``state`` from the generic walk of the slots (what the
    hand-written writers must give): format 3, each record an array of its slots, the
    round's deal and results apart from the header."""

    def walk(name: str) -> object:
        if name == "seats":
            return len(state.seats)
        if name == "results":
            return [_fields(r) for r in state.results]
        return _plain(getattr(state, name))

    deal = ("seed", "commitment", "hands", "dealer_low", "results", "settled_options")
    configs = ("config", "pending_config", "closing")  # parts of their own
    header = [walk(n) for n in TableState.__slots__ if n not in deal and n not in configs]
    # The settled options end the deal's array, and only when there are some.
    deal_fields = [n for n in TableState.__slots__ if n in deal and n != "settled_options"]
    deal_values = [walk(n) for n in deal_fields]
    if state.settled_options:
        deal_values.append([[k, options_to_plain(o)] for k, o in state.settled_options])
    parts = {
        HEADER_PART: msgpack.packb([3, header]),
        DEAL_PART: msgpack.packb(deal_values),
        CONFIG_PART: msgpack.packb(_plain(state.config)),
        # Every part includes the pending config, None when there is none.
        PENDING_CONFIG_PART: msgpack.packb(_plain(state.pending_config)),
    }
    if state.closing:  # only ever written true
        parts[CLOSING_PART] = msgpack.packb(True)
    for i, seat in enumerate(state.seats):
        parts[seat_part(i)] = msgpack.packb(None if seat is None else _fields(seat))
    return parts


def phase(h: Harness) -> Phase:
    """The table's phase (a function, so type checkers do not narrow it between steps)."""
    return h.state.phase


@dataclass
class Harness:
    """Drives a table as the store would: refuses a change that overdraws an account."""

    state: TableState = field(default_factory=lambda: new_table(CONFIG))
    accounts: dict[str, int] = field(default_factory=dict)
    now: int = 1_000_000
    log: list[tuple[Event, int]] = field(default_factory=list)
    seen_keys: set[str] = field(default_factory=set)
    outbound: list[Outbound] = field(default_factory=list)
    # The table as the store holds it: each step's parts written over the last ones.
    parts: dict[str, bytes] = field(init=False)

    def __post_init__(self) -> None:
        self.parts = to_parts(self.state, None)

    def total(self) -> int:
        balances, held, house = self.state.money()
        return sum(self.accounts.values()) + balances + held + house

    def apply(self, event: Event) -> Transition:
        """Step the table; raises TableError, or returns the transition it kept."""
        before = self.state
        t = step(before, event, self.now)
        accounts = dict(self.accounts)
        for e in t.entries:
            if e.source is Pot.ACCOUNT:
                accounts[e.player] = accounts.get(e.player, 0) - e.amount
            if e.dest is Pot.ACCOUNT:
                accounts[e.player] = accounts.get(e.player, 0) + e.amount
        if any(v < 0 for v in accounts.values()):
            raise Overdrawn
        self.check_transition(before, t)
        check_phase_move(before.phase, event, t.state.phase)
        self.parts.update(to_parts(t.state, before))
        self.accounts = accounts
        self.state = t.state
        self.log.append((event, self.now))
        self.outbound.extend(t.events)
        return t

    def check_transition(self, before: TableState, t: Transition) -> None:
        after = t.state
        # The ledger says exactly how the pots moved.
        moved = pot_deltas(t.entries)
        expected = table_pots(after)
        expected.subtract(table_pots(before))
        for key in set(moved) | set(expected):
            if key[0] in (Pot.TABLE, Pot.HELD):
                assert moved[key] == expected[key], (key, moved[key], expected[key])
        house = sum(v for (pot, _), v in moved.items() if pot is Pot.HOUSE)
        assert after.house - before.house == house
        # Keys are unique, ever; versions and sequence numbers grow without gaps.
        for e in t.entries:
            assert e.key not in self.seen_keys, e.key
            self.seen_keys.add(e.key)
        if after is not before:
            assert after.version == before.version + 1
        assert [o.seq for o in t.events] == list(range(before.seq + 1, after.seq + 1))
        self.check_parts(before, after)
        check_visibility(before, t)
        for _, record in t.logs:
            check_record(record)

    def check_parts(self, before: TableState, after: TableState) -> None:
        """The parts written over the stored ones give ``after`` exactly, and only the
        parts of records that changed are written."""
        written = to_parts(after, before)
        stored = {**self.parts, **written}
        assert from_parts(stored) == after
        # The hand-written writers give what the generic walk of the slots gives.
        assert stored == plain_parts(after)
        changed = {HEADER_PART}
        deal = ("seed", "commitment", "hands", "dealer_low", "results", "settled_options")
        if any(getattr(after, n) is not getattr(before, n) for n in deal):
            changed.add(DEAL_PART)
        if after.config is not before.config:
            changed.add(CONFIG_PART)
        if after.pending_config is not before.pending_config:
            changed.add(PENDING_CONFIG_PART)
        if after.closing and not before.closing:
            changed.add(CLOSING_PART)
        changed |= {
            seat_part(i)
            for i, (old, new) in enumerate(zip(before.seats, after.seats, strict=True))
            if new is not old
        }
        # Unchanged records are not written (a record rebuilt equal is: a ClearBet with
        # no bet does that, a needless write but a harmless one).
        assert set(written) == changed
        # A table stored whole, before parts, still reads the same, and one stored in
        # the parts of format 2.
        # (Those writers knew no closing and no settled options: not theirs.)
        older = evolve(after, closing=False, settled_options=())
        assert from_bytes(legacy_blob(after)) == evolve(older, pending_config=None)
        assert from_parts(legacy_parts(after)) == older


def deadline_phases(phase: Phase) -> set[Phase]:
    """The phases that deadlines firing one after another lead ``phase`` to."""
    reached, todo = {phase}, [phase]
    while todo:
        deadline = DEADLINES.get(todo.pop())
        for target in deadline.to if deadline is not None else ():
            if target not in reached:
                reached.add(target)
                todo.append(target)
    return reached


def check_phase_move(before: Phase, event: Event, after: Phase) -> None:
    """The machine moved the table only along its tables: a tick along deadlines, an
    event to a phase its row names."""
    if isinstance(event, Tick):
        assert after in deadline_phases(before), (before, after)
        return
    allowed = {before}
    for phases, event_type, _, to in ROWS:
        if before in phases and isinstance(event, event_type):
            allowed.update(to)
    assert after in allowed, (before, event, after)


class Overdrawn(Exception):
    """The store would refuse this change: an account would go negative."""


def check_visibility(before: TableState, t: Transition) -> None:
    """No message carries a card its recipient may not see; every one is valid on the wire."""
    state = t.state
    for out in t.events:
        check(out.public)
        for message in out.private.values():
            check(message)
        public = out.public
        assert not isinstance(public, Cards), "cards sent to everyone"
        if isinstance(public, SeedReveal):
            assert state.phase is Phase.SETTLING
        if isinstance(public, Reveal):
            assert state.phase in (Phase.REVEALING, Phase.SETTLING)
            dealt_to = {i for i, _ in state.in_round()} | {6}
            assert {h.hand for h in public.hands} <= dealt_to
        for player, message in out.private.items():
            assert isinstance(message, Cards)
            assert isinstance(public, Hidden)
            index = state.seat_of(player)
            assert index is not None
            assert message.seat == index
            assert state.hands is not None
            assert message.cards == state.hands[index]
    viewers: list[str | None] = [None, *(s.player for _, s in state.occupied())]
    for viewer in viewers:
        snap = snapshot(state, viewer, 0)
        check(snap)
        check_snapshot(state, snap, viewer)


def check_record(record: RoundRecord) -> None:
    """A game log record is valid on the wire (it is sent as it is in history pages)."""
    check(OkReply(rid="r", result=HistoryPage(rounds=(record,))))


def check_snapshot(state: TableState, snap: Snapshot, player: str | None) -> None:
    """A snapshot shows its recipient's own cards only, and other hands only from the reveal."""
    if player is None:
        assert snap.your_cards == ()
        assert snap.your_seat is None
    elif snap.your_cards:
        assert state.hands is not None
        assert snap.your_seat is not None
        assert snap.your_cards == state.hands[snap.your_seat]
    if state.phase not in (Phase.REVEALING, Phase.SETTLING):
        assert snap.hands == ()


T0 = 1_000_000
"""The scripted rounds' clock at the start, in milliseconds."""


def seated(players: int, buy_in: int = 1000, config: TableConfig = CONFIG) -> Harness:
    """A table of ``config`` at :data:`T0` with ``players`` seated (``p0``, ``p1``...,
    each with 5,000 in their account and ``buy_in`` at the table)."""
    h = Harness(state=new_table(config), now=T0)
    for i in range(players):
        h.accounts[f"p{i}"] = 5000
        h.apply(SitDown(f"p{i}", f"Player {i}", i, buy_in, seed(1)))
    return h
