"""The bonus side bet's classes and pay tables, and the best category of seven cards."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.rules.bonus import (
    DEFAULT_PAY_TABLE,
    PAY_TABLES,
    BonusClass,
    PayTable,
    PayTableError,
    bonus_payout,
    classify,
    classify_bonus,
    pay_table,
)
from server.rules.cards import JOKER, make_card, parse_cards, rank_of, suit_of
from server.rules.options import RuleOptions
from server.rules.values import Category, best_high_value, category_of, high_value

B = BonusClass

CASES = [
    # natural 7-card straight flush, ace high and ace low
    ("8s 9s Ts Js Qs Ks As", B.NATURAL_SEVEN_CARD_STRAIGHT_FLUSH),
    ("As 2s 3s 4s 5s 6s 7s", B.NATURAL_SEVEN_CARD_STRAIGHT_FLUSH),
    ("3d 4d 5d 6d 7d 8d 9d", B.NATURAL_SEVEN_CARD_STRAIGHT_FLUSH),
    # royal flush with a suited K-Q beside it; the royal may use the joker
    ("As Ks Qs Js Ts Kh Qh", B.ROYAL_FLUSH_WITH_ROYAL_MATCH),
    ("As JK Qs Js Ts Kh Qh", B.ROYAL_FLUSH_WITH_ROYAL_MATCH),
    # 7-card straight flush completed by the joker (beats the royal it contains)
    ("3h 4h 5h JK 7h 8h 9h", B.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER),
    ("JK 9d Td Jd Qd Kd Ad", B.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER),
    ("As 2s JK 4s 5s 6s 7s", B.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER),
    ("9c 8c 7c 6c 5c 4c JK", B.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER),
    ("As Ah Ad Ac JK 7d 2c", B.FIVE_ACES),
    ("As Ks Qs Js Ts 4d 2c", B.ROYAL_FLUSH),
    ("JK Ks Qs Js Ts 4d 2c", B.ROYAL_FLUSH),
    ("As Ks Qs Js Ts Kh Qd", B.ROYAL_FLUSH),  # K-Q not suited: no match
    ("As Ks Qs Js Ts JK Qh", B.ROYAL_FLUSH),  # the joker never makes the match
    ("9h 8h 7h 6h 5h Kc 2d", B.STRAIGHT_FLUSH),
    ("9h JK 7h 6h 5h Kc 2d", B.STRAIGHT_FLUSH),
    ("Ac 2c 3c 4c 5c Kd 9h", B.STRAIGHT_FLUSH),
    ("2c 3c 4c 5c JK Kd 9h", B.STRAIGHT_FLUSH),
    ("9s 8s 7s 6s 5s 4s Kd", B.STRAIGHT_FLUSH),  # six in sequence is not seven
    ("9s 9h 9d 9c Kd 4h 2c", B.FOUR_OF_A_KIND),
    ("As Ah Ad JK Kd 4h 2c", B.FOUR_OF_A_KIND),  # the joker as the fourth ace
    ("Ks Kh Kd 4c 4h 9s 2c", B.FULL_HOUSE),
    ("Ks Kh Kd As JK 9s 2c", B.FULL_HOUSE),  # the joker pairs the ace
    ("Ks Kh Kd 4c 4h 4s 2c", B.FULL_HOUSE),  # two sets
    ("Ks 9s 7s 4s 2s Qh 3d", B.FLUSH),
    ("Ks 9s 7s 4s JK Qh 3d", B.FLUSH),
    ("Ks 9s 7s 4s 2s 6s 3d", B.FLUSH),
    ("7s 7h 7d Kc 9h 4s 2c", B.THREE_OF_A_KIND),
    ("As Ad JK Kc 9h 4s 2c", B.THREE_OF_A_KIND),
    ("5s 5h 5d 6c 7h 8s 9c", B.THREE_OF_A_KIND),  # pays before the straight it also holds
    ("9s 8h 7d 6c 5h Ks 2c", B.STRAIGHT),
    ("9s 8h JK 6c 5h Ks 2c", B.STRAIGHT),
    ("As 2h 3d 4c 5h Ks 9c", B.STRAIGHT),
    ("JK 2h 3d 4c 5h Ks 9c", B.STRAIGHT),
    ("9s 9h 8d 7c 6h 5s 2c", B.STRAIGHT),
    ("Ks Kh 9d 9c 4h 4s 2c", B.THREE_PAIR),
    ("As JK 9d 9c 4h 4s 2c", B.THREE_PAIR),
    ("Ks Kh 9d 9c 4h 7s 2c", B.NOTHING),
    ("As Kh 9d 7c 4h 3s 2c", B.NOTHING),
    ("JK Kh 9d 7c 4h 3s 2c", B.NOTHING),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_bonus_class(text: str, expected: BonusClass) -> None:
    assert classify_bonus(parse_cards(text, 7)) is expected


def test_every_class_has_a_case() -> None:
    assert {expected for _, expected in CASES} == set(BonusClass)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("As Ah Ad Ac JK 7d 2c", Category.FIVE_ACES),
        ("JK Ks Qs Js Ts 4d 2c", Category.ROYAL_FLUSH),
        ("9h JK 7h 6h 5h Kc 2d", Category.STRAIGHT_FLUSH),
        ("As Ah Ad JK Kd 4h 2c", Category.FOUR_OF_A_KIND),
        ("Ks Kh Kd As JK 9s 2c", Category.FULL_HOUSE),
        ("Ks 9s 7s 4s JK Qh 3d", Category.FLUSH),
        ("5s 5h 5d 6c 7h 8s 9c", Category.STRAIGHT),  # a straight outranks the set
        ("As Ad JK Kc 9h 4s 2c", Category.THREE_OF_A_KIND),
        ("Ks Kh 9d 9c 4h 4s 2c", Category.TWO_PAIR),
        ("JK Kh 9d 7c 4h 3s 2c", Category.HIGH_CARD),  # the joker pairs only an ace
        ("Ks Qh 9d 7c 4h 3s 2c", Category.HIGH_CARD),
    ],
)
def test_classify(text: str, expected: Category) -> None:
    assert classify(parse_cards(text, 7)) is expected


@pytest.mark.parametrize("bad", [(1, 2, 3, 4, 5, 6), (1, 1, 2, 3, 4, 5, 6), (1, 2, 3, 4, 5, 6, 53)])
def test_bad_hands_are_refused(bad: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="seven"):
        classify_bonus(bad)
    with pytest.raises(ValueError, match="seven"):
        classify(bad)


# --- references: every 5-card subset, evaluated by server.rules.values ---------------------


def reference_bonus(cards: tuple[int, ...]) -> BonusClass:
    """The bonus class by brute force over the 21 five-card subsets and the 21 low pairs."""
    cats = {category_of(high_value(five)) for five in combinations(cards, 5)}
    naturals = [c for c in cards if c != JOKER]
    joker = JOKER in cards
    ranks = {rank_of(c) for c in naturals}
    windows = [set(range(low, low + 7)) for low in range(2, 9)] + [{14, 2, 3, 4, 5, 6, 7}]
    if len({suit_of(c) for c in naturals}) == 1 and any(ranks <= w for w in windows):
        return (
            B.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER if joker else B.NATURAL_SEVEN_CARD_STRAIGHT_FLUSH
        )
    for low in combinations(cards, 2):
        if JOKER in low or suit_of(low[0]) != suit_of(low[1]):
            continue
        if {rank_of(low[0]), rank_of(low[1])} == {13, 12}:
            high = [c for c in cards if c not in low]
            if category_of(high_value(high)) is Category.ROYAL_FLUSH:
                return B.ROYAL_FLUSH_WITH_ROYAL_MATCH
    for category, cls in [
        (Category.FIVE_ACES, B.FIVE_ACES),
        (Category.ROYAL_FLUSH, B.ROYAL_FLUSH),
        (Category.STRAIGHT_FLUSH, B.STRAIGHT_FLUSH),
        (Category.FOUR_OF_A_KIND, B.FOUR_OF_A_KIND),
        (Category.FULL_HOUSE, B.FULL_HOUSE),
        (Category.FLUSH, B.FLUSH),
        (Category.THREE_OF_A_KIND, B.THREE_OF_A_KIND),
        (Category.STRAIGHT, B.STRAIGHT),
    ]:
        if category in cats:
            return cls
    counts = [sum(1 for c in naturals if rank_of(c) == r) + (joker and r == 14) for r in ranks]
    if joker and 14 not in ranks:
        counts.append(1)
    return B.THREE_PAIR if counts.count(2) == 3 else B.NOTHING


hands = st.lists(st.integers(0, 52), min_size=7, max_size=7, unique=True).map(tuple)
# Few ranks and suits, so straight flushes, royals and matches are common.
_RICH = [make_card(r, s) for r in (8, 9, 10, 11, 12, 13, 14) for s in (1, 3)] + [JOKER, 0]
rich_hands = st.lists(st.sampled_from(_RICH), min_size=7, max_size=7, unique=True).map(tuple)


@settings(max_examples=400)
@given(st.one_of(hands, rich_hands))
def test_classify_bonus_matches_brute_force(cards: tuple[int, ...]) -> None:
    assert classify_bonus(cards) is reference_bonus(cards)


@settings(max_examples=400)
@given(st.one_of(hands, rich_hands))
def test_classify_matches_best_of_21(cards: tuple[int, ...]) -> None:
    assert classify(cards) is category_of(best_high_value(cards))


# --- pay tables ----------------------------------------------------------------------------


def test_standard_table() -> None:
    table = pay_table("standard")
    assert DEFAULT_PAY_TABLE == RuleOptions().bonus_pay_table == "standard"
    odds = [table.odds_of(c) for c in BonusClass]
    assert odds == [8000, 2000, 1000, 400, 150, 50, 25, 5, 4, 3, 2, 0, 0]


def test_alternative_table_is_selectable() -> None:
    table = pay_table("jackpot-5000")
    assert table.odds_of(B.NATURAL_SEVEN_CARD_STRAIGHT_FLUSH) == 5000
    assert bonus_payout(parse_cards("As 2s 3s 4s 5s 6s 7s"), 2, "jackpot-5000") == 2 * 5001
    assert bonus_payout(parse_cards("As 2s 3s 4s 5s 6s 7s"), 2) == 2 * 8001


def test_payout_in_chips() -> None:
    table = pay_table("standard")
    assert table.payout(B.FLUSH, 10) == 50  # 4 to 1: the bet back and 40
    assert table.net(B.FLUSH, 10) == 40
    assert table.payout(B.THREE_PAIR, 10) == 0
    assert table.net(B.NOTHING, 10) == -10
    assert bonus_payout(parse_cards("Ks Kh Kd 4c 4h 9s 2c"), 7) == 42
    with pytest.raises(ValueError, match="bet"):
        table.payout(B.FLUSH, -1)


def test_unknown_table_names_itself() -> None:
    with pytest.raises(PayTableError, match="'nope'"):
        pay_table("nope")
    assert set(PAY_TABLES) >= {"standard", "jackpot-5000"}


def test_tables_are_frozen_data() -> None:
    table = pay_table("standard")
    with pytest.raises(TypeError):
        table.odds[B.FLUSH] = 99  # type: ignore[index]


def test_table_may_not_pay_a_class_more_than_a_better_one() -> None:
    with pytest.raises(PayTableError, match="straight pays more"):
        PayTable("bad", {B.THREE_OF_A_KIND: 2, B.STRAIGHT: 3})
    with pytest.raises(PayTableError, match="nothing"):
        PayTable("bad", {B.NOTHING: 1})
    assert PayTable("ok", {B.THREE_PAIR: 1}).payout(B.THREE_PAIR, 5) == 10
