"""The progressive wager at the table: a fixed stake per round, taken by the house like
a lost bet unless a fixed award pays it, a meter class named in the result for the
holder's calls (server/host/jackpots.py), every chip accounted for."""

from __future__ import annotations

from dataclasses import replace

import pytest

from protocol.fairness import deal
from server.rules.bonus import BONUS_CLASS_CODES, BonusClass, classify_bonus
from server.rules.progressive import (
    PROGRESSIVE,
    JackpotOptions,
    ProgressiveBetOptions,
    ProgressiveError,
    meter_share_of,
)
from server.rules.side_bets import side_bet
from server.table import betting
from server.table.events import ChangeConfig, PlaceBet, Rebet, SitDown, Tick, UseHouseWay
from server.table.state import Phase, TableConfig, new_table
from tests.server.table.helpers import T0, Harness, phase, seed

WAGER = 5
OPTIONS = ProgressiveBetOptions("fortune", seed=1000, contribution_bps=2000, wager=WAGER)


def _config() -> TableConfig:
    return TableConfig(table_id="t1", name="Fortune", side_bets=((PROGRESSIVE, OPTIONS),))


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


def _seed_where(cls0: BonusClass) -> int:
    """A seed whose deal gives seat 0 a hand of ``cls0`` and seat 1 one that pays
    nothing on the progressive."""
    for n in range(1, 20000):
        hands = deal(seed(n))
        # Classes run from the best (0) down: below a full house pays nothing.
        if classify_bonus(hands[0]) is cls0 and classify_bonus(hands[1]) > BonusClass.FULL_HOUSE:
            return n
    raise AssertionError("no such seed")


def test_the_stake_is_the_jackpots_wager_and_nothing_else() -> None:
    h = _seated(1)
    assert h.state.config.limits(PROGRESSIVE) == (WAGER, WAGER)
    with pytest.raises(Exception, match="progressive bet is 5 to 5"):
        h.apply(PlaceBet("p0", 100, 0, ((PROGRESSIVE, 10),)))
    with pytest.raises(Exception, match="a side bet needs a main bet"):
        h.apply(PlaceBet("p0", 0, 0, ((PROGRESSIVE, WAGER),)))


def test_a_fixed_award_is_paid_at_the_table_and_a_losing_wager_goes_to_the_house() -> None:
    h = _seated(_seed_where(BonusClass.FULL_HOUSE))
    h.apply(PlaceBet("p0", 100, 0, ((PROGRESSIVE, WAGER),)))
    h.apply(PlaceBet("p1", 100, 0, ((PROGRESSIVE, WAGER),)))
    _play(h)
    won, lost = (r.wager(PROGRESSIVE) for r in h.state.results)
    assert won is not None
    assert lost is not None
    # A full house pays 5 for 1: 25 chips for a wager of 5, which is not returned.
    assert (won.stake, won.payout, won.pay_class) == (WAGER, 5 * WAGER, "full_house")
    assert (lost.stake, lost.payout, lost.pay_class) == (WAGER, 0, None)
    keys = {k.split(":", 2)[2] for k in h.seen_keys if ":r1:" in k}
    assert {"s0:progressive_back", "s0:progressive_win", "s1:progressive_lost"} <= keys
    assert h.total() == 2 * 5000
    assert meter_share_of(OPTIONS, won.pay_class) == 0


def test_a_meter_class_names_its_share_and_moves_no_chip_at_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    top = tuple(((r - 2) << 2) for r in range(8, 15))  # eight to ace of one suit
    rest = [c for c in range(53) if c not in top]
    hands = (top, *(tuple(rest[7 * k : 7 * k + 7]) for k in range(6)))
    monkeypatch.setattr(betting, "deal", lambda _seed: hands)
    h = _seated(1)
    h.apply(PlaceBet("p0", 100, 0, ((PROGRESSIVE, WAGER),)))
    h.apply(PlaceBet("p1", 100))
    _play(h)
    result = h.state.results[0].wager(PROGRESSIVE)
    assert result is not None
    code = BONUS_CLASS_CODES[BonusClass.NATURAL_SEVEN_CARD_STRAIGHT_FLUSH]
    assert (result.stake, result.payout, result.pay_class) == (WAGER, 0, code)
    assert meter_share_of(OPTIONS, code) == 10_000
    # The wager went to the house: the meter's share is the store's to pay.
    keys = {k.split(":", 2)[2] for k in h.seen_keys if ":r1:s0:progressive" in k}
    assert keys == {"s0:progressive_lost"}
    assert h.total() == 2 * 5000


def test_the_options_are_a_jackpots() -> None:
    jackpot = JackpotOptions("j", seed=500, contribution_bps=100, wager=2)
    assert ProgressiveBetOptions.of(jackpot).jackpot_options() == jackpot
    with pytest.raises(ProgressiveError):
        ProgressiveBetOptions("bad name!", seed=0, contribution_bps=0)
    with pytest.raises(ProgressiveError):
        ProgressiveBetOptions("j", seed=0, contribution_bps=10_001)


def test_its_pay_lines_are_the_fixed_awards_as_odds_to_one() -> None:
    options = _config().side_options(PROGRESSIVE)
    shown = side_bet(PROGRESSIVE).pay_lines(_config().rules, options)
    # The classes paid from the meter are left to the meter's view.
    assert [(line.code, line.pays) for line in shown][:2] == [
        ("7_card_straight_flush_joker", 7999),
        ("five_aces", 3999),
    ]
    assert shown[-1].code == "full_house"
    assert shown[-1].pays == 4


def test_rebet_leaves_out_a_side_bet_the_table_no_longer_takes_at_that_stake() -> None:
    """Between rounds the jackpot's wager went from 5 to 10: a rebet places the main
    bet and the bonus bet as they were, and leaves the progressive out (never another
    stake than the player chose: protocol/PROTOCOL.md, ``rebet``)."""
    h = _seated(_seed_where(BonusClass.FULL_HOUSE))
    h.apply(PlaceBet("p0", 100, 5, ((PROGRESSIVE, WAGER),)))
    h.apply(PlaceBet("p1", 100, 5))
    _play(h)
    h.now += h.state.config.settling_ms
    h.apply(Tick(seed(3)))
    assert phase(h) is Phase.BETTING
    wider = ProgressiveBetOptions("fortune", seed=1000, contribution_bps=2000, wager=2 * WAGER)
    h.apply(ChangeConfig(replace(_config(), side_bets=((PROGRESSIVE, wider),))))
    assert h.state.config.limits(PROGRESSIVE) == (2 * WAGER, 2 * WAGER)  # applied at once
    h.apply(Rebet("p0"))
    p0 = h.state.seats[0]
    assert p0 is not None
    assert (p0.bet, p0.side) == (100, (("bonus", 5),))
