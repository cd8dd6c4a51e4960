"""A staked side bet other than the bonus bet, through the whole table: its own stake
entries, its result and its own win or loss entries, the seat's stored arrays grown by
it, rebet and void. No such bet ships yet (the bonus bet is the one staked side bet), so
this test registers one of its own, `sevens`: 5 to 1 when the seven cards hold a seven
(docs/DESIGN.md, "Wagers", "How to add a side bet")."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import msgpack
import pytest

from protocol.fairness import deal
from server.rules import side_bets
from server.rules.bonus import BONUS_BET
from server.rules.envy import ENVY_BET
from server.rules.wagers import PayLine, Settled, SideBet, SideDeal, registry
from server.store.tables import parts
from server.store.tables.parts import SEAT_FIELDS, seat_part, to_parts
from server.table import betting, settlement, state
from server.table.events import PlaceBet, Rebet, SitDown, Tick, UseHouseWay, Void
from server.table.ledger import Kind
from server.table.state import Phase, TableConfig, new_table
from tests.server.table.helpers import T0, Harness, phase, seed

SEVEN_RANK = 5  # card code >> 2: 2..A as 0..12, so a seven is 5


@dataclass(frozen=True, slots=True)
class SevensOptions:
    min: int = 5
    max: int = 50
    odds: int = 5


def _settle(deal: SideDeal, stake: int, options: SevensOptions) -> Settled:
    if any(c < 52 and c >> 2 == SEVEN_RANK for c in deal.cards):
        return Settled("a_seven", stake * (options.odds + 1))
    return Settled(None, 0)


SEVENS = SideBet(
    kind="sevens",
    label="Sevens",
    options=SevensOptions,
    settle=_settle,
    limits=lambda o: (o.min, o.max),
    pay_lines=lambda rules, o: (PayLine("a_seven", "a seven", o.odds),),
)


def _config() -> TableConfig:
    """The table offering `sevens` (built once it is registered)."""
    return TableConfig(table_id="t1", name="Sevens", side_bets=(("sevens", SevensOptions()),))


@pytest.fixture(autouse=True)
def sevens_registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The registry with `sevens` in it, where the table and the store read it."""
    extended = registry(BONUS_BET, ENVY_BET, SEVENS)
    for module in (side_bets, state, betting, settlement, parts):
        monkeypatch.setattr(module, "SIDE_BETS", extended)
    state._side_kinds.cache_clear()
    yield
    state._side_kinds.cache_clear()


def _has_seven(cards: tuple[int, ...]) -> bool:
    return any(c < 52 and c >> 2 == SEVEN_RANK for c in cards)


def _seed_where(p0_has_seven: bool, p1_has_seven: bool) -> int:
    for n in range(1, 5000):
        hands = deal(seed(n))
        if (_has_seven(hands[0]), _has_seven(hands[1])) == (p0_has_seven, p1_has_seven):
            return n
    raise AssertionError("no such seed")


def _seated(n: int) -> Harness:
    h = Harness(state=new_table(_config()), now=T0)
    for i in range(2):
        h.accounts[f"p{i}"] = 5000
        h.apply(SitDown(f"p{i}", f"Player {i}", i, 1000, seed(n)))
    return h


def _play(h: Harness) -> None:
    assert phase(h) is Phase.DEALING
    h.now += h.state.config.dealing_ms
    h.apply(Tick(seed(2)))
    for i in range(2):
        h.apply(UseHouseWay(f"p{i}"))
    h.now += h.state.config.revealing_ms
    h.apply(Tick(seed(2)))
    assert phase(h) is Phase.SETTLING


def test_a_staked_side_bet_has_its_own_stake_result_and_ledger_lines() -> None:
    h = _seated(_seed_where(True, False))
    t = h.apply(PlaceBet("p0", 100, 10, (("sevens", 20),)))
    stakes = {e.key.rsplit(":", 1)[1]: (e.kind, e.amount) for e in t.entries}
    assert stakes == {
        "bet": (Kind.BET, 100),
        "bonus": (Kind.BONUS_BET, 10),
        "sevens": (Kind.SIDE_BET, 20),
    }
    seat = h.state.seats[0]
    assert seat is not None
    assert seat.side == (("bonus", 10), ("sevens", 20))
    assert seat.balance == 1000 - 130
    # The stored seat grows by the other side bets' fields (0.1.0 could not read it).
    stored = msgpack.unpackb(to_parts(h.state, None)[seat_part(0)])
    assert len(stored) == len(SEAT_FIELDS)
    assert stored[-2:] == [[["sevens", 20]], []]
    h.apply(PlaceBet("p1", 100, 0, (("sevens", 5),)))
    _play(h)
    won, lost = (r.wager("sevens") for r in h.state.results)
    assert won is not None
    assert (won.stake, won.payout, won.pay_class) == (20, 120, "a_seven")
    assert lost is not None
    assert (lost.stake, lost.payout, lost.pay_class) == (5, 0, None)
    keys = {k.split(":", 2)[2] for k in h.seen_keys if ":r1:" in k}
    assert {"s0:sevens_back", "s0:sevens_win", "s1:sevens_lost"} <= keys
    assert h.total() == 2 * 5000
    # Rebet repeats every side bet of the last round.
    h.now += h.state.config.settling_ms
    h.apply(Tick(seed(3)))
    h.apply(Rebet("p0"))
    seat = h.state.seats[0]
    assert seat is not None
    assert seat.side == (("bonus", 10), ("sevens", 20))


def test_a_void_returns_each_side_bet_by_its_own_entry() -> None:
    h = _seated(_seed_where(False, False))
    h.apply(PlaceBet("p0", 100, 10, (("sevens", 20),)))
    h.apply(PlaceBet("p1", 100))
    t = h.apply(Void("test"))
    keys = {e.key.rsplit(":", 1)[1]: e.amount for e in t.entries if e.player == "p0"}
    assert keys == {"void_bet_back": 100, "void_bonus_back": 10, "void_sevens_back": 20}
    assert h.total() == 2 * 5000


def test_a_stake_outside_its_limits_is_refused() -> None:
    h = _seated(1)
    with pytest.raises(Exception, match="sevens bet is 5 to 50"):
        h.apply(PlaceBet("p0", 100, 0, (("sevens", 55),)))
