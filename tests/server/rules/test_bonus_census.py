"""The bonus census: exact counts of every bonus class over the deck's seven-card hands,
checked hand by hand on decks cut down to a few ranks, by closed forms on the whole
deck, and against the published return of the Fortune pay table (docs/RULES.md, "The
math, checked")."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import combinations
from math import comb

import pytest

from server.rules.bonus import BonusClass, classify_bonus_unchecked, pay_table
from server.rules.bonus_census import bonus_census, bonus_return, deck_size
from server.rules.cards import JOKER, make_card
from server.rules.edges import bonus_edge

B = BonusClass


def every_hand(ranks: tuple[int, ...]) -> dict[BonusClass, int]:
    """The census from first principles: every seven cards of the deck, one by one, each
    classified (the classifier is checked against a brute force of its own in
    test_bonus.py)."""
    deck = [make_card(r, s) for r in ranks for s in range(4)] + [JOKER]
    counts = Counter(map(classify_bonus_unchecked, combinations(deck, 7)))
    return {cls: counts[cls] for cls in BonusClass}


@pytest.mark.parametrize(
    ("ranks", "shown"),
    [
        ((2, 3, 4), B.FOUR_OF_A_KIND),  # 13 cards: sets, fours; no flush of five
        ((10, 11, 12, 13, 14), B.ROYAL_FLUSH_WITH_ROYAL_MATCH),  # 116,280 hands
        ((2, 3, 4, 5, 14), B.STRAIGHT_FLUSH),  # the wheel
    ],
)
def test_the_census_of_a_small_deck_is_the_count_of_its_hands(
    ranks: tuple[int, ...], shown: BonusClass
) -> None:
    counted = bonus_census(ranks)
    assert sum(counted.values()) == comb(deck_size(ranks), 7)
    assert counted[shown] > 0
    assert counted == every_hand(ranks)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("ranks", "shown"),
    [
        # 25 cards, 480,700 hands: six suited cards in a row and the joker.
        ((9, 10, 11, 12, 13, 14), B.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER),
        # 29 cards, 1,560,780 hands: seven suited cards in a row.
        ((8, 9, 10, 11, 12, 13, 14), B.NATURAL_SEVEN_CARD_STRAIGHT_FLUSH),
    ],
)
def test_the_census_of_a_deck_of_six_or_seven_ranks_is_the_count_of_its_hands(
    ranks: tuple[int, ...], shown: BonusClass
) -> None:
    counted = bonus_census(ranks)
    assert counted[shown] > 0
    assert counted == every_hand(ranks)


def test_the_whole_deck_adds_up_and_meets_the_closed_forms() -> None:
    census = bonus_census()
    assert sum(census.values()) == comb(53, 7) == 154_143_080
    # Seven suited cards in a row: windows A-7 up to 8-A, 8 of them, in 4 suits.
    assert census[B.NATURAL_SEVEN_CARD_STRAIGHT_FLUSH] == 8 * 4
    # A royal flush and a suited king-queen of another suit (the flush suit's own king
    # and queen are in the royal): natural royals 4 x 3 suits, and royals with the
    # joker in any of the 5 places 4 x 5 x 3.
    assert census[B.ROYAL_FLUSH_WITH_ROYAL_MATCH] == 4 * 3 + 4 * 5 * 3
    # Six suited ranks in one 7-window and the joker: 8 windows x 7 ranks left out,
    # less the 7 runs of six that lie in two windows; 4 suits.
    assert census[B.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER] == (8 * 7 - 7) * 4
    # Four aces, the joker and any two of the other 48 cards (no royal flush fits).
    assert census[B.FIVE_ACES] == comb(48, 2)


def test_the_bonus_return_is_the_pay_table_weighted_by_the_census() -> None:
    census = {B.FLUSH: 1, B.STRAIGHT: 1, B.NOTHING: 2}
    # A flush returns 1 + 4, a straight 1 + 2, nothing 0: 8 chips for 4 bet.
    assert bonus_return(census, pay_table("standard")) == Fraction(8, 4)
    with pytest.raises(ValueError, match="empty"):
        bonus_return({}, pay_table("standard"))


def test_the_fortune_pay_table_returns_the_published_figure() -> None:
    # The Wizard of Odds, "Fortune Pai Gow": the pay table 8000-2000-1000-400-150-50-
    # 25-5-4-3-2 has a house edge of 7.77 %, given to two decimals; ours is exact.
    edge = bonus_edge(pay_table("standard"))
    assert abs(float(edge) - 0.0777) <= 0.00005
    # The table with a smaller top prize pays 3,000 less on each of the 32 hands.
    lower = bonus_edge(pay_table("jackpot-5000"))
    assert lower - edge == Fraction(3000 * 32, comb(53, 7))
