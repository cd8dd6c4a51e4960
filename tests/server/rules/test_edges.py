"""The main bet's house edge at a bet size, from the simulator's counts, and beside the
published figure (docs/RULES.md, "The math, checked")."""

from __future__ import annotations

import hashlib
from math import sqrt

import pytest

from server.rules.bonus import pay_table
from server.rules.edges import Z_95, main_edge
from server.rules.options import CommissionRounding, HouseWay, RuleOptions
from server.rules.sim import SimResult, simulate

UP = RuleOptions(commission_rounding=CommissionRounding.UP)
DOWN = RuleOptions()


def counts(wins: int, pushes: int, losses: int) -> SimResult:
    return SimResult(
        rounds=wins + pushes + losses,
        wins=wins,
        pushes=pushes,
        losses=losses,
        player_way=HouseWay.PARTY,
        dealer_way=HouseWay.PARTY,
        commission_pct=5,
        pay_table=pay_table("standard"),
    )


def test_the_edge_at_a_bet_is_its_commission_s_share_of_the_wins() -> None:
    result = counts(30, 40, 30)
    # Exactly 5 %: a win keeps 0.95 of the bet.
    exact = main_edge(result, None, DOWN)
    assert (exact.bet, exact.commission) == (None, None)
    assert exact.edge == pytest.approx((30 - 30 * 0.95) / 100)
    # A bet of 10 rounded down pays no commission: the edge is the losses' excess.
    small = main_edge(result, 10, DOWN)
    assert (small.commission, small.edge) == (0, 0.0)
    # Rounded up it pays 1 chip, 10 % of the win.
    up = main_edge(result, 10, UP)
    assert up.commission == 1
    assert up.edge == pytest.approx((30 - 30 * 0.9) / 100)
    # At a multiple of 20 every rounding is exact.
    assert main_edge(result, 40, UP).edge == pytest.approx(exact.edge)
    assert main_edge(result, 40, DOWN).edge == pytest.approx(exact.edge)


def test_the_interval_is_the_normal_one_of_the_per_round_results() -> None:
    result = counts(30, 40, 30)
    m = main_edge(result, 10, DOWN)  # results +1, 0, -1: mean 0
    variance = (30 + 30) / 100 * 100 / 99  # the sample variance of those 100 results
    assert m.half_width == pytest.approx(Z_95 * sqrt(variance / 100))
    assert m.rounds == 100
    with pytest.raises(ValueError, match="two rounds"):
        main_edge(counts(1, 0, 0), None, DOWN)
    with pytest.raises(ValueError, match="positive"):
        main_edge(result, 0, DOWN)


@pytest.mark.slow
def test_the_house_way_s_edge_is_near_the_published_figure() -> None:
    # The Wizard of Odds, "Pai Gow Poker": a player who sets every hand by a casino's
    # house way, against a banking dealer who does the same, gives the house about
    # 2.7 % (5 % commission). Our house ways are not that casino's, so the allowance is
    # three standard errors of the simulation and 0.3 points for the way; a missing
    # commission (1.3 %), copies to the player or swapped halves fall far outside it.
    result = simulate(hashlib.sha256(b"test_edges").digest(), 100_000, HouseWay.PARTY)
    exact = main_edge(result, None, DOWN)
    assert abs(exact.edge - 0.027) <= exact.half_width / Z_95 * 3 + 0.003, exact
    # The rounding at a table minimum moves it by the commission given or taken.
    assert main_edge(result, 10, DOWN).edge < exact.edge < main_edge(result, 10, UP).edge
