"""Splitting seven cards into a 5-card high hand and a 2-card low hand.

docs/RULES.md, "Setting the hands": the high hand must outrank the low hand; a split
where it does not is a foul. The PartyCasino rules: "La combinaison des cartes de votre
2ème main haute DOIT avoir une valeur inférieure à celle de la main la plus haute."
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import combinations

from server.rules.cards import CardError, card_text
from server.rules.values import WheelRank, high_value, low_value

HAND_SIZE = 7
LOW_SIZE = 2
# The 21 ways to choose the two low cards among seven positions.
LOW_INDEX_PAIRS: tuple[tuple[int, int], ...] = tuple(
    (i, j) for i, j in combinations(range(HAND_SIZE), LOW_SIZE)
)


class FoulPolicy(StrEnum):
    """Table option ``foul``: what a fouled split does (docs/RULES.md, "Setting the hands")."""

    REJECT = "reject"  # default: the server refuses the split; the player sets again
    LOSE = "lose"  # the PartyCasino rules: "la partie est dite morte ... perd sa mise"


class SplitError(ValueError):
    """A split that does not name two of the hand's seven cards."""


@dataclass(frozen=True, slots=True)
class Split:
    """A set hand: ``high`` (5 cards) and ``low`` (2 cards), in the order given."""

    high: tuple[int, ...]
    low: tuple[int, ...]

    def high_value(self, wheel: WheelRank = WheelRank.SECOND) -> int:
        """The value of the high hand."""
        return high_value(self.high, wheel)

    def low_value(self) -> int:
        """The value of the low hand."""
        return low_value(self.low)

    def is_foul(self, wheel: WheelRank = WheelRank.SECOND) -> bool:
        """Whether the low hand outranks the high hand."""
        return not high_value(self.high, wheel) > low_value(self.low)


def split_with_low(cards: Sequence[int], low: Sequence[int]) -> Split:
    """The split of seven ``cards`` whose low hand is the two cards ``low``.

    Raises :class:`SplitError` unless ``low`` is two different cards of the hand.
    """
    if len(cards) != HAND_SIZE or len(set(cards)) != HAND_SIZE:
        raise SplitError(f"a hand is {HAND_SIZE} different cards")
    if len(low) != LOW_SIZE or low[0] == low[1]:
        raise SplitError("the low hand is two different cards")
    for card in low:
        if card not in cards:
            raise SplitError(f"{_text(card)} is not in this hand")
    return Split(high=tuple(c for c in cards if c not in low), low=tuple(low))


def all_splits(cards: Sequence[int]) -> list[Split]:
    """The 21 splits of seven cards, fouls included."""
    return [
        Split(
            high=tuple(c for k, c in enumerate(cards) if k not in (i, j)),
            low=(cards[i], cards[j]),
        )
        for i, j in LOW_INDEX_PAIRS
    ]


def legal_splits(cards: Sequence[int], wheel: WheelRank = WheelRank.SECOND) -> list[Split]:
    """The splits of seven cards that are not fouls (there is always at least one)."""
    return [s for s in all_splits(cards) if not s.is_foul(wheel)]


def _text(card: int) -> str:
    try:
        return card_text(card)
    except CardError:
        return repr(card)
