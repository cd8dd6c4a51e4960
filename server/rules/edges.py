"""The house edge of each bet of a table, as ``paigow-rules edge`` prints it.

- The bonus bet's is exact: one minus its return over every seven-card hand of the deck
  (:mod:`server.rules.bonus_census`), on the table's pay table.
- The main bet's depends on both hands as the house way sets them, so it is estimated
  by the simulator (:mod:`server.rules.sim`, the player setting by the table's house
  way against the dealer's): from its counts of wins, pushes and losses, at a given bet
  size, with the commission that bet pays under the table's rounding (docs/RULES.md,
  "Commission"), and a 95 % confidence interval. A win keeps ``(bet - commission) /
  bet`` of the bet; the same counts serve every bet size, so the figures of two sizes
  differ only by the rounding.

Edges are the house's share of each chip bet: positive when the house gains.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import sqrt

from server.rules.bonus import PayTable
from server.rules.bonus_census import bonus_census, bonus_return
from server.rules.options import RuleOptions
from server.rules.progressive import ProgressivePayTable, ProgressiveReturn, progressive_return
from server.rules.settlement import commission
from server.rules.sim import SimResult

Z_95 = 1.959963984540054
"""The two-sided 95 % quantile of the normal distribution."""


@dataclass(frozen=True, slots=True)
class MainEdge:
    """The main bet's house edge at one bet size, from a simulation.

    ``bet``: the chips bet, None for the exact percentage (a bet so large that the
    rounding does not show); ``commission``: the chips a win of ``bet`` pays (None with
    ``bet``); ``edge``: the house's share of each chip bet; ``half_width``: that of
    its 95 % confidence interval; ``rounds``: the simulation's rounds.
    """

    bet: int | None
    commission: int | None
    edge: float
    half_width: float
    rounds: int


def main_edge(result: SimResult, bet: int | None, options: RuleOptions) -> MainEdge:
    """The main bet's house edge at ``bet`` chips (None: the exact percentage) under
    ``options``' commission, from ``result``'s counts. Raises ``ValueError`` for a
    simulation of fewer than two rounds or a bet that is not positive."""
    n = result.rounds
    if n < 2:
        raise ValueError("an estimate needs at least two rounds")
    if bet is None:
        cut = None
        kept = (100 - options.commission_pct) / 100
    elif bet <= 0:
        raise ValueError(f"a bet is positive, not {bet!r}")
    else:
        cut = commission(bet, options.commission_pct, options.commission_rounding)
        kept = (bet - cut) / bet
    # Each round's result per chip bet is `kept` (a win), 0 (a push) or -1 (a loss).
    mean = (result.wins * kept - result.losses) / n
    square = (result.wins * kept * kept + result.losses) / n
    variance = max(0.0, square - mean * mean) * n / (n - 1)
    return MainEdge(bet, cut, -mean, Z_95 * sqrt(variance / n), n)


def bonus_edge(table: PayTable) -> Fraction:
    """The bonus bet's house edge on ``table``, exactly (the census of every hand)."""
    return 1 - bonus_return(bonus_census(), table)


# --- the progressive wager (docs/RULES.md, "Progressive jackpot") ----------------------


def progressive_edge(table: ProgressivePayTable) -> ProgressiveReturn:
    """The progressive wager's return on ``table`` as a function of the meter, exactly
    (the census of every hand); its house edge at a meter ``m`` is ``1 - r.at(m)``."""
    return progressive_return(bonus_census(), table)
