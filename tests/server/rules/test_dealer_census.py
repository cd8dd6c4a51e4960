"""The dealer's census (docs/RULES.md, "The math, checked"): counted by rank multisets
and flush hands, it is what setting every hand of a cut-down deck gives; its queen-high
pai gows are what counting them from first principles gives; and the full deck's counts
are the ones checked in, whose side-bet edges are beside the published figures."""

from __future__ import annotations

from itertools import combinations
from math import comb

import pytest

from server.rules.cards import JOKER, make_card
from server.rules.dealer_census import KNOWN, DealerCensus, dealer_census
from server.rules.dealer_hands import is_nine_high_low, is_queen_high_pai_gow
from server.rules.edges import queens_dragon_edge, tiger9_edge
from server.rules.houseways import house_way
from server.rules.options import HouseWay
from server.rules.values import WheelRank


def every_hand(ranks: tuple[int, ...], way: HouseWay) -> DealerCensus:
    deck = [make_card(r, s) for r in ranks for s in range(4)] + [JOKER]
    hands = queen_high = nine_low = both = 0
    for cards in combinations(deck, 7):
        q = is_queen_high_pai_gow(cards)
        n = is_nine_high_low(house_way(cards, way).low)
        hands += 1
        queen_high += q
        nine_low += n
        both += q and n
    return DealerCensus(hands, queen_high, nine_low, both)


@pytest.mark.parametrize(
    ("ranks", "way"),
    [((4, 7, 9, 11, 14), HouseWay.PARTY), ((2, 5, 8, 9, 13), HouseWay.PAIR_CLASSES)],
)
def test_the_census_of_a_cut_down_deck_is_every_hand_of_it(
    ranks: tuple[int, ...], way: HouseWay
) -> None:
    counted = dealer_census(way, WheelRank.SECOND, ranks)
    assert counted == every_hand(ranks, way)
    assert counted.hands == comb(21, 7)
    assert counted.nine_low > 0  # the deck can make what is counted


def test_the_queen_high_pai_gows_from_first_principles() -> None:
    # Seven ranks of 2..Q holding the queen with no five in a row, in any suits but
    # five or more of one: 4^7 less 4 x (C(7,5) x 3^2 + C(7,6) x 3 + 1) patterns.
    rank_sets = [
        s
        for s in combinations(range(2, 12), 6)
        if not any(all(r + k in (*s, 12) for k in range(5)) for r in (*s, 12))
    ]
    suits = 4**7 - 4 * (comb(7, 5) * 9 + comb(7, 6) * 3 + 1)
    assert (len(rank_sets), suits) == (175, 15_540)
    for census in KNOWN.values():
        assert census.queen_high == len(rank_sets) * suits
        assert census.hands == comb(53, 7)


def test_the_side_bets_exact_edges_beside_the_published_figures() -> None:
    census = KNOWN[HouseWay.PARTY, WheelRank.SECOND]
    # A queen-high pai gow "about one time in 58 hands" (paigowonline.com.au, "EZ Pai
    # Gow"): exactly one in 56.68. "About" is the page's; two hands in 58 (3.5 %) is
    # the rounding it can mean, and the Queen's Dragon's edge below pins it.
    assert census.hands / census.queen_high == pytest.approx(56.68, abs=0.01)
    assert abs(census.hands / census.queen_high - 58) < 2
    # The Queen's Dragon at 50 to 1: "just over 10 percent" (the same page).
    dragon = queens_dragon_edge(50)
    assert float(dragon) == pytest.approx(0.100222, abs=1e-6)
    assert 0.10 < dragon < 0.105
    # The Tiger 9 at 30 to 1: 22.48 % under the Trump Plaza house way (the Wizard of
    # Odds, "Commission Free Pai Gow Poker"; its hit rate 0.025007), 17.5 % under the
    # Four Queens way (the Shuffle Master math report it cites). The low hand is the
    # house way's choice, so each of ours is checked against the published way it sets
    # most alike: pair-classes within 0.05 points of Trump Plaza's, party within one
    # point of Four Queens'.
    pair_classes = tiger9_edge(HouseWay.PAIR_CLASSES, WheelRank.SECOND, 30)
    party = tiger9_edge(HouseWay.PARTY, WheelRank.SECOND, 30)
    assert float(pair_classes) == pytest.approx(0.224996, abs=1e-6)
    assert abs(pair_classes - 0.2248) < 0.0005
    assert float(party) == pytest.approx(0.167751, abs=1e-6)
    assert abs(party - 0.175) < 0.01


@pytest.mark.slow
@pytest.mark.parametrize("way", list(HouseWay))
def test_the_full_deck_s_census_is_the_one_checked_in(way: HouseWay) -> None:
    # Some twenty seconds a house way: the counts docs/RULES.md and the edges use.
    assert dealer_census(way, WheelRank.SECOND) == KNOWN[way, WheelRank.SECOND]
