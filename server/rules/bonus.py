"""The bonus side bet on the seven cards, and the best 5-card category of seven cards.

docs/RULES.md, "Bonus bet": an optional bonus bet on the player's 7 cards, paid by a
pay table whatever the main bet's outcome. The classes are the Fortune Pai Gow ones,
best first (the order a pay table pays them in, see :class:`BonusClass`).

Decisions (the published rule pages give no bonus pay table):

- The joker plays as it does in the game (docs/RULES.md, "The joker"): an ace, or the
  card that completes a straight, flush, straight flush or royal flush.
- *Royal flush with royal match*: the seven cards hold a royal flush (natural or
  completed by the joker, as the royal flush class itself) and the two other cards
  are a natural king and queen of one suit (the "royal match" of other bonus games).
  The joker never counts in the match: in a two-card hand it is an ace.
- *7-card straight flush*: seven cards of one suit in sequence, any seven ranks in a
  row, the ace high (8-9-10-J-Q-K-A) or low (A-2-3-4-5-6-7). "Natural" means without
  the joker; "with the joker" means six such cards and the joker filling the seventh
  place.
- *Three pair*: three pairs and an odd card (the joker pairs with an ace, as in the
  game). It cannot coexist with a straight or a flush in seven cards.
- A hand is paid for the first class in pay order that it holds, so three of a
  kind (3 to 1 on the standard table) is paid before a straight (2 to 1) when seven
  cards hold both, as Fortune tables pay. Pay tables must therefore never pay a class
  more than a class above it; :class:`PayTable` checks that.

Speed: the simulator classifies every round, so a hand is classified from a table
look-up keyed by the product of one prime per rank (the rank structure: pairs, sets,
straights) and, only when one suit holds five cards (four and the joker), from that
suit's rank bit mask. No 5-card subset is ever evaluated.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from functools import cache
from itertools import combinations_with_replacement
from types import MappingProxyType

from server.rules.cards import ACE, JOKER
from server.rules.options import RuleOptions
from server.rules.values import Category
from server.rules.wagers import NoOptions, PayLine, Settled, SideBet, SideDeal

# Rank bit for rank r (2..14) is 1 << (r - 2), as in server.rules.values.
_ACE_BIT = 1 << (ACE - 2)
_ROYAL_BITS = 0b1_1111 << (10 - 2)  # 10, J, Q, K, A
_KING_QUEEN = {(13, 12), (12, 13)}


class BonusClass(IntEnum):
    """Bonus classes, best (0) to nothing; the order a pay table pays them in."""

    NATURAL_SEVEN_CARD_STRAIGHT_FLUSH = 0
    ROYAL_FLUSH_WITH_ROYAL_MATCH = 1
    SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER = 2
    FIVE_ACES = 3
    ROYAL_FLUSH = 4
    STRAIGHT_FLUSH = 5
    FOUR_OF_A_KIND = 6
    FULL_HOUSE = 7
    FLUSH = 8
    THREE_OF_A_KIND = 9
    STRAIGHT = 10
    THREE_PAIR = 11
    NOTHING = 12


BONUS_CLASS_NAMES: Mapping[BonusClass, str] = MappingProxyType(
    {
        BonusClass.NATURAL_SEVEN_CARD_STRAIGHT_FLUSH: "natural 7-card straight flush",
        BonusClass.ROYAL_FLUSH_WITH_ROYAL_MATCH: "royal flush with royal match",
        BonusClass.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER: "7-card straight flush with joker",
        BonusClass.FIVE_ACES: "five aces",
        BonusClass.ROYAL_FLUSH: "royal flush",
        BonusClass.STRAIGHT_FLUSH: "straight flush",
        BonusClass.FOUR_OF_A_KIND: "four of a kind",
        BonusClass.FULL_HOUSE: "full house",
        BonusClass.FLUSH: "flush",
        BonusClass.THREE_OF_A_KIND: "three of a kind",
        BonusClass.STRAIGHT: "straight",
        BonusClass.THREE_PAIR: "three pair",
        BonusClass.NOTHING: "nothing",
    }
)


BONUS_CLASS_CODES: Mapping[BonusClass, str] = MappingProxyType(
    {
        BonusClass.NATURAL_SEVEN_CARD_STRAIGHT_FLUSH: "natural_7_card_straight_flush",
        BonusClass.ROYAL_FLUSH_WITH_ROYAL_MATCH: "royal_flush_royal_match",
        BonusClass.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER: "7_card_straight_flush_joker",
        BonusClass.FIVE_ACES: "five_aces",
        BonusClass.ROYAL_FLUSH: "royal_flush",
        BonusClass.STRAIGHT_FLUSH: "straight_flush",
        BonusClass.FOUR_OF_A_KIND: "four_of_a_kind",
        BonusClass.FULL_HOUSE: "full_house",
        BonusClass.FLUSH: "flush",
        BonusClass.THREE_OF_A_KIND: "three_of_a_kind",
        BonusClass.STRAIGHT: "straight",
        BonusClass.THREE_PAIR: "three_pair",
        BonusClass.NOTHING: "nothing",
    }
)
"""Each class's stable id on the wire, ``bonus_class``: at most 32 characters
(protocol/PROTOCOL.md, section 9)."""


# --- pay tables ------------------------------------------------------------------------


class PayTableError(ValueError):
    """An unknown pay table name, or a pay table that is not valid."""


@dataclass(frozen=True, slots=True)
class PayTable:
    """Odds "X to 1" per bonus class; a class not listed pays nothing (loses the bet).

    Odds never grow from a class to a better one's (see the module docstring), and
    :attr:`BonusClass.NOTHING` never pays.
    """

    name: str
    odds: Mapping[BonusClass, int]

    def __post_init__(self) -> None:
        frozen = MappingProxyType(dict(self.odds))
        object.__setattr__(self, "odds", frozen)
        if frozen.get(BonusClass.NOTHING, 0) != 0:
            raise PayTableError(f"pay table {self.name!r}: 'nothing' cannot pay")
        previous = None
        for cls in BonusClass:
            x = frozen.get(cls, 0)
            if not isinstance(x, int) or x < 0:
                raise PayTableError(f"pay table {self.name!r}: odds are whole numbers >= 0")
            if previous is not None and x > previous:
                raise PayTableError(
                    f"pay table {self.name!r}: {BONUS_CLASS_NAMES[cls]} pays more than "
                    "a better class"
                )
            if x:
                previous = x

    def odds_of(self, cls: BonusClass) -> int:
        """The odds "X to 1" paid on ``cls``; 0 when it does not pay."""
        return self.odds.get(cls, 0)

    def payout(self, cls: BonusClass, bet: int) -> int:
        """Chips returned to the player for a bonus bet of ``bet`` on a hand of ``cls``.

        A paying class returns the bet and ``odds * bet``; any other returns 0 (the
        bet is lost). Integer chips, so no rounding is ever needed.
        """
        if isinstance(bet, bool) or not isinstance(bet, int) or bet < 0:
            raise ValueError(f"a bet is a non-negative number of chips, not {bet!r}")
        x = self.odds.get(cls, 0)
        return bet * (x + 1) if x else 0

    def net(self, cls: BonusClass, bet: int) -> int:
        """The player's change from a bonus bet of ``bet`` on a hand of ``cls``."""
        return self.payout(cls, bet) - bet


def _table(name: str, *odds: int) -> PayTable:
    return PayTable(name, dict(zip(BonusClass, odds, strict=False)))


PAY_TABLES: Mapping[str, PayTable] = MappingProxyType(
    {
        # The common Fortune Pai Gow table (straight or better pays; three pair does not).
        "standard": _table("standard", 8000, 2000, 1000, 400, 150, 50, 25, 5, 4, 3, 2, 0),
        # The same with a smaller top prize for the natural 7-card straight flush,
        # as some casinos post it.
        "jackpot-5000": _table("jackpot-5000", 5000, 2000, 1000, 400, 150, 50, 25, 5, 4, 3, 2, 0),
    }
)
DEFAULT_PAY_TABLE = "standard"


def pay_table(name: str) -> PayTable:
    """The pay table called ``name`` (``RuleOptions.bonus_pay_table``)."""
    table = PAY_TABLES.get(name)
    if table is None:
        known = ", ".join(PAY_TABLES)
        raise PayTableError(f"{name!r} is not a pay table (known: {known})")
    return table


def bonus_payout(cards: Sequence[int], bet: int, table: str | PayTable = DEFAULT_PAY_TABLE) -> int:
    """Chips returned for a bonus bet of ``bet`` on seven ``cards`` (0 when it loses)."""
    if isinstance(table, str):
        table = pay_table(table)
    return table.payout(classify_bonus(cards), bet)


# --- the tables behind classification --------------------------------------------------

_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
_JOKER_PRIME = 43
CARD_PRIME: tuple[int, ...] = (*(_PRIMES[c >> 2] for c in range(52)), _JOKER_PRIME)
# Suit counts packed in one int, four bits per suit; the joker adds nothing.
CARD_SUIT_COUNT: tuple[int, ...] = (*(1 << ((c & 3) * 4) for c in range(52)), 0)


def _ext(mask: int) -> int:
    """A 13-bit rank mask (2..A) as a 14-bit one whose bit 0 is the ace played low."""
    return (mask << 1) | (1 if mask & _ACE_BIT else 0)


def _windows(length: int) -> list[int]:
    return [((1 << length) - 1) << low for low in range(14 - length + 1)]


_WINDOWS5 = _windows(5)
_WINDOWS7 = _windows(7)


def _covers(mask: int, windows: list[int], missing: int) -> bool:
    """Whether some window lacks at most ``missing`` of its ranks in ``mask``."""
    ext = _ext(mask)
    return any((w & ~ext).bit_count() <= missing for w in windows)


def _build_masks() -> tuple[bytes, bytes, bytes, bytes]:
    straight = bytearray(8192)
    straight_j = bytearray(8192)
    seven = bytearray(8192)
    seven_j = bytearray(8192)
    for mask in range(8192):
        straight[mask] = _covers(mask, _WINDOWS5, 0)
        straight_j[mask] = _covers(mask, _WINDOWS5, 1)
        seven[mask] = _covers(mask, _WINDOWS7, 0)
        seven_j[mask] = _covers(mask, _WINDOWS7, 1)
    return bytes(straight), bytes(straight_j), bytes(seven), bytes(seven_j)


# Indexed by a 13-bit rank mask: a 5-card straight (without / with one joker), a
# 7-card straight (without / with one joker).
_STRAIGHT, _STRAIGHT_J, _SEVEN, _SEVEN_J = _build_masks()


def _rank_entry(ranks: tuple[int, ...]) -> tuple[int, int]:
    """(best non-flush Category, best non-flush BonusClass) of a multiset of ranks.

    ``ranks`` holds 2..14 and 15 for the joker; the joker is an ace for sets and
    pairs, or completes a straight.
    """
    joker = 15 in ranks
    natural = [r for r in ranks if r != 15]
    counts = Counter(natural)
    if joker:
        counts[ACE] += 1
    mask = 0
    for r in natural:
        mask |= 1 << (r - 2)
    sizes = sorted(counts.values(), reverse=True)
    second = sizes[1] if len(sizes) > 1 else 0
    straight = bool((_STRAIGHT_J if joker else _STRAIGHT)[mask])
    pairs = sum(1 for n in sizes if n == 2)
    if sizes[0] >= 5:
        return Category.FIVE_ACES, BonusClass.FIVE_ACES
    if sizes[0] == 4:
        return Category.FOUR_OF_A_KIND, BonusClass.FOUR_OF_A_KIND
    if sizes[0] == 3 and second >= 2:
        return Category.FULL_HOUSE, BonusClass.FULL_HOUSE
    if sizes[0] == 3:
        return (
            Category.STRAIGHT if straight else Category.THREE_OF_A_KIND,
            BonusClass.THREE_OF_A_KIND,
        )
    if straight:
        return Category.STRAIGHT, BonusClass.STRAIGHT
    if pairs >= 3:
        return Category.TWO_PAIR, BonusClass.THREE_PAIR
    if pairs == 2:
        return Category.TWO_PAIR, BonusClass.NOTHING
    if pairs == 1:
        return Category.PAIR, BonusClass.NOTHING
    return Category.HIGH_CARD, BonusClass.NOTHING


def _build_ranks() -> dict[int, tuple[int, int]]:
    table: dict[int, tuple[int, int]] = {}
    symbols = [*range(2, ACE + 1), 15]
    prime = {**{r: _PRIMES[r - 2] for r in range(2, ACE + 1)}, 15: _JOKER_PRIME}
    for hand in combinations_with_replacement(symbols, 7):
        counts = Counter(hand)
        if counts[15] > 1 or any(n > 4 for r, n in counts.items() if r != 15):
            continue
        product = 1
        for r in hand:
            product *= prime[r]
        table[product] = _rank_entry(hand)
    return table


@cache
def _ranks_table() -> dict[int, tuple[int, int]]:
    # Built on first use (about half a second), so commands that never classify start fast.
    return _build_ranks()


def _flush_suit(counts: int, need: int) -> int:
    """The suit holding at least ``need`` cards in packed suit counts, or -1."""
    for suit in range(4):
        if (counts >> (suit * 4)) & 0xF >= need:
            return suit
    return -1


def _suit_mask(cards: Sequence[int], suit: int) -> int:
    mask = 0
    for c in cards:
        if c != JOKER and c & 3 == suit:
            mask |= 1 << (c >> 2)
    return mask


def _royal_match(cards: Sequence[int], suit: int) -> bool:
    """Whether the cards outside the royal flush of ``suit`` are a suited natural K-Q."""
    rest = [
        c for c in cards if c != JOKER and not (c & 3 == suit and (1 << (c >> 2)) & _ROYAL_BITS)
    ]
    if len(rest) != 2:
        return False  # the joker is one of the two other cards
    a, b = rest
    return a & 3 == b & 3 and ((a >> 2) + 2, (b >> 2) + 2) in _KING_QUEEN


def _check(cards: Sequence[int]) -> None:
    if len(cards) != 7 or len(set(cards)) != 7 or not all(0 <= c <= JOKER for c in cards):
        raise ValueError("a bonus hand is seven different card codes 0..52")


def classify_bonus(cards: Sequence[int]) -> BonusClass:
    """The best bonus class that seven different cards hold (the first in pay order).

    Raises ``ValueError`` unless ``cards`` are seven different card codes.
    """
    _check(cards)
    return classify_bonus_unchecked(cards)


def classify_bonus_unchecked(cards: Sequence[int]) -> BonusClass:
    """:func:`classify_bonus` without validating ``cards`` (the simulator's hot path)."""
    a, b, c, d, e, f, g = cards
    p = CARD_PRIME
    _, best = _ranks_table()[p[a] * p[b] * p[c] * p[d] * p[e] * p[f] * p[g]]
    sc = CARD_SUIT_COUNT
    joker = 1 if JOKER in cards else 0
    suit = _flush_suit(sc[a] + sc[b] + sc[c] + sc[d] + sc[e] + sc[f] + sc[g], 5 - joker)
    if suit < 0:
        return BonusClass(best)
    mask = _suit_mask(cards, suit)
    held = mask.bit_count()
    if joker:
        if held == 6 and _SEVEN_J[mask]:
            return BonusClass.SEVEN_CARD_STRAIGHT_FLUSH_WITH_JOKER
    elif held == 7 and _SEVEN[mask]:
        return BonusClass.NATURAL_SEVEN_CARD_STRAIGHT_FLUSH
    if (mask & _ROYAL_BITS).bit_count() + joker >= 5:
        if _royal_match(cards, suit):
            return BonusClass.ROYAL_FLUSH_WITH_ROYAL_MATCH
        # Five aces needs the joker and four aces: no royal flush is then possible.
        return BonusClass.ROYAL_FLUSH
    if best == BonusClass.FIVE_ACES:
        return BonusClass.FIVE_ACES
    if (_STRAIGHT_J if joker else _STRAIGHT)[mask]:
        return BonusClass.STRAIGHT_FLUSH
    return BonusClass(min(best, BonusClass.FLUSH))


def bonus_class_of_ranks(cards: Sequence[int]) -> BonusClass:
    """The bonus class of seven cards read from their ranks alone, as if no suit held
    five of them (four and the joker): their class whenever none does. The census
    (:mod:`server.rules.bonus_census`) counts hands by their ranks so."""
    a, b, c, d, e, f, g = cards
    p = CARD_PRIME
    return BonusClass(_ranks_table()[p[a] * p[b] * p[c] * p[d] * p[e] * p[f] * p[g]][1])


def classify(cards: Sequence[int]) -> Category:
    """The category of the best 5-card high hand among seven different cards.

    Raises ``ValueError`` unless ``cards`` are seven different card codes.
    """
    _check(cards)
    a, b, c, d, e, f, g = cards
    p = CARD_PRIME
    best, _ = _ranks_table()[p[a] * p[b] * p[c] * p[d] * p[e] * p[f] * p[g]]
    sc = CARD_SUIT_COUNT
    joker = 1 if JOKER in cards else 0
    suit = _flush_suit(sc[a] + sc[b] + sc[c] + sc[d] + sc[e] + sc[f] + sc[g], 5 - joker)
    if suit < 0:
        return Category(best)
    mask = _suit_mask(cards, suit)
    if (mask & _ROYAL_BITS).bit_count() + joker >= 5:
        flush = Category.ROYAL_FLUSH
    elif (_STRAIGHT_J if joker else _STRAIGHT)[mask]:
        flush = Category.STRAIGHT_FLUSH
    else:
        flush = Category.FLUSH
    return Category(max(best, flush))


# --- the bonus bet as a side bet (server/rules/wagers.py) -------------------------------

BONUS = "bonus"
"""The bonus bet's kind."""


def _settle_bonus(deal: SideDeal, stake: int, options: NoOptions) -> Settled:
    """The bonus bet on the seat's seven cards, by the table's pay table."""
    cls = classify_bonus(deal.cards)
    back = pay_table(deal.rules.bonus_pay_table).payout(cls, stake)
    # A line of the pay table, or nil: a bonus that pays nothing names no class
    # (protocol/PROTOCOL.md, section 9).
    return Settled(BONUS_CLASS_CODES[cls] if back else None, back)


def _bonus_lines(rules: RuleOptions, options: NoOptions) -> tuple[PayLine, ...]:
    table = pay_table(rules.bonus_pay_table)
    return tuple(
        PayLine(BONUS_CLASS_CODES[cls], BONUS_CLASS_NAMES[cls], x)
        for cls, x in table.odds.items()
        if x
    )


def _no_limits(options: NoOptions) -> tuple[int, int]:
    # The bonus bet's limits are TableConfig.bonus_min/bonus_max, fields release 0.1.0
    # reads (server/table/state.py, TableConfig.limits).
    raise LookupError("the bonus bet's limits are the table's bonus_min and bonus_max")


BONUS_BET = SideBet(
    kind=BONUS,
    label="Bonus",
    options=NoOptions,
    settle=_settle_bonus,
    limits=_no_limits,
    pay_lines=_bonus_lines,
)
"""The bonus bet (docs/RULES.md, "Bonus bet")."""
