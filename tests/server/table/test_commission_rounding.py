"""A table's commission rounding (docs/RULES.md, "Commission"): the bets a ``whole``
table takes, and the commission an ``up`` table collects on a small winning bet."""

from __future__ import annotations

import pytest

from protocol.errors import ErrorCode
from protocol.fairness import deal
from protocol.messages import Results
from server.rules.houseways import house_way
from server.rules.options import CommissionRounding, RuleOptions
from server.rules.settlement import Outcome, settle
from server.table.errors import TableError
from server.table.events import PlaceBet, SitDown, Tick, UseHouseWay
from server.table.ledger import Kind
from server.table.state import TableConfig, new_table
from tests.server.table.helpers import CONFIG, T0, Harness, seated, seed

WHOLE = TableConfig(
    table_id="t1",
    name="Whole",
    min_bet=20,
    max_bet=500,
    denominations=(5, 25, 100),
    rules=RuleOptions(commission_rounding=CommissionRounding.WHOLE),
)
UP = TableConfig(
    table_id="t1", name="Up", rules=RuleOptions(commission_rounding=CommissionRounding.UP)
)


def test_a_whole_table_takes_main_bets_in_steps_whose_commission_is_whole() -> None:
    assert (WHOLE.bet_unit, WHOLE.main_bet_unit) == (5, 20)
    h = seated(1, config=WHOLE)
    with pytest.raises(TableError) as info:
        h.apply(PlaceBet("p0", 30))
    assert info.value.code is ErrorCode.COMMISSION_NOT_WHOLE
    assert "bet 20 or 40, not 30" in info.value.message
    # The chip unit and the limits are checked first, with their own error.
    for amount in (25 + 2, 10, 520):
        with pytest.raises(TableError) as info:
            h.apply(PlaceBet("p0", amount))
        assert info.value.code is ErrorCode.BET_LIMITS
    # The bonus is no main bet: any amount within its own limits.
    h.apply(PlaceBet("p0", 40, 5))
    assert (h.state.seats[0].bet, h.state.seats[0].bonus) == (40, 5)  # type: ignore[union-attr]


def test_other_roundings_take_every_multiple_of_the_chips() -> None:
    assert UP.main_bet_unit == CONFIG.main_bet_unit == CONFIG.bet_unit == 5
    h = seated(1, config=UP)
    h.apply(PlaceBet("p0", 15))


def test_a_whole_table_s_limits_are_bets_it_takes() -> None:
    whole = RuleOptions(commission_rounding=CommissionRounding.WHOLE)
    with pytest.raises(ValueError, match="multiples of 20"):
        TableConfig(table_id="t", name="T", min_bet=10, rules=whole)
    with pytest.raises(ValueError, match="multiples of 20"):
        TableConfig(table_id="t", name="T", min_bet=20, max_bet=510, rules=whole)
    # Chips of 25: a bet whose 5 % is whole and made of them is a multiple of 100.
    with pytest.raises(ValueError, match="multiples of 100"):
        TableConfig(table_id="t", name="T", min_bet=25, denominations=(25, 100), rules=whole)
    assert TableConfig(table_id="t", name="T", min_bet=20, rules=whole).main_bet_unit == 20
    # Without the option nothing about the limits changes (a minimum off the unit stays).
    TableConfig(table_id="t", name="T", min_bet=12)


def _seed_where_the_house_way_wins() -> bytes:
    """A round seed whose seat 0, set by the house way, beats the dealer's hand."""
    rules = UP.rules
    for n in range(1, 500):
        hands = deal(seed(n))
        mine = house_way(hands[0], rules.house_way, rules.wheel)
        dealer = house_way(hands[6], rules.house_way, rules.wheel)
        if settle(mine, dealer, 10, rules).outcome is Outcome.WIN:
            return seed(n)
    raise AssertionError("no winning seed")


@pytest.mark.parametrize(("config", "cut"), [(CONFIG, 0), (UP, 1)])
def test_a_winning_bet_of_ten_pays_the_commission_of_its_rounding(
    config: TableConfig, cut: int
) -> None:
    h = Harness(state=new_table(config), now=T0)
    h.accounts["p0"] = 5000
    h.apply(SitDown("p0", "Ann", 0, 1000, _seed_where_the_house_way_wins()))
    h.apply(PlaceBet("p0", 10))
    h.now += config.dealing_ms
    h.apply(Tick(seed(5)))
    h.apply(UseHouseWay("p0"))
    h.now += config.revealing_ms
    t = h.apply(Tick(seed(6)))
    results = next(o.public for o in t.events if isinstance(o.public, Results))
    (result,) = results.results
    assert (result.outcome, result.commission, result.payout) == ("win", cut, 20 - cut)
    # The ledger's commission entry (none for a commission of 0) takes it to the house.
    assert sum(e.amount for e in t.entries if e.kind is Kind.COMMISSION) == cut
    assert h.state.house == cut - 10
    assert h.total() == 5000  # no chip made or lost
