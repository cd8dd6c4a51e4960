"""The house edge of each bet of a table, as ``paigow-rules edge`` prints it.

- The bonus bet's is exact: one minus its return over every seven-card hand of the deck
  (:mod:`server.rules.bonus_census`), on the table's pay table.
- The main bet's depends on both hands as the house way sets them, so it is estimated
  by the simulator (:mod:`server.rules.sim`, the player setting by the table's house
  way against the dealer's): from its counts of wins, pushes and losses, at a given bet
  size, with the commission that bet pays under the table's rounding (docs/RULES.md,
  "Commission"), and a 95 % confidence interval. A win keeps ``(bet - commission) /
  bet`` of the bet; the same counts serve every bet size, so the figures of two sizes
  differ only by the rounding. At a commission-free table (docs/RULES.md,
  "Commission-free tables") a win keeps the whole bet, and the rounds whose dealer's
  hand is the table's barred hand, which the simulator counts apart, push.
- The Queen's Dragon's and the Tiger 9's are exact: they pay on the dealer's hand
  alone, whose census (:mod:`server.rules.dealer_census`) counts every seven-card hand.
- The Envy bonus has no stake: its expected pay per qualifying bonus bet, for each
  other seat in the round, is exact from the bonus bet's census.

Edges are the house's share of each chip bet: positive when the house gains.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import sqrt

from server.rules.bonus import PayTable
from server.rules.bonus_census import bonus_census, bonus_return
from server.rules.dealer_census import known_census
from server.rules.envy import EnvyOptions
from server.rules.options import CommissionFree, HouseWay, RuleOptions
from server.rules.progressive import ProgressivePayTable, ProgressiveReturn, progressive_return
from server.rules.settlement import commission
from server.rules.sim import SimResult
from server.rules.values import WheelRank

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
    wins, losses = result.wins, result.losses
    if bet is not None and bet <= 0:
        raise ValueError(f"a bet is positive, not {bet!r}")
    barred = _barred(result, options.commission_free)
    if barred is not None:
        # No commission: a win keeps the bet whole; the barred hand's rounds push.
        wins, losses = wins - barred[0], losses - barred[2]
        cut = None if bet is None else 0
        kept = 1.0
    elif bet is None:
        cut = None
        kept = (100 - options.commission_pct) / 100
    else:
        cut = commission(bet, options.commission_pct, options.commission_rounding)
        kept = (bet - cut) / bet
    # Each round's result per chip bet is `kept` (a win), 0 (a push) or -1 (a loss).
    mean = (wins * kept - losses) / n
    square = (wins * kept * kept + losses) / n
    variance = max(0.0, square - mean * mean) * n / (n - 1)
    return MainEdge(bet, cut, -mean, Z_95 * sqrt(variance / n), n)


def bonus_edge(table: PayTable) -> Fraction:
    """The bonus bet's house edge on ``table``, exactly (the census of every hand)."""
    return 1 - bonus_return(bonus_census(), table)


def _barred(result: SimResult, rule: CommissionFree) -> tuple[int, int, int] | None:
    if rule is CommissionFree.EZ:
        return result.queen_high
    if rule is CommissionFree.NINE_LOW:
        return result.nine_low
    return None


def queens_dragon_edge(odds: int = 50) -> Fraction:
    """The Queen's Dragon's house edge at ``odds`` to 1, exactly: it returns ``odds + 1``
    on each queen-high pai gow among every seven-card hand of the deck."""
    census = known_census(HouseWay.PARTY)  # the same under every house way
    return 1 - (odds + 1) * census.share(census.queen_high)


def tiger9_edge(way: HouseWay, wheel: WheelRank = WheelRank.SECOND, odds: int = 30) -> Fraction:
    """The Tiger 9's house edge at ``odds`` to 1 when the dealer sets by ``way``,
    exactly: it returns ``odds + 1`` on each hand ``way`` sets with a nine-high low."""
    census = known_census(way, wheel)
    return 1 - (odds + 1) * census.share(census.nine_low)


# --- the progressive wager (docs/RULES.md, "Progressive jackpot") ----------------------


def progressive_edge(table: ProgressivePayTable) -> ProgressiveReturn:
    """The progressive wager's return on ``table`` as a function of the meter, exactly
    (the census of every hand); its house edge at a meter ``m`` is ``1 - r.at(m)``."""
    return progressive_return(bonus_census(), table)


# --- the Envy bonus (docs/RULES.md, "Envy bonus") --------------------------------------


def envy_per_other(options: EnvyOptions) -> Fraction:
    """The Envy bonus's expected pay, in chips, to one qualifying seat for each other
    seat in the round, exactly: the sum over the Envy pay table of the share of the
    seven-card hands of the deck holding each class, times its amount. Each other
    seat's seven cards are, on their own, any seven cards of the deck alike, whatever
    the qualifying seat holds, so ``n`` other seats pay ``n`` times this on average."""
    census = bonus_census()
    total = sum(census.values())
    return Fraction(sum(n * options.amount(cls) for cls, n in census.items()), total)
