"""Hand values: the 5-card high hand (with the joker) and the 2-card low hand.

A value is a plain ``int``; a greater value is a better hand, so values compare with
``<`` and ``==`` and equal values are copies. Layout: the category in bits 20 and up,
then up to five ranks (2..14) of four bits each, most significant first::

    value = category << 20 | r1 << 16 | r2 << 12 | r3 << 8 | r4 << 4 | r5

High and low values share the layout, which is what makes the foul test a plain
comparison: a split is legal when ``high_value > low_value``.

The joker (docs/RULES.md, "The joker"; the PartyCasino rules and the "Le Tirage"
page): in the high hand it counts as an ace, or completes a straight, flush, straight
flush or royal flush, and the hand's value is the best over every legal use; in a
straight it takes the rank that makes the best straight (the PartyCasino rules:
"joker, 6, 5, 4, 3" is seven high); in a flush it is the highest rank of the suit not
already in the hand; four aces and the joker are five aces. In the low hand it is an
ace.

Straights (docs/RULES.md, "Ranking"): A-K-Q-J-10 is the best, A-2-3-4-5 the second
best (the PartyCasino rules, the "Le Tirage" and "donneur" pages) unless the table's
``wheel`` option says ``lowest``. Inside the straight categories the rank nibble is 15
for A-K-Q-J-10, 14 for a second-best wheel (5 for a lowest wheel), and otherwise the
top card.

Evaluation is table-driven, in the manner of Cactus Kev's evaluator: a non-flush
hand is looked up by the product of one prime per rank (the joker has its own
prime), a flush by the bit set of its ranks, so a hand costs a few multiplications
and one dictionary look-up. The tables are built once, at import.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from enum import IntEnum, StrEnum
from itertools import combinations, combinations_with_replacement

from server.rules.cards import ACE, rank_name, rank_of, rank_plural


class Category(IntEnum):
    """High-hand categories, worst to best (docs/RULES.md, "Ranking")."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8
    ROYAL_FLUSH = 9
    FIVE_ACES = 10


CATEGORY_NAMES = {
    Category.HIGH_CARD: "high card",
    Category.PAIR: "one pair",
    Category.TWO_PAIR: "two pair",
    Category.THREE_OF_A_KIND: "three of a kind",
    Category.STRAIGHT: "straight",
    Category.FLUSH: "flush",
    Category.FULL_HOUSE: "full house",
    Category.FOUR_OF_A_KIND: "four of a kind",
    Category.STRAIGHT_FLUSH: "straight flush",
    Category.ROYAL_FLUSH: "royal flush",
    Category.FIVE_ACES: "five aces",
}


class WheelRank(StrEnum):
    """Where A-2-3-4-5 ranks among straights (table option ``wheel``)."""

    SECOND = "second"  # PartyCasino, "Le Tirage", "donneur": second only to A-K-Q-J-10
    LOWEST = "lowest"  # the common casino rule elsewhere: the lowest straight


_SHIFT = 20
_BROADWAY_CODE = 15
_WHEEL_SECOND_CODE = 14
_WHEEL_LOWEST_CODE = 5
_JOKER_RANK = 15  # a pseudo-rank used only while building tables

# One prime per rank 2..14, and one for the joker.
_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
_JOKER_PRIME = 43
_JOKER_FLUSH_BIT = 1 << 13
_ALL_SUITS = 0b1111

# Per-card look-ups, indexed by card code (0..52).
CARD_PRIME: tuple[int, ...] = (*tuple(_PRIMES[c >> 2] for c in range(52)), _JOKER_PRIME)
CARD_SUIT_BIT: tuple[int, ...] = (*tuple(1 << (c & 3) for c in range(52)), _ALL_SUITS)
CARD_RANK_BIT: tuple[int, ...] = (*tuple(1 << (c >> 2) for c in range(52)), _JOKER_FLUSH_BIT)
LOW_RANK: tuple[int, ...] = (*tuple(rank_of(c) for c in range(52)), ACE)


def pack(category: int, ranks: Sequence[int] = ()) -> int:
    """The value of ``category`` with tie-break ``ranks`` (most significant first)."""
    value = category
    for i in range(5):
        value = (value << 4) | (ranks[i] if i < len(ranks) else 0)
    return value


def category_of(value: int) -> Category:
    """The category of a high-hand value."""
    return Category(value >> _SHIFT)


def ranks_of(value: int) -> tuple[int, ...]:
    """The tie-break ranks packed in a value, most significant first, zeros dropped."""
    nibbles = ((value >> s) & 0xF for s in (16, 12, 8, 4, 0))
    return tuple(n for n in nibbles if n)


# --- building the tables -------------------------------------------------------------


def _straight_code(top: int, wheel: WheelRank) -> int:
    if top == ACE:
        return _BROADWAY_CODE
    if top == 5:
        return _WHEEL_SECOND_CODE if wheel is WheelRank.SECOND else _WHEEL_LOWEST_CODE
    return top


def _straight_top(ranks: set[int]) -> int | None:
    """The top card of the straight made by five distinct ranks, or None."""
    if len(ranks) != 5:
        return None
    if max(ranks) - min(ranks) == 4:
        return max(ranks)
    if ranks == {ACE, 2, 3, 4, 5}:
        return 5
    return None


def _joker_straight_tops(ranks: set[int]) -> list[int]:
    """Tops of every straight the joker completes with four distinct ranks."""
    tops = []
    for top in range(6, ACE + 1):
        window = set(range(top - 4, top + 1))
        if ranks <= window:
            tops.append(top)
    if ranks <= {ACE, 2, 3, 4, 5}:
        tops.append(5)
    return tops


def _plain_value(ranks: list[int]) -> int:
    """The value of five natural ranks (no joker) ignoring flushes."""
    counts = Counter(ranks)
    # Groups ordered by size, then rank: the tie-break order of every category.
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    shape = tuple(n for _, n in groups)
    order = [r for r, _ in groups]
    if shape == (5,):
        return pack(Category.FIVE_ACES, [ACE])
    if shape == (4, 1):
        return pack(Category.FOUR_OF_A_KIND, order)
    if shape == (3, 2):
        return pack(Category.FULL_HOUSE, order)
    if shape == (3, 1, 1):
        return pack(Category.THREE_OF_A_KIND, order)
    if shape == (2, 2, 1):
        return pack(Category.TWO_PAIR, order)
    if shape == (2, 1, 1, 1):
        return pack(Category.PAIR, order)
    return pack(Category.HIGH_CARD, order)


def _nonflush_value(ranks: list[int], wheel: WheelRank) -> int:
    """Best value of five ranks (``_JOKER_RANK`` for the joker), not suited."""
    natural = [r for r in ranks if r != _JOKER_RANK]
    if len(natural) == 5:
        top = _straight_top(set(natural))
        if top is not None:
            return pack(Category.STRAIGHT, [_straight_code(top, wheel)])
        return _plain_value(natural)
    # The joker as an ace ...
    best = _plain_value([*natural, ACE])
    as_ace_top = _straight_top({*natural, ACE})
    if as_ace_top is not None:
        best = max(best, pack(Category.STRAIGHT, [_straight_code(as_ace_top, wheel)]))
    # ... or completing a straight (only with four distinct natural ranks).
    if len(set(natural)) == 4:
        for top in _joker_straight_tops(set(natural)):
            best = max(best, pack(Category.STRAIGHT, [_straight_code(top, wheel)]))
    return best


def _flush_value(ranks: list[int], wheel: WheelRank) -> int:
    """Best value of five suited cards: distinct ranks, ``_JOKER_RANK`` for the joker."""
    natural = set(ranks) - {_JOKER_RANK}
    tops = [_straight_top(natural)] if len(natural) == 5 else _joker_straight_tops(natural)
    best_top = max(
        (_straight_code(t, wheel) for t in tops if t is not None),
        default=None,
    )
    if best_top == _BROADWAY_CODE:
        return pack(Category.ROYAL_FLUSH)
    if best_top is not None:
        return pack(Category.STRAIGHT_FLUSH, [best_top])
    if len(natural) == 4:
        # The joker is the highest rank of the suit not already in the hand.
        natural.add(max(r for r in range(2, ACE + 1) if r not in natural))
    return pack(Category.FLUSH, sorted(natural, reverse=True))


Tables = tuple[dict[int, int], dict[int, int]]


def _build_tables(wheel: WheelRank) -> Tables:
    symbols = [*range(2, ACE + 1), _JOKER_RANK]
    prime_of = {**{r: _PRIMES[r - 2] for r in range(2, ACE + 1)}, _JOKER_RANK: _JOKER_PRIME}
    bit_of = {**{r: 1 << (r - 2) for r in range(2, ACE + 1)}, _JOKER_RANK: _JOKER_FLUSH_BIT}
    nonflush: dict[int, int] = {}
    flush: dict[int, int] = {}
    for hand in combinations_with_replacement(symbols, 5):
        counts = Counter(hand)
        if counts[_JOKER_RANK] > 1 or max(counts.values()) > 4:
            continue
        ranks = list(hand)
        product = 1
        for r in ranks:
            product *= prime_of[r]
        nonflush[product] = _nonflush_value(ranks, wheel)
        if len(counts) == 5:
            bits = 0
            for r in ranks:
                bits |= bit_of[r]
            flush[bits] = _flush_value(ranks, wheel)
    return nonflush, flush


# Built at the first evaluation, not at import: a tenth of a second that a server
# restarted after a crash would spend before serving again, and that a process which
# never evaluates a hand never spends (docs/DESIGN.md, "Start time"). The default
# wheel's two are filled in place, so the hot path reads the same two dicts always.
_TABLES: dict[WheelRank, Tables] = {}
_NONFLUSH: dict[int, int] = {}
_FLUSH: dict[int, int] = {}


def _tables(wheel: WheelRank) -> Tables:
    tables = _TABLES.get(wheel)
    if tables is None:
        nonflush, flush = _build_tables(wheel)
        if wheel is WheelRank.SECOND:
            _NONFLUSH.update(nonflush)
            _FLUSH.update(flush)
            nonflush, flush = _NONFLUSH, _FLUSH
        tables = _TABLES[wheel] = nonflush, flush
    return tables


# --- evaluation ------------------------------------------------------------------------


def high_value(cards: Sequence[int], wheel: WheelRank = WheelRank.SECOND) -> int:
    """The value of a 5-card high hand: the best legal use of the joker.

    ``cards`` are five distinct card codes; nothing else is checked here (this is
    the hot path: callers that take outside input validate it first).
    """
    a, b, c, d, e = cards
    if wheel is WheelRank.SECOND:
        nonflush, flush = _NONFLUSH, _FLUSH
    else:
        nonflush, flush = _tables(wheel)
    sb = CARD_SUIT_BIT
    try:  # costs nothing until it catches (CPython 3.11)
        if sb[a] & sb[b] & sb[c] & sb[d] & sb[e]:
            rb = CARD_RANK_BIT
            return flush[rb[a] | rb[b] | rb[c] | rb[d] | rb[e]]
        p = CARD_PRIME
        return nonflush[p[a] * p[b] * p[c] * p[d] * p[e]]
    except KeyError:
        if _NONFLUSH:  # the tables are built: these were not five distinct cards
            raise
        _tables(WheelRank.SECOND)  # the first evaluation of the process
        return high_value(cards, wheel)


def _build_low() -> tuple[int, ...]:
    table = [0] * (53 * 53)
    for x in range(53):
        for y in range(53):
            hi, lo = sorted((LOW_RANK[x], LOW_RANK[y]), reverse=True)
            if hi == lo:
                table[x * 53 + y] = pack(Category.PAIR, [hi])
            else:
                table[x * 53 + y] = pack(Category.HIGH_CARD, [hi, lo])
    return tuple(table)


_LOW = _build_low()


def low_value(cards: Sequence[int]) -> int:
    """The value of a 2-card low hand: a pair beats no pair; the joker is an ace."""
    a, b = cards
    return _LOW[a * 53 + b]


def low_value_of(a: int, b: int) -> int:
    """:func:`low_value` of the two cards ``a`` and ``b`` (no sequence to build)."""
    return _LOW[a * 53 + b]


def best_high_value(cards: Iterable[int], wheel: WheelRank = WheelRank.SECOND) -> int:
    """The best 5-card high-hand value among any five of ``cards`` (5 to 7 cards)."""
    return max(high_value(five, wheel) for five in combinations(tuple(cards), 5))


# --- names ---------------------------------------------------------------------------


def _straight_name(code: int) -> str:
    if code == _BROADWAY_CODE:
        return "ace high"
    if code in (_WHEEL_SECOND_CODE, _WHEEL_LOWEST_CODE):
        return "five high"
    return f"{rank_name(code)} high"


def high_name(value: int) -> str:
    """A person's name for a high-hand value: ``"Straight, seven high"``, ``"Pair of aces"``."""
    category = category_of(value)
    r = ranks_of(value)
    if category is Category.FIVE_ACES:
        text = "five aces"
    elif category is Category.ROYAL_FLUSH:
        text = "royal flush"
    elif category is Category.STRAIGHT_FLUSH:
        text = f"straight flush, {_straight_name(r[0])}"
    elif category is Category.FOUR_OF_A_KIND:
        text = f"four {rank_plural(r[0])}"
    elif category is Category.FULL_HOUSE:
        text = f"full house, {rank_plural(r[0])} over {rank_plural(r[1])}"
    elif category is Category.FLUSH:
        text = f"flush, {rank_name(r[0])} high"
    elif category is Category.STRAIGHT:
        text = f"straight, {_straight_name(r[0])}"
    elif category is Category.THREE_OF_A_KIND:
        text = f"three {rank_plural(r[0])}"
    elif category is Category.TWO_PAIR:
        text = f"two pair, {rank_plural(r[0])} and {rank_plural(r[1])}"
    elif category is Category.PAIR:
        text = f"pair of {rank_plural(r[0])}"
    else:
        text = f"{rank_name(r[0])} high"
    return text[0].upper() + text[1:]


def low_name(value: int) -> str:
    """A person's name for a low-hand value: ``"Pair of aces"``, ``"Ace-queen"``."""
    r = ranks_of(value)
    if category_of(value) is Category.PAIR:
        return f"Pair of {rank_plural(r[0])}"
    return f"{rank_name(r[0]).capitalize()}-{rank_name(r[1])}"
