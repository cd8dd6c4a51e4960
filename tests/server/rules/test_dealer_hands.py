"""The dealer's hands of the commission-free tables (docs/RULES.md, "Commission-free
tables"): a queen-high pai gow, a nine-high low hand, and which of them pushes the main
bet under each ``commission_free`` rule."""

from __future__ import annotations

import random
from itertools import combinations

import pytest

from server.rules.cards import JOKER, make_card, parse_cards
from server.rules.dealer_hands import is_nine_high_low, is_queen_high_pai_gow, pushes_main_bet
from server.rules.houseways import house_way
from server.rules.options import CommissionFree, HouseWay
from server.rules.values import Category, best_high_value, category_of, high_value, ranks_of


@pytest.mark.parametrize(
    ("hand", "queen_high"),
    [
        ("Qs Td 8c 7h 5s 3d 2c", True),
        ("Qs Jd 9c 8h 6s 4d 3c", True),  # J-9-8 with a gap: no straight
        ("Ks Td 8c 7h 5s 3d 2c", False),  # king-high
        ("Js Td 8c 7h 5s 3d 2c", False),  # jack-high
        ("Qs Qd 8c 7h 5s 3d 2c", False),  # a pair
        ("Qs Td 8c 7h 6s 5d 4c", False),  # 8-7-6-5-4: a straight
        ("Qs Ts 8s 7s 5s 3d 2c", False),  # five spades: a flush
        ("Qs Td 8c 7h 5s 3d JK", False),  # the joker is an ace
        ("Qs Td 9c 8h 5s 4d 3c", True),  # 10-9-8 and 5-4-3: no run of five
    ],
)
def test_a_queen_high_pai_gow(hand: str, queen_high: bool) -> None:
    assert is_queen_high_pai_gow(parse_cards(hand)) is queen_high


def test_a_queen_high_pai_gow_is_a_best_five_of_queen_high() -> None:
    # The definition as the Wizard of Odds words it ("the poker-value of the best
    # five-card hand is exactly a queen high"), checked on many hands against the
    # evaluator's best five of seven.
    rng = random.Random(40)
    seen = 0
    for _ in range(8_000):
        cards = rng.sample(range(53), 7)
        best = best_high_value(cards)
        expected = category_of(best) is Category.HIGH_CARD and ranks_of(best)[0] == 12
        assert is_queen_high_pai_gow(cards) is expected, cards
        seen += expected
    assert seen > 80  # about one hand in 57


@pytest.mark.parametrize(
    ("low", "nine_high"),
    [
        ("9s 2d", True),
        ("8c 9h", True),
        ("9s 9d", False),  # a pair of nines
        ("Ts 2d", False),
        ("8s 7d", False),
        ("9s JK", False),  # the joker is an ace in the low hand
    ],
)
def test_a_nine_high_low(low: str, nine_high: bool) -> None:
    assert is_nine_high_low(parse_cards(low)) is nine_high


def test_each_rule_pushes_on_its_own_hand_only() -> None:
    queen_high = parse_cards("Qs Td 8c 7h 5s 3d 2c")
    qh_low = parse_cards("Td 8c")  # as a house way sets it: the 2nd and 3rd cards
    nine_low = parse_cards("As Ks Kd 7c 4h 9s 2d")
    nl_low = parse_cards("9s 2d")
    assert pushes_main_bet(CommissionFree.EZ, queen_high, qh_low)
    assert not pushes_main_bet(CommissionFree.NINE_LOW, queen_high, qh_low)
    assert pushes_main_bet(CommissionFree.NINE_LOW, nine_low, nl_low)
    assert not pushes_main_bet(CommissionFree.EZ, nine_low, nl_low)
    for cards, low in ((queen_high, qh_low), (nine_low, nl_low)):
        assert not pushes_main_bet(CommissionFree.NONE, cards, low)
    assert JOKER == 52


@pytest.mark.parametrize("way", list(HouseWay))
def test_the_dealer_s_set_high_hand_is_queen_high_exactly_on_a_queen_high_pai_gow(
    way: HouseWay,
) -> None:
    # docs/RULES.md, "Commission-free tables": the rule cards' seven cards and the
    # Wizard of Odds' high hand name the same hands under this server's house ways.
    def queen_high_behind(cards: list[int]) -> bool:
        value = high_value(house_way(cards, way).high)
        return category_of(value) is Category.HIGH_CARD and ranks_of(value)[0] == 12

    rng = random.Random(41)
    for _ in range(10_000):
        cards = rng.sample(range(53), 7)
        assert queen_high_behind(cards) is is_queen_high_pai_gow(cards), cards
    # And every queen-high pai gow's ranks (in suits dealt in turn: no flush).
    for ranks in combinations(range(2, 12), 6):
        cards = [make_card(r, i % 4) for i, r in enumerate((*ranks, 12))]
        assert queen_high_behind(cards) is is_queen_high_pai_gow(cards), cards
