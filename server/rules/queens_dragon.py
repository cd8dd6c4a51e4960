"""The Queen's Dragon: EZ Pai Gow's side bet on the dealer's queen-high pai gow.

docs/RULES.md, "Commission-free tables": the bet wins when the dealer's seven cards are
a queen-high pai gow (:func:`server.rules.dealer_hands.is_queen_high_pai_gow`), the
same hand that pushes every main bet at an ``ez`` table, and pays 50 to 1; it loses on
any other dealer's hand. The published rule cards pay it on the dealer's hand alone,
whatever the player holds or the main bet does (Barona's and Eagle Mountain's EZ Pai
Gow pages: "pays 50 to 1 if the banker gets a Queen high Pai Gow hand and loses in any
case"), and so does this module: it reads only the dealer's cards.

Its house edge on the full deck is exact (:mod:`server.rules.dealer_census`): 1 minus
51 times the share of the seven-card hands that are queen-high pai gows.

Pure: no table state; the table settles it beside the main bet, as the staked side bet
:data:`QUEENS_DRAGON_BET` (kind ``queens_dragon``, docs/DESIGN.md, "Wagers"), whose
options are its limits and its odds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from server.rules.dealer_hands import (
    DealerBetSettlement,
    check_dealer_bet_options,
    is_queen_high_pai_gow,
    settle_dealer_bet,
)
from server.rules.options import RuleOptions
from server.rules.wagers import PayLine, Settled, SideBet, SideDeal

QUEEN_HIGH_PAI_GOW = "queen-high-pai-gow"
"""The one paying line's id (as a ``bonus_class`` is, a wire id of at most 32 characters)."""

LABEL = "dealer's queen-high pai gow"

ODDS = 50
"""What the line pays, to 1: the published 50 to 1."""

PAY_TABLE: Mapping[str, int] = MappingProxyType({QUEEN_HIGH_PAI_GOW: ODDS})
"""Each paying line and its odds to 1, best first."""


def classify(dealer_cards: Sequence[int]) -> str | None:
    """The line the dealer's seven cards make (:data:`QUEEN_HIGH_PAI_GOW`), or None."""
    return QUEEN_HIGH_PAI_GOW if is_queen_high_pai_gow(dealer_cards) else None


def settle(dealer_cards: Sequence[int], stake: int, odds: int = ODDS) -> DealerBetSettlement:
    """``stake`` chips on the Queen's Dragon against the dealer's seven cards, paying
    ``odds`` to 1. Raises ``ValueError`` for a stake or odds out of range, or for
    ``dealer_cards`` that are not seven different card codes."""
    cards = dealer_cards
    if len(cards) != 7 or len(set(cards)) != 7 or any(not 0 <= c <= 52 for c in cards):
        raise ValueError("the dealer's hand is seven different card codes")
    return settle_dealer_bet(classify(dealer_cards), odds, stake)


# --- as a staked side bet at a table (server/rules/side_bets.py) ----------------------

KIND = "queens_dragon"
"""Its kind: on the wire, in the ledger's keys and in a tables file."""


@dataclass(frozen=True, slots=True)
class QueensDragonOptions:
    """A table's Queen's Dragon: the limits of a stake (chips) and what it pays, to 1."""

    min: int = 5
    max: int = 50
    odds: int = ODDS

    def __post_init__(self) -> None:
        check_dealer_bet_options(KIND, self.min, self.max, self.odds)


def _settle(deal: SideDeal, stake: int, options: QueensDragonOptions) -> Settled:
    s = settle(deal.dealer, stake, options.odds)
    return Settled(s.hand_class, s.payout)


def _limits(options: QueensDragonOptions) -> tuple[int, int]:
    return options.min, options.max


def _lines(rules: RuleOptions, options: QueensDragonOptions) -> tuple[PayLine, ...]:
    return (PayLine(QUEEN_HIGH_PAI_GOW, LABEL, options.odds),)


QUEENS_DRAGON_BET = SideBet(
    kind=KIND,
    label="Queen's Dragon",
    options=QueensDragonOptions,
    settle=_settle,
    limits=_limits,
    pay_lines=_lines,
)
"""The Queen's Dragon as a staked side bet (docs/RULES.md, "Commission-free tables")."""
