"""The Queen's Dragon and the Tiger 9 at the table (docs/RULES.md, "Commission-free
tables"; docs/DESIGN.md, "Wagers"): each a staked side bet within its own limits, paid
at the table's odds on the dealer's hand alone, with its own stake, win and loss entries
in the ledger and its line in the results, no chip made or lost."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from protocol.fairness import DEALER_HAND, deal
from protocol.messages import Results
from server.rules.dealer_hands import is_nine_high_low, is_queen_high_pai_gow
from server.rules.houseways import house_way
from server.rules.options import CommissionFree, RuleOptions
from server.rules.queens_dragon import QUEEN_HIGH_PAI_GOW, QueensDragonOptions
from server.rules.tiger9 import NINE_HIGH_LOW, Tiger9Options
from server.table.errors import TableError
from server.table.events import PlaceBet, SitDown, Tick, UseHouseWay
from server.table.ledger import Kind
from server.table.state import TableConfig, new_table
from tests.server.table.helpers import T0, Harness, seed

EZ = TableConfig(
    table_id="ez",
    name="EZ",
    rules=RuleOptions(commission_free=CommissionFree.EZ),
    side_bets=(("queens_dragon", QueensDragonOptions(min=5, max=50, odds=50)),),
)
NINE = TableConfig(
    table_id="nine",
    name="Nine",
    rules=RuleOptions(commission_free=CommissionFree.NINE_LOW),
    side_bets=(("tiger9", Tiger9Options(min=5, max=25, odds=30)),),
)


def _queen_high(hands: list[tuple[int, ...]], rules: RuleOptions) -> bool:
    return is_queen_high_pai_gow(hands[DEALER_HAND])


def _nine_low(hands: list[tuple[int, ...]], rules: RuleOptions) -> bool:
    return is_nine_high_low(house_way(hands[DEALER_HAND], rules.house_way, rules.wheel).low)


def _seed_where(
    test: Callable[[list[tuple[int, ...]], RuleOptions], bool], wins: bool, rules: RuleOptions
) -> bytes:
    for n in range(1, 20_000):
        if test(list(deal(seed(n))), rules) is wins:
            return seed(n)
    raise AssertionError("no such seed")


def _round(config: TableConfig, round_seed: bytes, kind: str, stake: int) -> tuple[Harness, int]:
    """One round of two seats at ``config``, each with a main bet of 100 and ``stake``
    on ``kind``; the harness after settlement and the ledger entries' count."""
    h = Harness(state=new_table(config), now=T0)
    for i in range(2):
        h.accounts[f"p{i}"] = 5000
        h.apply(SitDown(f"p{i}", f"Player {i}", i, 1000, round_seed))
    t = h.apply(PlaceBet("p0", 100, 0, ((kind, stake),)))
    assert {e.key.rsplit(":", 1)[1]: (e.kind, e.amount) for e in t.entries} == {
        "bet": (Kind.BET, 100),
        kind: (Kind.SIDE_BET, stake),
    }
    h.apply(PlaceBet("p1", 100))
    h.now += config.dealing_ms
    h.apply(Tick(seed(5)))
    for i in range(2):
        h.apply(UseHouseWay(f"p{i}"))
    h.now += config.revealing_ms
    t = h.apply(Tick(seed(6)))
    results = next(o.public for o in t.events if isinstance(o.public, Results))
    return h, len(results.results)


@pytest.mark.parametrize(
    ("config", "kind", "test", "line", "odds"),
    [
        (EZ, "queens_dragon", _queen_high, QUEEN_HIGH_PAI_GOW, 50),
        (NINE, "tiger9", _nine_low, NINE_HIGH_LOW, 30),
    ],
)
@pytest.mark.parametrize("wins", [True, False])
def test_the_bet_on_the_dealers_hand_wins_and_loses_by_its_own_entries(
    config: TableConfig,
    kind: str,
    test: Callable[[list[tuple[int, ...]], RuleOptions], bool],
    line: str,
    odds: int,
    wins: bool,
) -> None:
    h, shown = _round(config, _seed_where(test, wins, config.rules), kind, 10)
    assert shown == 2
    mine, other = h.state.results
    w = mine.wager(kind)
    assert w is not None
    back = 10 * (odds + 1) if wins else 0
    assert (w.stake, w.payout, w.pay_class) == (10, back, line if wins else None)
    assert other.wager(kind) is None  # the seat without the bet has no line
    keys = {k.split(":", 2)[2] for k in h.seen_keys if ":r1:" in k}
    if wins:
        assert {f"s0:{kind}_back", f"s0:{kind}_win"} <= keys
        assert f"s0:{kind}_lost" not in keys
    else:
        assert f"s0:{kind}_lost" in keys
        assert f"s0:{kind}_win" not in keys
    assert not {k for k in keys if k.startswith(f"s1:{kind}")}
    # The seat's chips count the bet's payout beside the main bet's.
    seat = h.state.seats[0]
    assert seat is not None
    assert seat.balance == 1000 - 110 + mine.payout + back
    assert h.total() == 2 * 5000


def test_the_odds_are_the_tables() -> None:
    rich = TableConfig(
        table_id="ez",
        name="EZ",
        rules=RuleOptions(commission_free=CommissionFree.EZ),
        side_bets=(("queens_dragon", QueensDragonOptions(odds=40)),),
    )
    h, _ = _round(rich, _seed_where(_queen_high, True, rich.rules), "queens_dragon", 5)
    w = h.state.results[0].wager("queens_dragon")
    assert w is not None
    assert w.payout == 5 * 41


def test_a_stake_outside_its_limits_or_a_bet_not_offered_is_refused() -> None:
    h = Harness(state=new_table(NINE), now=T0)
    h.accounts["p0"] = 5000
    h.apply(SitDown("p0", "Ann", 0, 1000, seed(1)))
    with pytest.raises(TableError, match="tiger 9 bet is 5 to 25 chips"):
        h.apply(PlaceBet("p0", 100, 0, (("tiger9", 30),)))
    with pytest.raises(TableError):
        h.apply(PlaceBet("p0", 100, 0, (("queens_dragon", 10),)))
    seat = h.state.seats[0]
    assert seat is not None
    assert (seat.bet, seat.side, seat.balance) == (0, (), 1000)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"min": 0}, "0 < min <= max"),
        ({"min": 60, "max": 50}, "0 < min <= max"),
        ({"odds": 0}, "odds are at least 1"),
        ({"odds": "50"}, "odds is a whole number"),
    ],
)
def test_bad_options_are_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        QueensDragonOptions(**options)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        Tiger9Options(**options)  # type: ignore[arg-type]
