"""A commission-free table's round (docs/RULES.md, "Commission-free tables"): a win
pays even money with no commission entry, and the dealer's queen-high pai gow pushes
a bet the house way would have won, every chip accounted for."""

from __future__ import annotations

import pytest

from protocol.fairness import DEALER_HAND, deal
from protocol.messages import Results
from server.rules.dealer_hands import is_queen_high_pai_gow
from server.rules.houseways import house_way
from server.rules.options import CommissionFree, RuleOptions
from server.rules.settlement import Outcome, settle
from server.table.events import PlaceBet, SitDown, Tick, UseHouseWay
from server.table.ledger import Kind
from server.table.state import TableConfig, new_table
from tests.server.table.helpers import T0, Harness, seed

EZ = TableConfig(table_id="t1", name="EZ", rules=RuleOptions(commission_free=CommissionFree.EZ))


def _seed_where(queen_high: bool) -> bytes:
    """A round seed whose seat 0, set by the house way, beats the dealer's hand on both
    halves, the dealer's being a queen-high pai gow or not as asked."""
    plain = RuleOptions()
    for n in range(1, 5000):
        hands = deal(seed(n))
        if is_queen_high_pai_gow(hands[DEALER_HAND]) is not queen_high:
            continue
        mine = house_way(hands[0], plain.house_way, plain.wheel)
        dealer = house_way(hands[DEALER_HAND], plain.house_way, plain.wheel)
        if settle(mine, dealer, 10, plain).outcome is Outcome.WIN:
            return seed(n)
    raise AssertionError("no such seed")


@pytest.mark.parametrize(
    ("queen_high", "outcome", "payout"), [(False, "win", 200), (True, "push", 100)]
)
def test_a_win_pays_even_money_unless_the_dealer_has_a_queen_high_pai_gow(
    queen_high: bool, outcome: str, payout: int
) -> None:
    h = Harness(state=new_table(EZ), now=T0)
    h.accounts["p0"] = 5000
    h.apply(SitDown("p0", "Ann", 0, 1000, _seed_where(queen_high)))
    h.apply(PlaceBet("p0", 100))
    h.now += EZ.dealing_ms
    h.apply(Tick(seed(5)))
    h.apply(UseHouseWay("p0"))
    h.now += EZ.revealing_ms
    t = h.apply(Tick(seed(6)))
    results = next(o.public for o in t.events if isinstance(o.public, Results))
    (result,) = results.results
    assert (result.outcome, result.commission, result.payout) == (outcome, 0, payout)
    assert (result.high, result.low) == ("win", "win")  # the halves as they compared
    assert not [e for e in t.entries if e.kind is Kind.COMMISSION and e.amount]
    assert h.state.house == 100 - payout
    assert h.total() == 5000  # no chip made or lost
