"""Hand values: every example of the published rule pages, the joker's edge cases, and
properties (docs/RULES.md, "The joker" and "Ranking")."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.rules.cards import JOKER, parse_cards, rank_of, suit_of
from server.rules.values import (
    Category,
    WheelRank,
    best_high_value,
    category_of,
    high_name,
    high_value,
    low_name,
    low_value,
    pack,
    ranks_of,
)


def hv(text: str, wheel: WheelRank = WheelRank.SECOND) -> int:
    return high_value(parse_cards(text, 5), wheel)


def lv(text: str) -> int:
    return low_value(parse_cards(text, 2))


def cat(text: str) -> Category:
    return category_of(hv(text))


# --- the PartyCasino rules -----------------------------------------------------------


def test_party_five_aces_is_the_best_hand() -> None:
    # "la main de cinq cartes la plus haute est ... cinq As (quatre As et un joker)"
    assert cat("As Ah Ad Ac JK") is Category.FIVE_ACES
    assert hv("As Ah Ad Ac JK") > hv("As Ks Qs Js Ts")


def test_party_best_straights() -> None:
    # "Viennent ensuite les quintes As, R, D, V, 10 et la quinte As, 2, 3, 4, 5."
    broadway, wheel, king = hv("As Kd Qc Jh Ts"), hv("As 2d 3c 4h 5s"), hv("Ks Qd Jc Th 9s")
    assert broadway > wheel > king
    assert high_name(wheel) == "Straight, five high"


def test_party_higher_ranks_then_kickers() -> None:
    # "trois Rois battent trois Valets"; "deux Valets avec un As battent deux Valets
    # avec un Roi"; "La couleur des cartes n'est pas prise en compte".
    assert hv("Ks Kd Kc 4h 2s") > hv("Js Jd Jc Ah Ks")
    assert hv("Js Jd Ac 4h 2s") > hv("Jh Jc Kc 4d 2c")
    assert hv("Js Jd Ac 4h 2s") == hv("Jh Jc Ad 4c 2d")


def test_party_joker_takes_the_highest_straight_rank() -> None:
    # "joker, 6, 5, 4, 3 ... le joker se substituera donc à un 7 et non pas à un 2"
    value = hv("JK 6s 5d 4c 3h")
    assert high_name(value) == "Straight, seven high"
    assert value == hv("7s 6s 5d 4c 3h")


def test_party_low_hands() -> None:
    # "la main de deux cartes la plus haute est une paire d'As"; "une paire de Rois
    # l'emporte sur une paire de Dames"; the higher odd card decides next.
    assert lv("As Ad") == max(low_value(p) for p in combinations(range(53), 2))
    assert lv("Ks Kd") > lv("Qs Qd")
    assert lv("As 3d") > lv("Ks Qd")
    assert lv("Ks Qd") == lv("Kh Qc")  # a copy


# --- the "Règles du Pai Gow" page ----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("Ah As Ad Ac JK", Category.FIVE_ACES),
        ("Ah Kh Qh Jh Th", Category.ROYAL_FLUSH),
        ("8d 7d 6d 5d 4d", Category.STRAIGHT_FLUSH),
        ("Th Ts Tc Td 3c", Category.FOUR_OF_A_KIND),  # the seed shows only the four tens
        ("Js Jd Jc 7h 7s", Category.FULL_HOUSE),
        ("Kh Qd Jc Ts 9c", Category.STRAIGHT),
        ("Jc Jh Js Kh 2c", Category.THREE_OF_A_KIND),
        ("Th Tc 2h 2s Qc", Category.TWO_PAIR),
        ("Kc Kh 2d Js 5c", Category.PAIR),
    ],
)
def test_regles_page_examples(text: str, category: Category) -> None:
    assert cat(text) is category


def test_regles_page_flush_example_of_six_cards() -> None:
    # "5(Trèfle), 10(Trèfle), K(Trèfle), V(Trèfle), 8(Trèfle), 2(Trèfle)": six clubs.
    best = best_high_value(parse_cards("5c Tc Kc Jc 8c 2c"))
    assert category_of(best) is Category.FLUSH
    assert ranks_of(best) == (13, 11, 10, 8, 5)


def test_regles_page_five_aces_beat_the_ace_high_straight_flush() -> None:
    assert hv("Ah As Ad Ac JK") > hv("Ah Kh Qh Jh Th")


def test_regles_page_jacks_or_better_does_not_apply() -> None:
    # docs/RULES.md, "Ranking": "jacks or better" is a video-poker rule; twos are a pair.
    assert cat("2c 2h 9d Js 5c") is Category.PAIR
    assert hv("2c 2h 9d Js 5c") > hv("Ac Kh 9d Js 5c")


# --- the "Le Tirage" page ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "category", "name"),
    [
        ("As Ah Ad Ac JK", Category.FIVE_ACES, "Five aces"),
        ("Ad Kd Qd Jd Td", Category.ROYAL_FLUSH, "Royal flush"),
        ("Th 9h 8h 7h 6h", Category.STRAIGHT_FLUSH, "Straight flush, ten high"),
        ("5s 5h 5d 5c 2s", Category.FOUR_OF_A_KIND, "Four fives"),
        ("Ks Kh Kd 4c 4s", Category.FULL_HOUSE, "Full house, kings over fours"),
        ("Kc Jc 9c 6c 3c", Category.FLUSH, "Flush, king high"),
        ("5s 4h 3d 2c As", Category.STRAIGHT, "Straight, five high"),
        ("9s 9h 9d Ac 8s", Category.THREE_OF_A_KIND, "Three nines"),
        ("4s 4h Jd Jc As", Category.TWO_PAIR, "Two pair, jacks and fours"),
        ("8s 4h Jd Jc As", Category.PAIR, "Pair of jacks"),
        ("As Kh 9d 6c 3s", Category.HIGH_CARD, "Ace high"),
    ],
)
def test_tirage_page_examples(text: str, category: Category, name: str) -> None:
    value = hv(text)
    assert category_of(value) is category
    assert high_name(value) == name


def test_tirage_page_wheel_straight_flush_is_second() -> None:
    # "la quinte As,2,3,4,5 est la plus haute quinte" (after the royal), and "uniquement
    # la quinte royale As,R,D,V,10 est supérieure à la quinte 5,4,3,2,As".
    assert hv("Ad Kd Qd Jd Td") > hv("5h 4h 3h 2h Ah") > hv("Kc Qc Jc Tc 9c")
    assert hv("As Kd Qc Jh Ts") > hv("5s 4h 3d 2c As") > hv("Ks Qd Jc Th 9s")


def test_tirage_page_low_hands() -> None:
    # "Exemple: 8, 8" is a pair; "A, Q bat A, J".
    assert category_of(lv("8s 8h")) is Category.PAIR
    assert low_name(lv("8s 8h")) == "Pair of eights"
    assert lv("As Qd") > lv("Ah Jc")
    assert low_name(lv("As Qd")) == "Ace-queen"


# --- the "donneur" page --------------------------------------------------------------


def test_donneur_page_joker_makes_a_pair_of_aces() -> None:
    # "vous pouvez utiliser « le joker » pour faire une paire « d'As »"
    assert lv("JK As") == lv("Ac Ad")
    assert low_name(lv("JK As")) == "Pair of aces"
    assert low_name(lv("JK Kd")) == "Ace-king"


def test_donneur_page_wheel_is_the_second_straight() -> None:
    # "Un « As », deux, trois, quatre et cinq est la seconde suite la plus forte."
    straights = sorted(
        {hv(t) for t in ("As Kd Qc Jh Ts", "As 2d 3c 4h 5s", "Ks Qd Jc Th 9s", "6s 5d 4c 3h 2s")},
        reverse=True,
    )
    assert straights[1] == hv("As 2d 3c 4h 5s")


def test_wheel_lowest_option() -> None:
    assert hv("As 2d 3c 4h 5s", WheelRank.LOWEST) < hv("6s 5d 4c 3h 2s", WheelRank.LOWEST)


# --- the joker's edge cases ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("As Ah Ad Ac JK", "Five aces"),
        ("JK 2d 3c 4h 5s", "Straight, five high"),  # as the ace: the second-best straight
        ("As 2d 3c JK 5s", "Straight, five high"),  # completing the wheel
        ("As Ks Qs Js JK", "Royal flush"),
        ("As Ks Qs JK Ts", "Royal flush"),
        ("JK 5h 4h 3h 2h", "Straight flush, five high"),
        ("JK 9h 8h 7h 6h", "Straight flush, ten high"),
        ("As 9s 7s 4s JK", "Flush, ace high"),  # its ace present, the joker is the king
        ("Ks Qs 9s 4s JK", "Flush, ace high"),
        ("As Ks Qs 4s JK", "Flush, ace high"),  # A, K, Q present: the joker is the jack
        ("Ks Kd Kc JK 2s", "Three kings"),  # never a wild king
        ("Ks Kd JK 7c 2s", "Pair of kings"),  # a king pair with an ace kicker
        ("As Ad JK 7c 2s", "Three aces"),
        ("As Ad Ac JK 2s", "Four aces"),
        ("As Ad Kc Kh JK", "Full house, aces over kings"),
        ("Ks Kd Qc Qh JK", "Two pair, kings and queens"),  # not a full house
        ("JK Qd Jc Th 9s", "Straight, king high"),
        ("JK Kd Jc Th 9s", "Straight, king high"),
        ("JK Kd Qc Th 9s", "Straight, king high"),
        ("JK Kd 7c 4h 2s", "Ace high"),
    ],
)
def test_joker(text: str, name: str) -> None:
    assert high_name(hv(text)) == name


def test_joker_in_flush_takes_the_highest_missing_rank() -> None:
    assert ranks_of(hv("As Ks Qs 4s JK")) == (14, 13, 12, 11, 4)
    assert ranks_of(hv("As 9s 7s 4s JK")) == (14, 13, 9, 7, 4)


def test_joker_never_used_twice() -> None:
    # A pair of kings and the joker is a pair with an ace kicker, not trips; aces and
    # kings with the joker are a full house of aces, not four of anything.
    assert hv("Ks Kd JK 7c 2s") == hv("Ks Kd Ah 7c 2s")
    assert hv("As Ad Kc Kh JK") == hv("As Ad Ac Kc Kh")
    # Four to a straight flush with a pair: the joker fills only one role.
    assert cat("JK 9h 8h 7h 6h") is Category.STRAIGHT_FLUSH


# --- an independent reference evaluator ----------------------------------------------


def _natural_value(cards: list[int]) -> int:
    """Plain poker (wheel second) on five natural cards, or on rank 14 for a suitless joker."""
    ranks = [rank_of(c) if c >= 0 else 14 for c in cards]
    suits = {suit_of(c) if c >= 0 else -1 for c in cards}
    counts = Counter(ranks)
    order = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    distinct = set(ranks)
    top = None
    if len(distinct) == 5 and max(ranks) - min(ranks) == 4:
        top = 15 if max(ranks) == 14 else max(ranks)
    elif distinct == {14, 2, 3, 4, 5}:
        top = 14
    flush = len(suits) == 1
    if shape == [5]:
        return pack(Category.FIVE_ACES, [14])
    if flush and top == 15:
        return pack(Category.ROYAL_FLUSH)
    if flush and top:
        return pack(Category.STRAIGHT_FLUSH, [top])
    if shape == [4, 1]:
        return pack(Category.FOUR_OF_A_KIND, order)
    if shape == [3, 2]:
        return pack(Category.FULL_HOUSE, order)
    if flush:
        return pack(Category.FLUSH, order)
    if top:
        return pack(Category.STRAIGHT, [top])
    kind = {
        (3, 1, 1): Category.THREE_OF_A_KIND,
        (2, 2, 1): Category.TWO_PAIR,
        (2, 1, 1, 1): Category.PAIR,
    }.get(tuple(shape), Category.HIGH_CARD)
    return pack(kind, order)


_COMPLETES = {Category.STRAIGHT, Category.FLUSH, Category.STRAIGHT_FLUSH, Category.ROYAL_FLUSH}


def reference_value(cards: tuple[int, ...]) -> int:
    """docs/RULES.md's joker by brute force: an ace, or any card completing a straight/flush."""
    if JOKER not in cards:
        return _natural_value(list(cards))
    naturals = [c for c in cards if c != JOKER]
    best = _natural_value([*naturals, -1])  # the joker as an ace of no suit
    for card in range(52):
        if card not in naturals:
            value = _natural_value([*naturals, card])
            if category_of(value) in _COMPLETES:
                best = max(best, value)
    return best


five_cards = st.lists(st.integers(0, 52), min_size=5, max_size=5, unique=True).map(tuple)
with_joker = st.lists(st.integers(0, 51), min_size=4, max_size=4, unique=True).map(
    lambda cs: (*cs, JOKER)
)
# Cards from two suits and six ranks: flushes, straights and pairs are common.
narrow = st.lists(
    st.sampled_from([*(r * 4 + s for r in (0, 1, 2, 3, 9, 12) for s in (0, 1)), JOKER]),
    min_size=5,
    max_size=5,
    unique=True,
).map(tuple)
any_five = st.one_of(five_cards, with_joker, narrow)


@settings(max_examples=1000)
@given(any_five)
def test_value_matches_reference(cards: tuple[int, ...]) -> None:
    assert high_value(cards) == reference_value(cards)


@given(any_five, st.permutations(range(5)), st.permutations(range(4)))
def test_value_ignores_order_and_suits(
    cards: tuple[int, ...], order: list[int], suits: list[int]
) -> None:
    shuffled = tuple(cards[i] for i in order)
    relabelled = tuple(c if c == JOKER else (c & ~3) | suits[c & 3] for c in shuffled)
    assert high_value(shuffled) == high_value(cards) == high_value(relabelled)


@given(any_five, any_five, any_five)
def test_comparison_is_a_total_order_consistent_with_the_categories(
    a: tuple[int, ...], b: tuple[int, ...], c: tuple[int, ...]
) -> None:
    va, vb, vc = high_value(a), high_value(b), high_value(c)
    # Exactly one of <, ==, > holds, and < is transitive.
    assert (va < vb) + (va == vb) + (va > vb) == 1
    if va <= vb <= vc:
        assert va <= vc
    # A better category (the census's order) always wins; equal values are one hand.
    if category_of(va) > category_of(vb):
        assert va > vb
    if va == vb:
        assert category_of(va) == category_of(vb)
        assert high_name(va) == high_name(vb)


@given(
    st.lists(st.integers(0, 52), min_size=2, max_size=2, unique=True),
    st.lists(st.integers(0, 52), min_size=2, max_size=2, unique=True),
)
def test_low_values(a: list[int], b: list[int]) -> None:
    def key(cards: list[int]) -> tuple[int, list[int]]:
        ranks = sorted((14 if c == JOKER else rank_of(c) for c in cards), reverse=True)
        return (ranks[0] == ranks[1], ranks)

    assert (low_value(a) > low_value(b)) == (key(a) > key(b))
    assert (low_value(a) == low_value(b)) == (key(a) == key(b))


def test_high_and_low_values_compare_for_the_foul_test() -> None:
    # High and low share one layout, so a foul is a plain comparison.
    assert lv("As Ad") > hv("Ks Qd 9c 7d 2h")  # a pair behind no pair: foul
    assert lv("As Ad") > hv("2s 2d 9c 7d 3h")  # a higher pair in front: foul
    assert lv("As Ad") < hv("Ks Kd 2c 2h 3h")  # two pair behind: legal
    assert lv("Ks Qd") < hv("Kh Qc 9c 7d 3h")  # same top cards, more of them behind: legal
