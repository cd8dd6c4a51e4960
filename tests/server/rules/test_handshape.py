"""The shared analysis of seven cards (``handshape``), checked against brute force."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.rules.cards import ACE, JOKER, parse_cards, rank_of
from server.rules.handshape import (
    analyse,
    best_legal_split,
    best_made,
    checked,
    made_hands,
    split_by_ranks,
)
from server.rules.splits import Split, all_splits, legal_splits
from server.rules.values import Category, WheelRank, category_of, high_value, low_value

hands = st.lists(st.integers(0, JOKER), min_size=7, max_size=7, unique=True)
crowded = st.lists(
    st.sampled_from([*range(0, 8), *range(36, 52), JOKER]), min_size=7, max_size=7, unique=True
)
# Two suits and the joker: many straights and flushes.
suited = st.lists(
    st.sampled_from([c for c in range(52) if c & 3 < 2] + [JOKER]),
    min_size=7,
    max_size=7,
    unique=True,
)
_MADE = {Category.STRAIGHT, Category.FLUSH, Category.STRAIGHT_FLUSH, Category.ROYAL_FLUSH}


def _rank(card: int) -> int:
    return ACE if card == JOKER else rank_of(card)


@given(st.one_of(hands, crowded))
def test_groups_count_the_joker_as_an_ace(cards: list[int]) -> None:
    shape = analyse(cards)
    counts = Counter(_rank(c) for c in cards)
    groups = (shape.singles, shape.pairs, shape.threes, shape.fours, shape.fives)
    for n, group in enumerate(groups, start=1):
        assert group == sorted((r for r, k in counts.items() if k == n), reverse=True)
    assert shape.cards == tuple(sorted(cards, reverse=True))
    assert shape.joker == (JOKER in cards)


def test_joker_groups() -> None:
    assert analyse(parse_cards("JK Ah Kd 9c 7h 4s 2d")).pairs == [ACE]
    assert analyse(parse_cards("JK Kd 9c 7h 5s 3d 2c")).singles[0] == ACE
    assert analyse(parse_cards("Ah Ac Ad As JK Kd Qs")).fives == [ACE]
    assert analyse(parse_cards("Ah Ad JK Ks Qd 5c 2h")).threes == [ACE]


@settings(max_examples=300)
@given(st.one_of(hands, suited), st.sampled_from(list(WheelRank)))
def test_best_made_matches_brute_force(cards: list[int], wheel: WheelRank) -> None:
    """best_made finds, over all 21 splits, the straight or flush leaving the best front."""
    shape = analyse(cards)
    brute = [
        (s.low_value(), s.high_value(wheel))
        for s in all_splits(shape.cards)
        if category_of(s.high_value(wheel)) in _MADE
    ]
    made = made_hands(shape, wheel)
    assert shape.may_make or not brute
    best = best_made(made)
    if not brute:
        assert best is None
        return
    assert best is not None
    assert (best.low_value, best.high_value) == max(brute)
    for m in made:
        assert m.high_value == high_value(m.high, wheel)
        assert m.low_value == low_value(m.low)
        assert sorted(m.high + m.low) == sorted(cards)
    for category in (Category.FLUSH, Category.STRAIGHT_FLUSH, Category.ROYAL_FLUSH):
        floor = [b for b in brute if category_of(b[1]) >= category]
        at_least = best_made(made, category)
        if floor:
            assert at_least is not None
            assert (at_least.low_value, at_least.high_value) == max(floor)
        else:
            assert at_least is None


def test_made_hands_with_the_joker() -> None:
    # "joker, 6, 5, 4, 3": the joker is the seven, leaving K-9.
    shape = analyse(parse_cards("JK 6c 5d 4h 3s Kd 9c"))
    best = best_made(made_hands(shape))
    assert best is not None
    assert set(best.low) == set(parse_cards("Kd 9c"))
    # The joker stands in for a five so the pair of fives can go in front.
    shape = analyse(parse_cards("9h 8d 7c 6s 5h 5d JK"))
    best = best_made(made_hands(shape))
    assert best is not None
    assert set(best.low) == set(parse_cards("5h 5d"))
    assert analyse(parse_cards("Ah Kd 9c 7h 5s 3d 2c")).may_make is False


def test_split_by_ranks_prefers_the_joker_in_the_back() -> None:
    shape = analyse(parse_cards("Ah Ad JK Ks Qd 5c 2h"))
    split = split_by_ranks(shape, ACE, 13)
    assert JOKER in split.high
    # Four aces split: two natural aces go in front, and the joker left in the back
    # completes a straight there (A JK K Q J) instead of making a pair of aces.
    shape = analyse(parse_cards("Ah Ac Ad JK Ks Qd Jc"))
    split = split_by_ranks(shape, ACE, ACE)
    assert JOKER in split.high
    assert category_of(split.high_value()) is Category.STRAIGHT


def test_safety_net_returns_the_best_legal_split() -> None:
    cards = parse_cards("Ah Kd 9c 7h 5s 3d 2c")
    shape = analyse(cards)
    foul = Split(high=tuple(c for c in shape.cards if c not in parse_cards("Ah Kd")),
                 low=parse_cards("Ah Kd"))  # fmt: skip
    assert foul.is_foul()
    safe = checked(shape, foul)
    assert not safe.is_foul()
    assert set(safe.low) == set(parse_cards("Kd 9c"))
    assert safe == best_legal_split(shape.cards)
    legal = legal_splits(cards)
    assert safe.low_value() == max(s.low_value() for s in legal)


@given(st.one_of(hands, crowded))
def test_best_legal_split_is_legal_and_best(cards: list[int]) -> None:
    split = best_legal_split(cards)
    assert not split.is_foul()
    best = max((s.low_value(), s.high_value()) for s in legal_splits(cards))
    assert (split.low_value(), split.high_value()) == best


def test_analyse_rejects_bad_hands() -> None:
    for bad in ([1, 2, 3, 4, 5, 6], [1, 1, 2, 3, 4, 5, 6], [0, 1, 2, 3, 4, 5, 60]):
        with pytest.raises(ValueError, match="seven distinct"):
            analyse(bad)
