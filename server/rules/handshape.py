"""What the house ways need to know about seven cards, found in one pass.

Both house ways (``houseway_party``, ``houseway_pair_classes``) start from
:func:`analyse`, which reads the seven cards into a 53-bit mask and groups the ranks
into five of a kind, fours, threes, pairs and single cards, best rank first. In
these groups the joker counts as an ace (docs/RULES.md, "The joker" and "House way";
the PartyCasino rules: "Le joker remplace toujours un As, à moins qu'il ne soit
utilisé pour compléter une quinte, une couleur ..."): a joker with an ace is a pair
of aces, a joker without an ace is an ace as a single card, four aces and the joker
are five aces.

The other use of the joker, completing a straight, flush or straight flush, is
looked at only when a table look-up on the rank bits and the suit counts says a
straight or a flush is possible at all. :func:`made_hands` then lists the 5-card
straights, flushes and straight flushes the seven cards hold (with and without the
joker), each with its value and the two cards it leaves for the low hand, and
:func:`best_made` picks the one that leaves the best low hand (the "donneur" page:
"jouez la catégorie qui vous permettra de retourner les cartes les plus fortes à
l'endroit").

A house way names its low hand by ranks (:func:`split_by_ranks`) or takes a made
hand's split; :func:`checked` is the safety net every house way ends with.
Everything here is pure; the only tables are built at import.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import NamedTuple

from server.rules.cards import ACE, JOKER
from server.rules.splits import LOW_INDEX_PAIRS, Split
from server.rules.values import Category, WheelRank, high_value, low_value_of, pack

__all__ = [
    "HandShape",
    "Made",
    "analyse",
    "best_legal_split",
    "best_made",
    "checked",
    "made_hands",
    "made_split",
    "split_by_ranks",
]

_JOKER_BIT = 1 << JOKER
_ALL_CARDS = (1 << (JOKER + 1)) - 1
_SUIT_MASKS = tuple(sum(1 << (r * 4 + s) for r in range(13)) for s in range(4))
# _NIBBLE_SUITS[n]: the suits whose bit is set in the 4-bit rank nibble n.
_NIBBLE_SUITS: tuple[tuple[int, ...], ...] = tuple(
    tuple(s for s in range(4) if n >> s & 1) for n in range(16)
)
_NIBBLE_COUNT: tuple[int, ...] = tuple(len(s) for s in _NIBBLE_SUITS)
_NIBBLE_LOW: tuple[int, ...] = tuple(s[0] if s else -1 for s in _NIBBLE_SUITS)

# The ten straights as (ranks, 13-bit rank mask with bit rank-2), best first; the
# wheel A-2-3-4-5 last (its place in the ranking is values.py's business).
_WINDOWS: tuple[tuple[tuple[int, ...], int], ...] = tuple(
    (ranks, sum(1 << (r - 2) for r in ranks))
    for ranks in [tuple(range(top, top - 5, -1)) for top in range(ACE, 5, -1)] + [(ACE, 5, 4, 3, 2)]
)


def _build_window_most() -> bytes:
    """For each 13-bit set of natural ranks, the most of them inside one straight."""
    return bytes(max((bits & mask).bit_count() for _, mask in _WINDOWS) for bits in range(1 << 13))


_WINDOW_MOST = _build_window_most()
# Suit counts packed one byte per suit: adding 128 - n to every byte sets a byte's
# top bit exactly when that suit holds n cards or more.
_SUIT_COUNT: tuple[int, ...] = (*(1 << ((c & 3) << 3) for c in range(52)), 0)
_BYTE_TOPS = 0x80808080
_FIVE_SUITED = 0x7B7B7B7B
_FOUR_SUITED = 0x7C7C7C7C


class HandShape:
    """Seven cards, grouped by rank with the joker counted as an ace.

    ``cards`` are the seven codes, highest code first (the joker, 52, leads), so
    everything built from a shape is independent of the order the cards came in.
    ``fives``, ``fours``, ``threes``, ``pairs`` and ``singles`` hold ranks (2..14),
    best first. ``may_make`` says whether some five of the cards can make a
    straight or a flush (with the joker's help or not).
    """

    __slots__ = (
        "cards",
        "fives",
        "fours",
        "joker",
        "mask",
        "may_make",
        "pairs",
        "singles",
        "threes",
    )

    def __init__(
        self,
        cards: tuple[int, ...],
        mask: int,
        joker: bool,
        groups: tuple[list[int], list[int], list[int], list[int], list[int]],
        may_make: bool,
    ) -> None:
        self.cards = cards
        self.mask = mask
        self.joker = joker
        self.singles, self.pairs, self.threes, self.fours, self.fives = groups
        self.may_make = may_make

    def cards_of(self, rank: int) -> list[int]:
        """The hand's cards of ``rank``, lowest code first; for aces the joker comes last."""
        base = (rank - 2) << 2
        out = [base + s for s in _NIBBLE_SUITS[(self.mask >> base) & 15]]
        if rank == ACE and self.joker:
            out.append(JOKER)
        return out


def analyse(cards: Sequence[int]) -> HandShape:
    """Group seven distinct cards by rank (joker as an ace) in one pass.

    Raises :class:`ValueError` unless ``cards`` are seven distinct codes 0..52.
    """
    desc = sorted(cards, reverse=True)
    if len(desc) != 7 or desc[0] > JOKER or desc[6] < 0:
        raise ValueError("a hand to set is seven distinct card codes 0..52")
    # In descending code order the joker (52) comes just before the aces, so with
    # the joker read as an ace each rank is one run: run lengths give the groups,
    # best rank first, without counting or sorting.
    groups: tuple[list[int], list[int], list[int], list[int], list[int]] = ([], [], [], [], [])
    mask = 0
    natural_ranks = 0
    suits = 0
    run_rank = -1
    run = 0
    suit_count = _SUIT_COUNT
    for c in desc:
        mask |= 1 << c
        r = c >> 2
        if r == 13:  # the joker
            r = 12
        else:
            natural_ranks |= 1 << r
            suits += suit_count[c]
        if r == run_rank:
            run += 1
        else:
            if run:
                groups[run - 1].append(run_rank + 2)
            run_rank = r
            run = 1
    groups[run - 1].append(run_rank + 2)
    if mask.bit_count() != 7:
        raise ValueError("a hand to set is seven distinct card codes 0..52")
    joker = desc[0] == JOKER
    # A straight or flush is possible when some straight holds five of the natural
    # ranks (four, with the joker), or some suit holds five cards (four + joker).
    if joker:
        may_make = _WINDOW_MOST[natural_ranks] >= 4 or bool((suits + _FOUR_SUITED) & _BYTE_TOPS)
    else:
        may_make = _WINDOW_MOST[natural_ranks] == 5 or bool((suits + _FIVE_SUITED) & _BYTE_TOPS)
    return HandShape(tuple(desc), mask, joker, groups, may_make)


def _descending(mask: int) -> tuple[int, ...]:
    """The card codes in ``mask``, highest first."""
    out = []
    while mask:
        top = mask.bit_length() - 1
        out.append(top)
        mask ^= 1 << top
    return tuple(out)


# --- straights, flushes and straight flushes -------------------------------------------


class Made(NamedTuple):
    """A straight, flush or straight flush kept in the high hand, and what it leaves."""

    low_value: int
    high_value: int
    high: tuple[int, ...]
    low: tuple[int, int]


def _made(shape: HandShape, five_mask: int, wheel: WheelRank) -> Made:
    rest = shape.mask & ~five_mask
    a = rest.bit_length() - 1
    b = (rest ^ (1 << a)).bit_length() - 1
    high = tuple(c for c in shape.cards if five_mask >> c & 1)
    return Made(low_value_of(a, b), high_value(high, wheel), high, (a, b))


def made_hands(shape: HandShape, wheel: WheelRank = WheelRank.SECOND) -> list[Made]:
    """Every 5-card straight, flush and straight flush in the hand, with what it leaves.

    Flushes: every five cards of one suit (the joker fits any suit). Straights: for
    each of the ten straights, one card per rank (the lowest code: for a plain
    straight the suits change nothing in either hand, and a straight that could be
    suited is a flush found above), the joker filling the missing rank or, when
    none is missing, standing in for each rank in turn, which frees that rank's
    card for the low hand (``9 8 7 6 5 5 JK``: the joker as the ten leaves ``5 5``).
    Empty when ``shape.may_make`` is false. Duplicates are harmless.
    """
    if not shape.may_make:
        return []
    out: list[Made] = []
    mask = shape.mask
    joker = shape.joker
    for suit_mask in _SUIT_MASKS:
        suited = mask & (suit_mask | _JOKER_BIT)
        if suited.bit_count() >= 5:
            codes = _descending(suited)
            for five in combinations(codes, 5):
                five_mask = 0
                for c in five:
                    five_mask |= 1 << c
                out.append(_made(shape, five_mask, wheel))
    for ranks, _ in _WINDOWS:
        picked = 0
        missing = 0
        for r in ranks:
            low_suit = _NIBBLE_LOW[(mask >> ((r - 2) << 2)) & 15]
            if low_suit < 0:
                missing += 1
                if missing > 1 or not joker:
                    break
            else:
                picked |= 1 << (((r - 2) << 2) + low_suit)
        else:
            if missing:
                out.append(_made(shape, picked | _JOKER_BIT, wheel))
            else:
                out.append(_made(shape, picked, wheel))
                if joker:
                    rest = picked
                    while rest:
                        bit = rest & -rest
                        rest ^= bit
                        out.append(_made(shape, (picked ^ bit) | _JOKER_BIT, wheel))
    return out


def best_made(made: Sequence[Made], at_least: Category = Category.STRAIGHT) -> Made | None:
    """The made hand of category ``at_least`` or better that leaves the best low hand.

    Equal low hands: the better high hand. Still equal: the first listed (the list
    comes from the cards in code order, so the choice does not depend on the order
    the cards were given in).
    """
    floor = pack(at_least)
    best: Made | None = None
    for m in made:
        if m.high_value >= floor and (
            best is None
            or m.low_value > best.low_value
            or (m.low_value == best.low_value and m.high_value > best.high_value)
        ):
            best = m
    return best


# --- turning a decision into a split -----------------------------------------------------


def split_by_ranks(
    shape: HandShape, first: int, second: int, wheel: WheelRank = WheelRank.SECOND
) -> Split:
    """The split whose low hand is a card of rank ``first`` and one of rank ``second``.

    ``first == second`` asks for a pair of that rank. The joker is one of the aces.
    When the hand holds more cards of a rank than the low hand takes (three of a
    kind, four of a kind, an ace and the joker), the cards left in the high hand are
    those that give it the best value; equal values keep the lowest codes in the
    low hand, so a natural ace goes in front before the joker does (the joker in the
    high hand is never worse than an ace there).
    """
    if first != second:
        a = _only(shape, first)
        b = _only(shape, second)
        if a >= 0 and b >= 0:
            return _split(shape, a, b)
        firsts = shape.cards_of(first)
        options = [(a, b) for a in firsts for b in shape.cards_of(second)]
    else:
        firsts = shape.cards_of(first)
        if len(firsts) == 2:
            return _split(shape, firsts[0], firsts[1])
        options = list(combinations(firsts, 2))
    best = _split(shape, *options[0])
    best_value = high_value(best.high, wheel)
    for a, b in options[1:]:
        candidate = _split(shape, a, b)
        value = high_value(candidate.high, wheel)
        if value > best_value:
            best, best_value = candidate, value
    return best


def _only(shape: HandShape, rank: int) -> int:
    """The hand's one card of ``rank`` (the joker for a lone one as an ace), else -1."""
    base = (rank - 2) << 2
    nib = (shape.mask >> base) & 15
    if rank == ACE and shape.joker:
        return JOKER if not nib else -1
    return base + _NIBBLE_LOW[nib] if _NIBBLE_COUNT[nib] == 1 else -1


def _split(shape: HandShape, a: int, b: int) -> Split:
    high = list(shape.cards)
    high.remove(a)
    high.remove(b)
    return Split(high=tuple(high), low=(a, b))


def made_split(made: Made) -> Split:
    """The split that keeps ``made`` in the high hand."""
    return Split(high=made.high, low=made.low)


def checked(shape: HandShape, split: Split, wheel: WheelRank = WheelRank.SECOND) -> Split:
    """``split`` when it is legal, else :func:`best_legal_split` (the safety net).

    The house-way clauses are written never to foul; this guard makes that a
    guarantee rather than a claim.
    """
    low = split.low
    if high_value(split.high, wheel) > low_value_of(low[0], low[1]):
        return split
    return best_legal_split(shape.cards, wheel)


def best_legal_split(cards: Sequence[int], wheel: WheelRank = WheelRank.SECOND) -> Split:
    """The legal split with the best low hand; equal low hands, the best high hand.

    The fallback when a clause would foul: keep the hand legal and send the
    strongest two cards the rules allow to the front, which is what the rule pages of
    both house ways aim at. Ties beyond that go to the first split in the order of
    ``cards`` (callers pass them sorted). There is always a legal split (the best five
    cards beat the other two).
    """
    best: Split | None = None
    best_key = (-1, -1)
    for i, j in LOW_INDEX_PAIRS:
        low = low_value_of(cards[i], cards[j])
        if low < best_key[0]:
            continue
        high = tuple(c for k, c in enumerate(cards) if k not in (i, j))
        value = high_value(high, wheel)
        if value > low and (low, value) > best_key:
            best, best_key = Split(high=high, low=(cards[i], cards[j])), (low, value)
    if best is None:  # unreachable: the best five cards always outrank the other two
        raise ValueError("no legal split")
    return best
