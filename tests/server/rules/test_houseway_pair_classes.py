"""The "donneur" page's house way (``houseway_pair_classes``): every clause, the decisions,
properties (docs/RULES.md, "House way").

Each case gives seven cards and the two cards the house way must put in front ("à
l'endroit"). Where several cards of a rank could go in front, the documented
tie-break keeps the lowest codes in front and the joker in the back.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.rules.cards import JOKER, parse_cards
from server.rules.houseway_pair_classes import ACES, HIGH, LOW, MEDIUM, pair_class, set_hand
from server.rules.houseways import HOUSE_WAYS, house_way
from server.rules.options import HouseWay
from server.rules.values import WheelRank


def check(hand: str, expected_front: str) -> None:
    split = set_hand(parse_cards(hand, 7))
    assert sorted(split.high + split.low) == sorted(parse_cards(hand))
    assert set(split.low) == set(parse_cards(expected_front, 2)), hand


def test_sides() -> None:
    # "Pas de paire: placez la carte la plus forte à l'envers et les deux autres cartes
    # les plus fortes à l'endroit": à l'envers is the 5-card back, à l'endroit the front.
    split = set_hand(parse_cards("As Kd 9c 7h 5s 3d 2c"))
    assert set(split.low) == set(parse_cards("Kd 9c"))
    assert parse_cards("As")[0] in split.high


def test_pair_classes() -> None:
    # "De 2 à 6: paires basses", "De 7 à 10: paires moyennes", "De Valet à Roi: paires
    # fortes".
    assert [pair_class(r) for r in range(2, 15)] == [LOW] * 5 + [MEDIUM] * 4 + [HIGH] * 3 + [ACES]


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        # "Pas de paire: ... les deux autres cartes les plus fortes à l'endroit."
        ("As Kd 9c 7h 5s 3d 2c", "Kd 9c"),
        # Decision: a lone joker completing nothing is an ace, the strongest card.
        ("JK Kd 9c 7h 5s 3d 2c", "Kd 9c"),
        # "Une paire: placez la paire à l'envers et les deux autres cartes les plus fortes
        # à l'endroit."
        ("Qh Qd As 9c 7h 4s 2d", "As 9c"),
        ("JK Ah Kd 9c 7h 4s 2d", "Kd 9c"),
        # "3 paires: jouez toujours la paire la plus forte à l'endroit."
        ("Qh Qd 8c 8s 4d 4c Ah", "Qh Qd"),
        # "Trois cartes identiques : toujours jouez les trois cartes identiques à l'envers"
        ("8h 8d 8c Ks Qd 5c 2h", "Ks Qd"),
        # "... sauf si se sont des « As », alors jouez une paire « d'As » à l'envers et
        # l'autre à l'endroit."
        ("Ah Ad Ac Ks Qd 5c 2h", "Ac Ks"),
        ("Ah Ad JK Ks Qd 5c 2h", "Ad Ks"),
        # "Deux fois trois cartes identiques: toujours jouer la paire la plus forte à
        # l'endroit"
        ("9h 9d 9c 5s 5d 5c Kh", "9c 9d"),
    ],
)
def test_pair_clauses(hand: str, expected: str) -> None:
    check(hand, expected)


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        # "Deux paires basses: séparez à moins que vous ayez un Roi ou une carte plus forte"
        ("6h 6d 3c 3s Qd 9c 2h", "3c 3s"),
        ("6h 6d 3c 3s Kd 9c 2h", "Kd 9c"),
        ("6h 6d 3c 3s As 9c 2h", "As 9c"),
        # ... the joker is "une carte plus forte" (Decision: a lone joker is an ace).
        ("6h 6d 3c 3s JK 9c 2h", "JK 9c"),
        # "Une paire basse et une moyenne: séparez à moins que vous ayez un Roi ou mieux"
        ("9h 9d 3c 3s Qd 8c 2h", "3c 3s"),
        ("9h 9d 3c 3s Kd 8c 2h", "Kd 8c"),
        # "Une paire basse et une forte: séparez à moins que vous ayez un « As »"
        ("Qh Qd 3c 3s Kd 8c 2h", "3c 3s"),
        ("Qh Qd 3c 3s Ad 8c 2h", "Ad 8c"),
        # "Paire moyenne et paire forte: séparez toujours."
        ("Qh Qd 9c 9s Ad 8c 2h", "9c 9s"),
        # "2 paires moyennes: séparez à moins que vous ayez un « As »"
        ("Th Td 8c 8s Kd 4c 2h", "8c 8s"),
        ("Th Td 8c 8s Ad 4c 2h", "Ad 4c"),
        # "2 paires fortes: séparez toujours."
        ("Kh Kd Jc Js Ad 4c 2h", "Jc Js"),
        # "Paire « d'As » et une autre paire: séparez toujours"
        ("Ah Ad 3c 3s Kd 9c 5h", "3c 3s"),
        ("JK Ad 3c 3s Kd 9c 5h", "3c 3s"),
    ],
)
def test_two_pair(hand: str, expected: str) -> None:
    check(hand, expected)


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        # "« Full House »: toujours séparé"
        ("Jh Jd Jc 8s 8d Kc 4h", "8s 8d"),
        # "... à moins que ce soit une paire de 2 et que vous aviez un « As » et un « Roi »
        # à jouer à l'endroit"
        ("Jh Jd Jc 2s 2d Ac Kh", "Ac Kh"),
        ("Jh Jd Jc 2s 2d Ac 4h", "2s 2d"),
        ("Jh Jd Jc 2s 2d Kc 4h", "2s 2d"),
        # "« Full House » avec 3 cartes identiques et 2 paires: jouez la paire la plus forte
        # à l'endroit"
        ("Jh Jd Jc 8s 8d 4c 4h", "8s 8d"),
        # "Avec un « Full House »: règle du « Full House »" (the straight through the joker
        # is not kept).
        ("Ah Ac JK Kd Ks Qh Jh", "Kd Ks"),
        # "Quatre cartes identiques" - "De 2 à 6: gardez tout ensemble"
        ("5h 5d 5c 5s Kd Qc 2h", "Kd Qc"),
        # "De 7 à 10: séparez à moins que vous puissiez jouer un Roi ou mieux à l'endroit"
        ("9h 9d 9c 9s Kd 4c 2h", "Kd 4c"),
        ("9h 9d 9c 9s Qd 4c 2h", "9c 9d"),
        # "De Valet à Roi: séparez à moins qu'un as puisse être joué à l'endroit."
        ("Kh Kd Kc Ks Ad 4c 2h", "Ad 4c"),
        ("Kh Kd Kc Ks JK 4c 2h", "JK 4c"),
        ("Kh Kd Kc Ks Qd 4c 2h", "Kc Kd"),
        # "As: séparez toujours" (natural aces in front, the joker kept in the back)
        ("Ah Ad Ac As Kd Qc 2h", "Ac Ad"),
        ("Ah Ad Ac JK Kd Qc 2h", "Ac Ad"),
        # "Quatre cartes identiques et une paire: jouez la paire à l'endroit"
        ("8h 8d 8c 8s 5d 5c Kh", "5d 5c"),
        # Decision: that clause wins over "As: séparez toujours".
        ("Ah Ad Ac As 5d 5c Kh", "5d 5c"),
        # "Quatre cartes identiques et trois autres identiques: jouez une paire à l'endroit
        # provenant des trois cartes identiques."
        ("8h 8d 8c 8s 5d 5c 5h", "5c 5d"),
        # "5 « As »: séparez les « As », jouez 3 « As » à l'envers et 2 « As » à l'endroit"
        ("Ah Ac Ad As JK Qd Qs", "Ac Ad"),
        # "... à moins que vous ayez une paire de Rois, alors jouez les 5 « As » à l'envers
        # et les 2 Rois à l'endroit."
        ("Ah Ac Ad As JK Kd Ks", "Kd Ks"),
    ],
)
def test_full_house_four_of_a_kind_five_aces(hand: str, expected: str) -> None:
    check(hand, expected)


def test_five_aces_split_keeps_the_joker_back() -> None:
    split = set_hand(parse_cards("Ah Ac Ad As JK 9d 3s"))
    assert JOKER in split.high
    assert split.low_value() > set_hand(parse_cards("Kh Kd 9c 7h 5s 3d 2c")).low_value()


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        # "Sans paire: ... jouez la catégorie qui vous permettra de retourner les cartes
        # les plus fortes à l'endroit." The straight leaves K-2, the flush 8-6.
        ("9h 8c 7h 6d 5h Kh 2h", "Kh 2h"),
        # The straight 8-4 leaves A-9, the straight flush 9-5 only A-4.
        ("9h 8h 7h 6h 5h 4c Ac", "Ac 9h"),
        # A royal flush or a king-high straight flush: the one leaving the best front.
        ("Ah Kh Qh Jh Th 9h 2c", "Ah 2c"),
        # "Avec la 6ème ou la 7ème: jouez la suite ou la couleur la plus basse à l'envers
        # pour placer les cartes les plus fortes à l'endroit."
        ("Th 9d 8c 7s 6h 5d Ac", "Ac Th"),
        ("Ah 2c 3d 4h 5s 6c Kd", "Ah Kd"),
        # A flush of six: the lowest five in the back.
        ("Ah Kh 9h 7h 5h 3h 2c", "Ah 2c"),
        # The joker completes the straight (no pair), as in "joker, 6, 5, 4, 3".
        ("JK 6c 5d 4h 3s Kd 9c", "Kd 9c"),
        ("JK Kd Qc Jh Ts 5d 2c", "5d 2c"),
        # "Avec une paire: jouez la paire à l'endroit seulement si une suite ou une
        # couleur peut être jouée à l'envers."
        ("9h 8d 7c 6s 5h 5d JK", "5h 5d"),
        # Decision: otherwise the straight still goes in the back with the best front.
        ("9h 8d 7c 6s 5h 5d 2c", "5h 2c"),
        # "Avec trois cartes identiques: jouez une paire à l'endroit"
        ("9h 9d 9c 8s 7h 6d 5c", "9d 9h"),
        # Decision: when no straight leaves a pair of the three (the joker is one of
        # three aces and the straight needs it), the three-of-a-kind clause plays.
        ("Ah Ad JK Ks Qs Jd 3c", "Ad Ks"),
        # "Avec 2 paires: règle des 2 paires" (a pair of nines and kings: split).
        ("Kh Kd 9c 9s Qh Jd Tc", "9c 9s"),
        ("Kh Qh Jh Th 9h Kd Qd", "Qh Qd"),
        # The joker pairs the ace rather than completing A-K-Q-J-(10): aces and kings split.
        ("JK Ah Kd Kc Qh Jd 3s", "Kc Kd"),
        # "Avec trois paires: règle des trois paires"
        ("JK Ah 5c 5d 4c 4d 3s", "JK Ah"),
    ],
)
def test_straights_and_flushes(hand: str, expected: str) -> None:
    check(hand, expected)


def test_rejects_bad_hands() -> None:
    with pytest.raises(ValueError, match="seven distinct"):
        set_hand([1, 2, 3, 4, 5, 6, 6])
    with pytest.raises(ValueError, match="seven distinct"):
        set_hand(list(range(8)))


def test_registry() -> None:
    assert set(HOUSE_WAYS) == set(HouseWay)
    cards = parse_cards("6h 6d 3c 3s Qd 9c 2h")
    assert house_way(cards, HouseWay.PAIR_CLASSES) == set_hand(cards)
    # The two ways differ here: the PartyCasino way keeps two pairs of 6 or less together.
    assert set(house_way(cards, HouseWay.PARTY).low) == set(parse_cards("Qd 9c"))
    assert set(set_hand(cards).low) == set(parse_cards("3c 3s"))


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
    assert house_way(shuffled, HouseWay.PAIR_CLASSES) == set_hand(cards)


def test_never_fouls_on_many_random_hands() -> None:
    rng = random.Random(2)
    for _ in range(20_000):
        cards = rng.sample(range(53), 7)
        assert not set_hand(cards).is_foul()
