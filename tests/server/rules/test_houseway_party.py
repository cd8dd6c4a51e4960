"""The PartyCasino rules' house way (``houseway_party``): every clause, the decisions,
properties (docs/RULES.md, "House way").

Each case gives seven cards and the two cards the house way must put in front ("en
avant"). Where several cards of a rank could go in front, the documented tie-break
keeps the lowest codes in front and the joker in the back.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.rules.cards import JOKER, parse_cards
from server.rules.houseway_party import set_hand
from server.rules.houseways import house_way
from server.rules.options import HouseWay
from server.rules.values import Category, WheelRank, category_of


def front(text: str) -> set[int]:
    split = set_hand(parse_cards(text, 7))
    assert sorted(split.high + split.low) == sorted(parse_cards(text))
    return set(split.low)


def check(hand: str, expected_front: str) -> None:
    assert front(hand) == set(parse_cards(expected_front, 2)), hand


# --- the pair clauses --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        # "Pas de paire - Place la seconde et la troisième carte la plus haute, en avant."
        ("As Kd 9c 7h 5s 3d 2c", "Kd 9c"),
        # Decision: a lone joker completing nothing is an ace: the highest card, kept back.
        ("JK Kd 9c 7h 5s 3d 2c", "Kd 9c"),
        # "Une paire - Place la paire en arrière et les deux cartes uniques les plus hautes"
        ("Qh Qd As 9c 7h 4s 2d", "As 9c"),
        # The joker and an ace are a pair of aces, kept in the back.
        ("JK Ah Kd 9c 7h 4s 2d", "Kd 9c"),
        # "Trois paires - Place la paire la plus haute, en avant."
        ("Qh Qd 8c 8s 4d 4c Ah", "Qh Qd"),
        # "Brelan - Place le brelan en arrière."
        ("8h 8d 8c Ks Qd 5c 2h", "Ks Qd"),
        # "S'il s'agit de trois As, met en deux en arrière et un en avant."
        ("Ah Ad Ac Ks Qd 5c 2h", "Ac Ks"),
        # Three aces with the joker: a natural ace goes in front, the joker stays back.
        ("Ah Ad JK Ks Qd 5c 2h", "Ad Ks"),
        # "Deux brelans - Place une paire issue du brelan le plus élevé, en avant."
        ("9h 9d 9c 5s 5d 5c Kh", "9c 9d"),
    ],
)
def test_pair_clauses(hand: str, expected: str) -> None:
    check(hand, expected)


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        # "Double paire - Sépare les deux paires" (the lower pair goes in front).
        ("9h 9d 7c 7s Kd 4c 2h", "7c 7s"),
        # "Les deux paires sont des 6 ou plus faibles." -> kept together.
        ("6h 6d 3c 3s Kd 9c 2h", "Kd 9c"),
        # "Les deux paires sont des 10 ou moins et vous avez un As en carte unique. Cet As
        # doit être mis en avant."
        ("Th Td 8c 8s As 9c 2h", "As 9c"),
        # ... with the joker as the single ace (Decision).
        ("Th Td 8c 8s JK 4c 2h", "JK 4c"),
        # Tens and under without an ace: split.
        ("Th Td 8c 8s Kd 4c 2h", "8c 8s"),
        # "Une paire de cartes avec des personnages, une paire de 5 ou moins et un As en
        # carte unique. Cet As doit être mis en avant."
        ("Kh Kd 5c 5d As 8c 3s", "As 8c"),
        # ... without the ace: split.
        ("Kh Kd 5c 5d Qs 8c 3s", "5c 5d"),
        # ... a face pair with a pair of sixes is not the exception: split.
        ("Kh Kd 6c 6d As 8c 3s", "6c 6d"),
        # A pair of aces and another pair: split (aces in the back).
        ("Ah Ad 3c 3s Kd 9c 5h", "3c 3s"),
        # The joker and an ace are a pair of aces.
        ("JK Ad 3c 3s Kd 9c 5h", "3c 3s"),
    ],
)
def test_two_pair(hand: str, expected: str) -> None:
    check(hand, expected)


# --- full house, four of a kind, five aces -------------------------------------------------


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        # "Full - Le divise" (the pair in front).
        ("Jh Jd Jc 8s 8d Kc 4h", "8s 8d"),
        # "... à moins qu'il n'y ait une paire de 2 et un As (ou un Roi) qui pourraient
        # être joués en avant."
        ("Jh Jd Jc 2s 2d Ac 4h", "Ac 4h"),
        ("Jh Jd Jc 2s 2d Kc 4h", "Kc 4h"),
        ("Jh Jd Jc 2s 2d Qc 4h", "2s 2d"),
        # A pair of aces made with the joker goes in front like any pair.
        ("Jh Jd Jc JK Ad Qc 4h", "JK Ad"),
        # "Full comprenant un brelan et deux paires - Joue la paire la plus forte, en avant."
        ("Jh Jd Jc 8s 8d 4c 4h", "8s 8d"),
        # Decision: a full house with a straight (through the joker) plays the full house
        # clause: the kings go in front, not the straight in the back.
        ("Ah Ac JK Kd Ks Qh Jh", "Kd Ks"),
    ],
)
def test_full_house(hand: str, expected: str) -> None:
    check(hand, expected)


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        # "De 2 à 6 : les laisse toujours ensemble."
        ("5h 5d 5c 5s Kd Qc 2h", "Kd Qc"),
        # "De 7 à 10 : le divise à moins qu'il n'y ait un As et une carte avec un
        # personnage à mettre en avant."
        ("9h 9d 9c 9s Kd Qc 2h", "9c 9d"),
        ("9h 9d 9c 9s As Qc 2h", "As Qc"),
        ("9h 9d 9c 9s JK Jc 2h", "JK Jc"),
        ("9h 9d 9c 9s As Tc 2h", "9c 9d"),
        # Decision: 7 to 10 with a pair: the pair goes in front, the four stay together.
        ("8h 8d 8c 8s 5d 5c Kh", "5d 5c"),
        # "De Valet à Roi : le divise à moins que la main ne contienne aussi une paire de
        # 10 ou plus."
        ("Kh Kd Kc Ks As Qc 2h", "Kc Kd"),
        ("Kh Kd Kc Ks Td Tc 2h", "Td Tc"),
        ("Kh Kd Kc Ks 9d 9c 2h", "Kc Kd"),
        # "As : le divise à moins qu'une paire de 7 ou plus puisse être jouée en avant."
        ("Ah Ad Ac As 7d 7c 2h", "7d 7c"),
        ("Ah Ad Ac As 6d 6c 2h", "Ac Ad"),
        # Four aces with the joker: two natural aces go in front, the joker stays back.
        ("Ah Ad Ac JK Kd Qc 2h", "Ac Ad"),
        # Decision: a three of a kind next to the four counts as "une paire".
        ("Kh Kd Kc Ks Td Tc Th", "Tc Td"),
        ("Kh Kd Kc Ks 9d 9c 9h", "Kc Kd"),
        ("5h 5d 5c 5s 9d 9c 9h", "9c 9d"),
        # "Cinq As : La combinaison de cinq As sera toujours jouée en arrière."
        ("Ah Ac Ad As JK Kd Qs", "Kd Qs"),
        ("Ah Ac Ad As JK Qd Qs", "Qd Qs"),
    ],
)
def test_four_of_a_kind_and_five_aces(hand: str, expected: str) -> None:
    check(hand, expected)


# --- straights and flushes -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        # "Joue toujours les quintes et les couleurs en arrière"
        ("9h 8d 7c 6s 5h Kd 2c", "Kd 2c"),
        # The PartyCasino rules' example: "joker, 6, 5, 4, 3": the joker is a seven.
        ("JK 6c 5d 4h 3s Kd 9c", "Kd 9c"),
        # The joker completes a straight before it is an ace (no-pair hand).
        ("JK Kd Qc Jh Ts 5d 2c", "5d 2c"),
        # With one pair the straight still goes in the back ...
        ("9h 8d 7c 6s 5h 5d 2c", "5h 2c"),
        # ... and the pair goes in front when the joker frees it.
        ("9h 8d 7c 6s 5h 5d JK", "5h 5d"),
        # A pair of aces made with the joker: the joker completes the straight instead
        # ("le système essaiera tout d'abord d'utiliser le joker pour compléter ...").
        ("JK Ah Kd Qc Jh 4s 3d", "4s 3d"),
        # Three of a kind with a straight: two of them go in front.
        ("9h 9d 9c 8s 7h 6d 5c", "9d 9h"),
        # Three aces through the joker and a straight that needs it: still the straight.
        ("Ah Ad JK Ks Qs Jd 3c", "Ah 3c"),
        # Decision: a six- or seven-card straight keeps the five leaving the best front.
        ("Th 9d 8c 7s 6h 5d Ac", "Ac Th"),
        # Decision: straight and flush both possible: the one leaving the better front
        # (the flush would leave 8-6, the straight leaves K-2).
        ("9h 8c 7h 6d 5h Kh 2h", "Kh 2h"),
        # "Une quinte flush aura la préférence sur une quinte ou sur une couleur": the
        # straight flush 9-5 stays although the straight 8-4 would leave A-9.
        ("9h 8h 7h 6h 5h 4c Ac", "Ac 4c"),
        # Decision: royal flush or straight flush, the one leaving the best front.
        ("Ah Kh Qh Jh Th 9h 2c", "Ah 2c"),
        # Royal flush, no exception: "une quinte royale sera toujours jouée en arrière."
        ("Ah Kh Qh Jh Th 3d 2c", "3d 2c"),
    ],
)
def test_straights_and_flushes(hand: str, expected: str) -> None:
    check(hand, expected)


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        # "ne les joue en tant que double paire que dans les circonstances suivantes :"
        # "Une paire d'As et n'importe quelle autre paire." (the wheel is not kept)
        ("Ah Ad 5c 5s 4d 3c 2h", "5c 5s"),
        # ... the pair of aces made with the joker the straight would need (Decision).
        ("JK Ah Kd Kc Qh Jd 3s", "Kc Kd"),
        # "Les deux paires sont au moins des 10 ou plus."
        ("Kh Kd Tc Ts Qh Jd 9c", "Tc Ts"),
        # "Les deux paires sont en dessous du 10 mais possède un As en carte unique. Joue
        # selon la règle pour une double paire" (the ace goes in front: Decision).
        ("5h 5d 4c 4s Ad 3c 2h", "Ad 3c"),
        # ... the joker as that single ace (Decision).
        ("9h 9d 8c 8s JK 6c 5h", "JK 6c"),
        # Decision: two pair where no exception fits keeps the straight in the back.
        ("Kh Kd 9c 9s Qh Jd Tc", "Kh 9s"),
        # Straight flush with two pair below 10 and no ace: the straight flush stays.
        ("9h 8h 7h 6h 5h 9d 8d", "9d 8d"),
        # "Quinte flush : ... joue une double paire s'il y a : Deux paires de 10 ou plus."
        ("Kh Qh Jh Th 9h Kd Qd", "Qh Qd"),
        # "Quinte royale : ... joue une double paire s'il y a : Une paire d'As et
        # n'importe quelle autre paire."
        ("Ah Kh Qh Jh Th Ad Kd", "Kh Kd"),
        # Decision: three pair with a straight (the joker pairs the ace): the three-pair
        # clause, aces in front.
        ("JK Ah 5c 5d 4c 4d 3s", "JK Ah"),
    ],
)
def test_straight_and_flush_exceptions(hand: str, expected: str) -> None:
    check(hand, expected)


def test_straight_flush_kept_in_back() -> None:
    split = set_hand(parse_cards("9h 8h 7h 6h 5h 9d 8d"))
    assert category_of(split.high_value()) is Category.STRAIGHT_FLUSH


def test_six_card_straight_with_the_wheel() -> None:
    # A-2-3-4-5-6: the wheel would leave K-6, the six-high straight leaves A-K, under
    # either wheel option.
    cards = parse_cards("Ah 2c 3d 4h 5s 6c Kd")
    for wheel in WheelRank:
        split = set_hand(cards, wheel)
        assert set(split.low) == set(parse_cards("Ah Kd"))
        assert not split.is_foul(wheel)


def test_rejects_bad_hands() -> None:
    with pytest.raises(ValueError, match="seven distinct"):
        set_hand([1, 2, 3, 4, 5, 6])
    with pytest.raises(ValueError, match="seven distinct"):
        set_hand([1, 1, 2, 3, 4, 5, 6])
    with pytest.raises(ValueError, match="seven distinct"):
        set_hand([1, 2, 3, 4, 5, 6, 53])
    with pytest.raises(ValueError, match="seven distinct"):
        set_hand([-1, 2, 3, 4, 5, 6, 7])


# --- properties ---------------------------------------------------------------------------

hands = st.lists(st.integers(0, JOKER), min_size=7, max_size=7, unique=True)
# Few ranks and the joker: many pairs, threes, fours and five aces.
crowded = st.lists(
    st.sampled_from([*range(0, 8), *range(36, 52), JOKER]), min_size=7, max_size=7, unique=True
)


@settings(max_examples=400)
@given(st.one_of(hands, crowded), st.sampled_from(list(WheelRank)))
def test_never_fouls_and_keeps_the_cards(cards: list[int], wheel: WheelRank) -> None:
    split = set_hand(cards, wheel)
    assert len(split.high) == 5
    assert len(split.low) == 2
    assert sorted(split.high + split.low) == sorted(cards)
    assert not split.is_foul(wheel)


@given(st.one_of(hands, crowded), st.randoms(use_true_random=False))
def test_deterministic_and_order_free(cards: list[int], rng: random.Random) -> None:
    shuffled = list(cards)
    rng.shuffle(shuffled)
    assert set_hand(cards) == set_hand(shuffled) == set_hand(tuple(cards))
    assert house_way(shuffled, HouseWay.PARTY) == set_hand(cards)


def test_never_fouls_on_many_random_hands() -> None:
    rng = random.Random(1)
    for _ in range(20_000):
        cards = rng.sample(range(53), 7)
        assert not set_hand(cards).is_foul()
