"""Side bets as a list (docs/DESIGN.md, "Wagers"): the Envy bonus at a table, each
wager's own ledger lines, and the bonus bet as before."""

from __future__ import annotations

import pytest

from protocol.errors import ErrorCode
from protocol.fairness import deal
from protocol.messages import Results
from server.rules.bonus import BONUS_CLASS_CODES, BonusClass, classify_bonus
from server.rules.envy import EnvyOptions, envy_payout
from server.table.errors import TableError
from server.table.events import PlaceBet, SitDown, Tick, UseHouseWay
from server.table.state import Phase, TableConfig, new_table
from tests.server.table.helpers import T0, Harness, phase, seed

ENVY_TABLE = TableConfig(table_id="t1", name="Fortune", side_bets=(("envy", EnvyOptions()),))
FOUR = BonusClass.FOUR_OF_A_KIND


def _seed_with_envy_hand(seats: int) -> tuple[int, int]:
    """A seed whose deal gives one of the first ``seats`` seats four of a kind or better
    (the one), and no other such seat."""
    for n in range(1, 20_000):
        hands = deal(seed(n))
        big = [i for i in range(seats) if classify_bonus(hands[i]) <= FOUR]
        if len(big) == 1:
            return n, big[0]
    raise AssertionError("no such seed")


def _round(config: TableConfig, n: int, bets: list[tuple[int, int]]) -> Harness:
    h = Harness(state=new_table(config), now=T0)
    for i, _ in enumerate(bets):
        h.accounts[f"p{i}"] = 5000
        h.apply(SitDown(f"p{i}", f"Player {i}", i, 1000, seed(n)))
    for i, (amount, bonus) in enumerate(bets):
        h.apply(PlaceBet(f"p{i}", amount, bonus))
    assert phase(h) is Phase.DEALING
    h.now += config.dealing_ms
    h.apply(Tick(seed(2)))
    for i, _ in enumerate(bets):
        h.apply(UseHouseWay(f"p{i}"))
    h.now += config.revealing_ms
    h.apply(Tick(seed(2)))
    assert phase(h) is Phase.SETTLING
    return h


def test_envy_pays_fixed_amounts_for_each_other_qualifying_hand() -> None:
    options = EnvyOptions()
    n, lucky = _seed_with_envy_hand(3)
    hands = deal(seed(n))
    cls = classify_bonus(hands[lucky])
    assert envy_payout((hands[lucky],), options) == (options.amount(cls), BONUS_CLASS_CODES[cls])
    assert envy_payout((hands[lucky], hands[lucky]), options)[0] == 2 * options.amount(cls)
    assert options.amount(FOUR) == 5  # the common table (docs/RULES.md, "Envy bonus")
    assert options.amount(BonusClass.NATURAL_SEVEN_CARD_STRAIGHT_FLUSH) == 5000
    assert options.amount(BonusClass.FULL_HOUSE) == 0


def test_envy_at_a_table_each_qualifying_bettor_for_others_never_own() -> None:
    n, lucky = _seed_with_envy_hand(3)
    cls = classify_bonus(deal(seed(n))[lucky])
    amount = EnvyOptions().amount(cls)
    # Everyone bets a bonus of 5 (qualifies) but seat 2, whose bonus is under the
    # table's minimum for Envy (raised to 10 here), and so does not qualify.
    config = TableConfig(
        table_id="t1", name="Fortune", side_bets=(("envy", EnvyOptions(min_bonus=10)),)
    )
    h = _round(config, n, [(100, 10), (100, 10), (100, 5)])
    results = {r.seat: r for r in h.state.results}
    for seat, r in results.items():
        envy = r.wager("envy")
        if seat in (lucky, 2):
            assert envy is None  # own hand, or not qualifying
        else:
            assert envy is not None
            assert (envy.stake, envy.payout, envy.pay_class) == (0, amount, BONUS_CLASS_CODES[cls])
    # Its own ledger line, house to table, keyed by the round, the seat and the kind.
    envy_keys = [k for k in h.seen_keys if k.endswith(":envy_win")]
    paid = [s for s in results if s not in (lucky, 2)]
    assert sorted(envy_keys) == sorted(f"t1:r1:s{s}:envy_win" for s in paid)
    assert h.total() == 3 * 5000
    # Every seat's balance counts its Envy win.
    for seat, r in results.items():
        s = h.state.seats[seat]
        assert s is not None
        assert s.balance == r.balance
    # The results event carries the list beside the bonus fields.
    ev = next(o.public for o in reversed(h.outbound) if isinstance(o.public, Results))
    assert isinstance(ev, Results)
    for wire in ev.results:
        kinds = [w.kind for w in wire.wagers]
        assert kinds[0] == "bonus"
        assert wire.bonus_bet == wire.wagers[0].stake
        assert wire.bonus_payout == wire.wagers[0].payout


def test_a_riding_or_unknown_side_bet_cannot_be_staked() -> None:
    h = Harness(state=new_table(ENVY_TABLE), now=T0)
    h.accounts["p0"] = 5000
    h.apply(SitDown("p0", "Player 0", 0, 1000, seed(1)))
    for side in ((("envy", 5),), (("tiger9", 5),)):
        with pytest.raises(TableError) as err:
            h.apply(PlaceBet("p0", 100, 5, side))
        assert err.value.code is ErrorCode.BET_LIMITS
    with pytest.raises(TableError) as err:
        h.apply(PlaceBet("p0", 0, 5))
    assert err.value.code is ErrorCode.NO_BET


def test_a_table_without_envy_settles_the_bonus_as_before() -> None:
    n, _ = _seed_with_envy_hand(2)
    h = _round(TableConfig(table_id="t1", name="T"), n, [(100, 5), (100, 5)])
    for r in h.state.results:
        assert [w.kind for w in r.wagers] == ["bonus"]
    keys = {k.rsplit(":", 1)[1] for k in h.seen_keys}
    assert keys <= {"bet", "bonus", "bet_back", "win", "commission", "bet_lost"} | {
        "bonus_back",
        "bonus_win",
        "bonus_lost",
        "buy_in",
    }
