"""Card codes on the wire: the one table of card numbers shared by server and clients.

A card is the integer ``(rank - 2) * 4 + suit``: ranks 2..14 (J=11, Q=12, K=13, A=14),
suits clubs=0, diamonds=1, hearts=2, spades=3; the joker is 52. So 0 is ``2c`` and
51 is ``As``. The text form is a rank character from ``23456789TJQKA`` and a suit
character from ``cdhs``; the joker is ``JK``.
"""

from __future__ import annotations

from collections.abc import Iterable

JOKER = 52
DECK_SIZE = 53
RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"
SUIT_SYMBOLS = "♣♦♥♠"
RANK_NAMES = (
    "two", "three", "four", "five", "six", "seven", "eight",
    "nine", "ten", "jack", "queen", "king", "ace",
)  # fmt: skip
RANK_PLURALS = (
    "twos", "threes", "fours", "fives", "sixes", "sevens", "eights",
    "nines", "tens", "jacks", "queens", "kings", "aces",
)  # fmt: skip


class CardError(ValueError):
    """A card token or code that is not a card; the message says which and why."""


def rank_of(card: int) -> int:
    """The rank 2..14 of a non-joker card code."""
    return (card >> 2) + 2


def suit_of(card: int) -> int:
    """The suit 0..3 (clubs, diamonds, hearts, spades) of a non-joker card code."""
    return card & 3


def make_card(rank: int, suit: int) -> int:
    """The code of the card of ``rank`` (2..14) and ``suit`` (0..3)."""
    if not 2 <= rank <= 14:
        raise CardError(f"rank {rank} is not in 2..14")
    if not 0 <= suit <= 3:
        raise CardError(f"suit {suit} is not in 0..3")
    return (rank - 2) * 4 + suit


def card_text(card: int) -> str:
    """The text form of a card code: ``As``, ``Td``, ``JK``."""
    if card == JOKER:
        return "JK"
    if not 0 <= card < JOKER:
        raise CardError(f"card code {card} is not in 0..52")
    return RANK_CHARS[card >> 2] + SUIT_CHARS[card & 3]


def parse_card(token: str) -> int:
    """The code of one card in text form; raises :class:`CardError` naming the token."""
    text = token.strip()
    if text.upper() in ("JK", "JOKER", "*"):
        return JOKER
    if text[:2] == "10":
        text = "T" + text[2:]
    if len(text) != 2:
        raise CardError(f"{token!r} is not a card: expected a rank and a suit like 'As' or 'JK'")
    rank_char, suit_char = text[0].upper(), text[1].lower()
    if rank_char not in RANK_CHARS:
        raise CardError(f"{token!r}: {text[0]!r} is not a rank (one of {RANK_CHARS})")
    if suit_char not in SUIT_CHARS:
        raise CardError(f"{token!r}: {text[1]!r} is not a suit (one of {SUIT_CHARS})")
    return RANK_CHARS.index(rank_char) * 4 + SUIT_CHARS.index(suit_char)


def parse_cards(text: str | Iterable[str], count: int | None = None) -> tuple[int, ...]:
    """Cards from space- or comma-separated text (or tokens).

    Raises :class:`CardError` for a bad token, a card given twice, or (when ``count``
    is given) the wrong number of cards.
    """
    tokens = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    cards = tuple(parse_card(t) for t in tokens)
    if len(set(cards)) != len(cards):
        seen: set[int] = set()
        for card in cards:
            if card in seen:
                raise CardError(f"{card_text(card)} is given twice")
            seen.add(card)
    if count is not None and len(cards) != count:
        raise CardError(f"expected {count} cards, got {len(cards)}")
    return cards


def cards_text(cards: Iterable[int]) -> str:
    """Cards in text form, separated by spaces."""
    return " ".join(card_text(c) for c in cards)
