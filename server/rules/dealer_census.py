"""The dealer's census: how many of the seven-card hands of the deck are a queen-high
pai gow, and how many the house way sets with a nine-high low hand, counted exactly.

These are the dealer's hands of the commission-free tables (docs/RULES.md,
"Commission-free tables"): the Queen's Dragon and the Tiger 9 pay on them alone, so
their returns are exact from these counts; the main bet pushes on them.

A queen-high pai gow depends on the ranks and, only through a flush, on the suits.
The low hand the house way sets depends on the ranks, and on the suits only where
one suit holds five cards (or four and the joker): without such a flush no straight
flush or flush is there to be made, and the house ways split by ranks. So the count
takes the bonus census's two exact passes (:mod:`server.rules.bonus_census`):

1. Every multiset of seven ranks (the joker its own rank) stands for the product of
   C(4, n) hands, all set alike: one hand holding those ranks in suits dealt in turn
   (never more than two of a suit, so no flush) is set by the house way.
2. The hands that hold a flush are then set one by one (in one suit, counted four
   times) and moved from their rank multiset's result to their own.

About 80,000 multisets and 380,000 flush hands: twenty seconds to a minute a house
way, where setting the C(53, 7) = 154,143,080 hands one by one would take an hour. So the counts of
the full deck are checked in here (:data:`KNOWN`), ``paigow-rules dealer-census``
computes them again, and a slow test checks that they agree; the same counting over a
deck cut down to a few ranks is checked against every hand of that deck
(tests/server/rules/test_dealer_census.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations_with_replacement
from math import comb, prod
from types import MappingProxyType

from server.rules.bonus_census import ALL_RANKS, flush_hands
from server.rules.cards import ACE, JOKER, make_card
from server.rules.dealer_hands import is_nine_high_low, is_queen_high_pai_gow
from server.rules.houseways import house_way
from server.rules.options import HouseWay
from server.rules.values import WheelRank

_SUITS = 4
_JOKER_SYMBOL = 15  # the joker's place among the ranks of a multiset

_Key = tuple[bool, bool]  # (queen-high pai gow, nine-high low)


@dataclass(frozen=True, slots=True)
class DealerCensus:
    """Counts of the dealer's seven-card hands of one deck under one house way.

    ``hands``: every hand, C(cards, 7); ``queen_high``: the queen-high pai gows (the
    same under every house way); ``nine_low``: the hands the house way sets with a
    nine-high low hand; ``both``: the hands that are both.
    """

    hands: int
    queen_high: int
    nine_low: int
    both: int

    def share(self, count: int) -> Fraction:
        """``count`` hands as a share of :attr:`hands`."""
        return Fraction(count, self.hands)


def dealer_census(
    way: HouseWay, wheel: WheelRank = WheelRank.SECOND, ranks: Iterable[int] = ALL_RANKS
) -> DealerCensus:
    """The census of the dealer's hands dealt from the deck of ``ranks`` (default every
    rank: the game's 53 cards) in four suits and the joker, set by ``way`` at a table
    whose wheel is ``wheel``. Raises ``ValueError`` for ranks outside 2..14 or a deck of
    fewer than seven cards."""
    chosen = tuple(sorted(set(ranks)))
    if any(not 2 <= r <= ACE for r in chosen):
        raise ValueError("ranks are 2..14")
    if _SUITS * len(chosen) + 1 < 7:
        raise ValueError("a deck of fewer than seven cards deals no hand")
    counts: Counter[_Key] = Counter()
    by_ranks: dict[tuple[int, ...], _Key] = {}
    for multiset in combinations_with_replacement((*chosen, _JOKER_SYMBOL), 7):
        n = Counter(multiset)
        if n[_JOKER_SYMBOL] > 1 or any(c > _SUITS for r, c in n.items() if r != _JOKER_SYMBOL):
            continue
        # Suits dealt in turn over the sorted ranks: a rank's cards get different suits
        # and no suit gets more than two cards, so the hand holds no flush.
        hand = [
            JOKER if r == _JOKER_SYMBOL else make_card(r, i % _SUITS)
            for i, r in enumerate(multiset)
        ]
        key = _classify(hand, way, wheel)
        by_ranks[multiset] = key
        counts[key] += prod(comb(_SUITS, c) for r, c in n.items() if r != _JOKER_SYMBOL)
    for hand, ways in flush_hands(chosen):
        counted = by_ranks[_multiset(hand)]
        actual = _classify(hand, way, wheel)
        if actual != counted:
            counts[counted] -= _SUITS * ways
            counts[actual] += _SUITS * ways
    return DealerCensus(
        hands=sum(counts.values()),
        queen_high=counts[True, False] + counts[True, True],
        nine_low=counts[False, True] + counts[True, True],
        both=counts[True, True],
    )


def _classify(hand: list[int], way: HouseWay, wheel: WheelRank) -> _Key:
    return (is_queen_high_pai_gow(hand), is_nine_high_low(house_way(hand, way, wheel).low))


def _multiset(hand: list[int]) -> tuple[int, ...]:
    return tuple(sorted(_JOKER_SYMBOL if c == JOKER else (c >> 2) + 2 for c in hand))


_PARTY = DealerCensus(hands=154_143_080, queen_high=2_719_500, nine_low=4_138_240, both=248_640)
_PAIR_CLASSES = DealerCensus(
    hands=154_143_080, queen_high=2_719_500, nine_low=3_853_596, both=248_640
)

KNOWN: Mapping[tuple[HouseWay, WheelRank], DealerCensus] = MappingProxyType(
    {
        # Where the wheel ranks changes no count: a dealer's hand holding A-2-3-4-5 is
        # set alike either way, as far as its low hand's being nine-high goes.
        (HouseWay.PARTY, WheelRank.SECOND): _PARTY,
        (HouseWay.PARTY, WheelRank.LOWEST): _PARTY,
        (HouseWay.PAIR_CLASSES, WheelRank.SECOND): _PAIR_CLASSES,
        (HouseWay.PAIR_CLASSES, WheelRank.LOWEST): _PAIR_CLASSES,
    }
)
"""The census of the full deck for each house way and wheel, as ``paigow-rules
dealer-census`` computes it (checked by a slow test)."""


def known_census(way: HouseWay, wheel: WheelRank = WheelRank.SECOND) -> DealerCensus:
    """The full deck's census for ``way`` and ``wheel``: :data:`KNOWN`'s, or computed
    (twenty seconds or more) for a pair it does not hold."""
    known = KNOWN.get((way, wheel))
    return known if known is not None else dealer_census(way, wheel)
