"""A small local hand ranking, for the live preview of a split before it is sent.

The server is the authority: it names every hand in its ``set_hand`` and
``house_way`` replies and in ``reveal``. This module only lets a client show, while
the player picks two cards, what the split would be and whether it fouls, without
a round trip per key press. It follows docs/RULES.md, "The joker" and "Ranking" (the
joker as an ace or completing a straight or flush; A-2-3-4-5 the second-best
straight; in the low hand the joker is an ace) and uses only the card codes of
:mod:`protocol.cards`.

A value is a tuple ``(category, r1, r2, r3, r4, r5)``; a greater tuple is a better
hand, and a 2-card low hand uses the same layout, so a split is legal exactly when
``high_value(high) > low_value(low)``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from itertools import combinations

from protocol.cards import JOKER, RANK_NAMES, RANK_PLURALS, rank_of, suit_of

HIGH_CARD, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS = range(8)
STRAIGHT_FLUSH, ROYAL_FLUSH, FIVE_ACES = 8, 9, 10
ACE = 14
_BROADWAY = 15  # straight key of A-K-Q-J-10
_WHEEL = 14  # straight key of A-2-3-4-5: second best (docs/RULES.md, "Ranking")

Value = tuple[int, ...]


def _rank_name(rank: int) -> str:
    return RANK_NAMES[rank - 2]


def _plural(rank: int) -> str:
    return RANK_PLURALS[rank - 2]


def _straight_key(ranks: Sequence[int]) -> int | None:
    """The straight key of five ranks, or None if they are not a straight."""
    distinct = sorted(set(ranks))
    if len(distinct) != 5:
        return None
    if distinct == [2, 3, 4, 5, ACE]:
        return _WHEEL
    if distinct[4] - distinct[0] == 4:
        return _BROADWAY if distinct[4] == ACE else distinct[4]
    return None


def _natural_value(cards: Sequence[tuple[int, int]]) -> Value:
    """The value of five (rank, suit) cards; suit -1 never makes a flush."""
    ranks = [r for r, _ in cards]
    flush = len({s for _, s in cards}) == 1 and cards[0][1] >= 0
    straight = _straight_key(ranks)
    if straight is not None and flush:
        return (ROYAL_FLUSH if straight == _BROADWAY else STRAIGHT_FLUSH, straight)
    counts = Counter(ranks)
    # Ranks by (count, rank), best first: the order the tie-breaks are read in.
    groups = sorted(counts.items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
    shape = [c for _, c in groups]
    order = tuple(r for r, _ in groups)
    if shape[0] == 5:
        return (FIVE_ACES, ACE)
    if shape[0] == 4:
        return (QUADS, *order)
    if shape == [3, 2]:
        return (FULL_HOUSE, *order)
    if flush:
        return (FLUSH, *sorted(ranks, reverse=True))
    if straight is not None:
        return (STRAIGHT, straight)
    if shape[0] == 3:
        return (TRIPS, *order)
    if shape[:2] == [2, 2]:
        return (TWO_PAIR, *order)
    if shape[0] == 2:
        return (PAIR, *order)
    return (HIGH_CARD, *order)


def high_value(cards: Sequence[int]) -> Value:
    """The value of a 5-card high hand, the joker taking its best legal use."""
    natural = [(rank_of(c), suit_of(c)) for c in cards if c != JOKER]
    if len(natural) == len(cards):
        return _natural_value(natural)
    # As an ace (pairs with aces, no flush by itself)...
    best = _natural_value([*natural, (ACE, -1)])
    # ...or as any card that completes a straight or a flush.
    for rank in range(2, ACE + 1):
        for suit in range(4):
            if (rank, suit) in natural:
                continue
            value = _natural_value([*natural, (rank, suit)])
            if value[0] in (STRAIGHT, FLUSH, STRAIGHT_FLUSH, ROYAL_FLUSH) and value > best:
                best = value
    return best


def low_value(cards: Sequence[int]) -> Value:
    """The value of a 2-card low hand (the joker is an ace), comparable with high values."""
    a, b = sorted((ACE if c == JOKER else rank_of(c) for c in cards), reverse=True)
    return (PAIR, a) if a == b else (HIGH_CARD, a, b)


def high_name(value: Value) -> str:
    """A name for a high-hand value, in the server's style: ``Straight, seven high``."""
    category, ranks = value[0], value[1:]

    def straight(key: int) -> str:
        if key == _BROADWAY:
            return "ace high"
        return "five high" if key == _WHEEL else f"{_rank_name(key)} high"

    texts: dict[int, Callable[[], str]] = {
        FIVE_ACES: lambda: "five aces",
        ROYAL_FLUSH: lambda: "royal flush",
        STRAIGHT_FLUSH: lambda: f"straight flush, {straight(ranks[0])}",
        QUADS: lambda: f"four {_plural(ranks[0])}",
        FULL_HOUSE: lambda: f"full house, {_plural(ranks[0])} over {_plural(ranks[1])}",
        FLUSH: lambda: f"flush, {_rank_name(ranks[0])} high",
        STRAIGHT: lambda: f"straight, {straight(ranks[0])}",
        TRIPS: lambda: f"three {_plural(ranks[0])}",
        TWO_PAIR: lambda: f"two pair, {_plural(ranks[0])} and {_plural(ranks[1])}",
        PAIR: lambda: f"pair of {_plural(ranks[0])}",
        HIGH_CARD: lambda: f"{_rank_name(ranks[0])} high",
    }
    text = texts[category]()
    return text[0].upper() + text[1:]


def low_name(value: Value) -> str:
    """A name for a low-hand value: ``Pair of aces``, ``Ace-queen``."""
    if value[0] == PAIR:
        return f"Pair of {_plural(value[1])}"
    return f"{_rank_name(value[1]).capitalize()}-{_rank_name(value[2])}"


def preview(cards: Sequence[int], low: Sequence[int]) -> tuple[str, str, bool]:
    """(high name, low name, foul) of the split of seven ``cards`` with ``low`` in front."""
    high = [c for c in cards if c not in low]
    hv, lv = high_value(high), low_value(low)
    return high_name(hv), low_name(lv), not hv > lv


def legal_lows(cards: Sequence[int]) -> list[tuple[int, int]]:
    """Every pair of cards that can be the low hand without a foul."""
    return [
        (a, b)
        for a, b in combinations(cards, 2)
        if high_value([c for c in cards if c not in (a, b)]) > low_value((a, b))
    ]
