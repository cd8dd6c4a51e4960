"""The bonus census: how many of the seven-card hands of the deck fall in each bonus
class, counted exactly, and the bonus bet's return on a pay table from it.

A hand's bonus class depends on its ranks (the joker counting as its own rank), and on
its suits only when one suit holds five of its cards, or four and the joker (a
flush; seven cards hold at most one). So the census counts in two passes, each
exact:

1. Every multiset of seven ranks (at most four of a rank, at most one joker) stands
   for the product over its ranks of C(4, n) hands, classified by their ranks alone
   (:func:`server.rules.bonus.bonus_class_of_ranks`), as if none held a flush.
2. The hands that do hold a flush are then moved from that class to their own
   (:func:`server.rules.bonus.classify_bonus`). They are enumerated in one suit and
   counted four times: the flush suit's cards one by one, and the one or two cards
   outside it by their ranks and whether they share a suit (nothing else about them
   changes a class: the royal match is the one class that looks at their suits).

About 80,000 rank multisets and 380,000 flush hands: about a second, where the
C(53, 7) = 154,143,080 hands one by one would take hours. The census of a deck cut
down to some ranks (``ranks``) is the same computation, and small enough to check
against every hand of that deck (tests/server/rules/test_bonus_census.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction
from functools import cache
from itertools import combinations, combinations_with_replacement
from math import comb, prod

from server.rules.bonus import (
    BonusClass,
    PayTable,
    bonus_class_of_ranks,
    classify_bonus_unchecked,
)
from server.rules.cards import ACE, JOKER, make_card

ALL_RANKS = tuple(range(2, ACE + 1))
_JOKER_SYMBOL = 15  # the joker's place among the ranks of a multiset
_SUITS = 4
_FLUSH_SUIT = 0  # the flush hands are enumerated in this suit, and counted four times


def deck_size(ranks: Iterable[int] = ALL_RANKS) -> int:
    """The cards of a deck of ``ranks`` in four suits, and the joker."""
    return _SUITS * len(_checked(ranks)) + 1


def bonus_census(ranks: Iterable[int] = ALL_RANKS) -> dict[BonusClass, int]:
    """The number of seven-card hands of each bonus class, best class first, dealt from
    the deck of ``ranks`` (default: every rank, the game's 53 cards) in four suits and
    the joker. They add up to C(cards, 7). Raises ``ValueError`` for ranks outside
    2..14 or a deck of fewer than seven cards."""
    return dict(_census(_checked(ranks)))


@cache
def _census(chosen: tuple[int, ...]) -> tuple[tuple[BonusClass, int], ...]:
    # Pure, and a few seconds for the whole deck: counted once a process.
    counts: Counter[BonusClass] = Counter()
    for hand, ways in _rank_multisets(chosen):
        counts[bonus_class_of_ranks(hand)] += ways
    for hand, ways in flush_hands(chosen):
        counted = bonus_class_of_ranks(hand)
        actual = classify_bonus_unchecked(hand)
        if actual is not counted:
            counts[counted] -= _SUITS * ways
            counts[actual] += _SUITS * ways
    return tuple((cls, counts[cls]) for cls in BonusClass)


def bonus_return(census: Mapping[BonusClass, int], table: PayTable) -> Fraction:
    """Chips returned per chip bet on the bonus, exactly: each paying class returns its
    stake and its odds, weighted by its share of the hands."""
    hands = sum(census.values())
    if not hands:
        raise ValueError("an empty census")
    paid = sum(n * (table.odds_of(cls) + 1) for cls, n in census.items() if table.odds_of(cls))
    return Fraction(paid, hands)


def _checked(ranks: Iterable[int]) -> tuple[int, ...]:
    chosen = tuple(sorted(set(ranks)))
    if any(not 2 <= r <= ACE for r in chosen):
        raise ValueError("ranks are 2..14")
    if _SUITS * len(chosen) + 1 < 7:
        raise ValueError("a deck of fewer than seven cards deals no hand")
    return chosen


def _rank_multisets(ranks: tuple[int, ...]) -> Iterator[tuple[list[int], int]]:
    """Each multiset of seven ranks, as one hand holding them (suits dealt in turn, so
    no flush), with the number of hands that hold exactly those ranks."""
    for multiset in combinations_with_replacement((*ranks, _JOKER_SYMBOL), 7):
        counts = Counter(multiset)
        if counts[_JOKER_SYMBOL] > 1 or any(
            n > _SUITS for r, n in counts.items() if r != _JOKER_SYMBOL
        ):
            continue
        hand = [JOKER] * counts[_JOKER_SYMBOL]
        for rank, n in counts.items():
            if rank != _JOKER_SYMBOL:
                hand += [make_card(rank, suit) for suit in range(n)]
        ways = prod(comb(_SUITS, n) for r, n in counts.items() if r != _JOKER_SYMBOL)
        yield hand, ways


def flush_hands(ranks: tuple[int, ...]) -> Iterator[tuple[list[int], int]]:
    """Each hand holding a flush in one suit (five or more cards of it, or four and the
    joker), up to the suits of the cards outside it, with the number of hands it
    stands for in that suit: every such hand of the deck of ``ranks`` is counted once
    when each is counted four times (one for each suit). Also the dealer's census's
    (:mod:`server.rules.dealer_census`)."""
    for joker in (0, 1):
        for held in range(5 - joker, 8 - joker):
            for suited in combinations(ranks, held):
                base = [make_card(r, _FLUSH_SUIT) for r in suited] + [JOKER] * joker
                for rest, ways in _outside(ranks, 7 - joker - held):
                    yield base + rest, ways


def _outside(ranks: tuple[int, ...], count: int) -> Iterator[tuple[list[int], int]]:
    """``count`` (0 to 2) cards of the three other suits, by their ranks and whether
    they share a suit, with the number of ways each stands for."""
    if count == 0:
        yield [], 1
    elif count == 1:
        for r in ranks:
            yield [make_card(r, 1)], 3
    elif count == 2:
        for r in ranks:
            yield [make_card(r, 1), make_card(r, 2)], 3  # a pair: never one suit
        for r1, r2 in combinations(ranks, 2):
            yield [make_card(r1, 1), make_card(r2, 1)], 3  # one suit
            yield [make_card(r1, 1), make_card(r2, 2)], 6  # two suits
    else:  # a flush holds at least five of the seven cards
        raise AssertionError(count)
