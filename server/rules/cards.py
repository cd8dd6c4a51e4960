"""Cards and the deck, as the rules engine uses them.

The integer codes and the text form are the wire's (``protocol.cards``): one table of
card numbers for the engine, the protocol and every client (docs/CONVENTIONS.md).
docs/RULES.md, "Cards and deal": one deck of 53 cards, the 52 usual cards and one joker;
suits have no rank.
"""

from __future__ import annotations

from protocol.cards import (
    DECK_SIZE,
    JOKER,
    RANK_CHARS,
    RANK_NAMES,
    RANK_PLURALS,
    SUIT_CHARS,
    CardError,
    card_text,
    cards_text,
    make_card,
    parse_card,
    parse_cards,
    rank_of,
    suit_of,
)

__all__ = [
    "ACE",
    "DECK",
    "DECK_SIZE",
    "JOKER",
    "RANK_CHARS",
    "RANK_NAMES",
    "RANK_PLURALS",
    "SUIT_CHARS",
    "CardError",
    "card_text",
    "cards_text",
    "make_card",
    "parse_card",
    "parse_cards",
    "rank_name",
    "rank_of",
    "rank_plural",
    "suit_of",
]

ACE = 14
DECK: tuple[int, ...] = tuple(range(DECK_SIZE))


def rank_name(rank: int) -> str:
    """``"ace"`` for 14, ``"seven"`` for 7."""
    return RANK_NAMES[rank - 2]


def rank_plural(rank: int) -> str:
    """``"aces"`` for 14, ``"sixes"`` for 6."""
    return RANK_PLURALS[rank - 2]
