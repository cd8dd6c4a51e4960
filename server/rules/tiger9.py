"""The Tiger 9: Fortune Commission-Free's side bet on the dealer's nine-high low hand.

docs/RULES.md, "Commission-free tables": the bet wins when the dealer's two-card low
hand, as the table's house way sets it, is nine-high
(:func:`server.rules.dealer_hands.is_nine_high_low`), the same hand that pushes every
main bet at a ``nine_low`` table, and pays 30 to 1 (the Wizard of Odds' "Commission Free
Pai Gow Poker" page, as dealt at the Golden Nugget); it loses on any other low hand.
It reads only the dealer's low hand, whatever the player holds.

Its house edge depends on the house way (the dealer's low hand is the house way's
choice); on the full deck it is exact for each of this server's house ways
(:mod:`server.rules.dealer_census`).

Pure: no table state; the table settles it beside the main bet, as the staked side bet
:data:`TIGER9_BET` (kind ``tiger9``, docs/DESIGN.md, "Wagers"), whose options are its
limits and its odds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from server.rules.dealer_hands import (
    DealerBetSettlement,
    check_dealer_bet_options,
    is_nine_high_low,
    settle_dealer_bet,
)
from server.rules.options import RuleOptions
from server.rules.wagers import PayLine, Settled, SideBet, SideDeal

NINE_HIGH_LOW = "nine-high-low"
"""The one paying line's id (as a ``bonus_class`` is, a wire id of at most 32 characters)."""

LABEL = "dealer's nine-high low hand"

ODDS = 30
"""What the line pays, to 1: the published 30 to 1."""

PAY_TABLE: Mapping[str, int] = MappingProxyType({NINE_HIGH_LOW: ODDS})
"""Each paying line and its odds to 1, best first."""


def classify(dealer_low: Sequence[int]) -> str | None:
    """The line the dealer's two-card low hand makes (:data:`NINE_HIGH_LOW`), or None."""
    return NINE_HIGH_LOW if is_nine_high_low(dealer_low) else None


def settle(dealer_low: Sequence[int], stake: int, odds: int = ODDS) -> DealerBetSettlement:
    """``stake`` chips on the Tiger 9 against the dealer's low hand as set, paying
    ``odds`` to 1. Raises ``ValueError`` for a stake or odds out of range, or for a low
    hand that is not two different card codes."""
    if len(dealer_low) != 2 or dealer_low[0] == dealer_low[1]:
        raise ValueError("the dealer's low hand is two different card codes")
    if any(not 0 <= c <= 52 for c in dealer_low):
        raise ValueError("the dealer's low hand is two different card codes")
    return settle_dealer_bet(classify(dealer_low), odds, stake)


# --- as a staked side bet at a table (server/rules/side_bets.py) ----------------------

KIND = "tiger9"
"""Its kind: on the wire, in the ledger's keys and in a tables file."""


@dataclass(frozen=True, slots=True)
class Tiger9Options:
    """A table's Tiger 9: the limits of a stake (chips) and what it pays, to 1."""

    min: int = 5
    max: int = 50
    odds: int = ODDS

    def __post_init__(self) -> None:
        check_dealer_bet_options(KIND, self.min, self.max, self.odds)


def _settle(deal: SideDeal, stake: int, options: Tiger9Options) -> Settled:
    # The dealer's low hand as the table's house way set it.
    s = settle(deal.dealer_low, stake, options.odds)
    return Settled(s.hand_class, s.payout)


def _limits(options: Tiger9Options) -> tuple[int, int]:
    return options.min, options.max


def _lines(rules: RuleOptions, options: Tiger9Options) -> tuple[PayLine, ...]:
    return (PayLine(NINE_HIGH_LOW, LABEL, options.odds),)


TIGER9_BET = SideBet(
    kind=KIND,
    label="Tiger 9",
    options=Tiger9Options,
    settle=_settle,
    limits=_limits,
    pay_lines=_lines,
)
"""The Tiger 9 as a staked side bet (docs/RULES.md, "Commission-free tables")."""
