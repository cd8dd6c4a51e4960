"""What every ``paigow-rules`` subcommand shares: its name and defaults, and reading
cards and seeds from the command line or standard input.

Bad input raises :class:`InputError`, whose message names the bad token; the command
line prints it and exits with status 2.
"""

from __future__ import annotations

import hashlib

from protocol.fairness import SEED_BYTES
from server.rules.cards import DECK_SIZE, JOKER, CardError, card_text, parse_card
from server.rules.options import RuleOptions

PROG = "paigow-rules"
EXIT_USAGE = 2
DEFAULTS = RuleOptions()


class InputError(ValueError):
    """Bad input from the command line or standard input; the message says what."""


def _token_table() -> dict[str, int]:
    # Every spelling of every card in either case, so batch lines skip parse_card.
    table: dict[str, int] = {}
    for code in range(DECK_SIZE):
        text = card_text(code)
        for r in {text[0].upper(), text[0].lower()}:
            for s in {text[1].lower(), text[1].upper()}:
                table[r + s] = code
        if text[0] == "T" and code != JOKER:
            table["10" + text[1]] = table["10" + text[1].upper()] = code
    for spelling in ("JK", "jk", "Jk", "jK", "JOKER", "joker", "Joker", "*"):
        table[spelling] = JOKER
    return table


_TOKENS = _token_table()


def parse_hand(text: str, counts: tuple[int, ...]) -> tuple[int, ...]:
    """Cards from one line of text; raises :class:`InputError` naming the bad token."""
    tokens = text.replace(",", " ").split()
    table = _TOKENS
    try:
        cards = tuple([table[t] for t in tokens])
    except KeyError:
        try:
            cards = tuple(parse_card(t) for t in tokens)
        except CardError as exc:
            raise InputError(str(exc)) from None
    if len(cards) not in counts:
        wanted = " or ".join(str(n) for n in counts)
        raise InputError(f"expected {wanted} cards, got {len(cards)}: {text.strip()!r}")
    if len(set(cards)) != len(cards):
        seen: set[int] = set()
        for card in cards:
            if card in seen:
                raise InputError(f"{card_text(card)} is given twice")
            seen.add(card)
    return cards


def seed_from_text(text: str) -> bytes:
    """A 32-byte seed: 64 hex digits as they are, any other text by its SHA-256."""
    stripped = text.strip()
    if len(stripped) == 2 * SEED_BYTES:
        try:
            return bytes.fromhex(stripped)
        except ValueError:
            pass
    return hashlib.sha256(stripped.encode()).digest()


def hex_seed(text: str) -> bytes:
    """A 32-byte seed given as 64 hex digits; raises :class:`InputError` otherwise."""
    try:
        seed = bytes.fromhex(text.strip())
    except ValueError:
        raise InputError(f"{text!r} is not a hex seed") from None
    if len(seed) != SEED_BYTES:
        raise InputError(f"{text!r} is not {SEED_BYTES} bytes ({2 * SEED_BYTES} hex digits)")
    return seed
