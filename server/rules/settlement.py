"""The outcome and settlement of one player's bet against the dealer.

docs/RULES.md, "Outcome": high hand against high hand, low against low; an identical
value (a *copy*) goes to the dealer (all four published rule pages agree). Both halves
won: the player wins even money less the commission (the "Le Tirage" and "donneur"
pages: 5%). One won and one lost: a push, the bet is returned. Both lost: the bet is
lost. A fouled split under ``FoulPolicy.LOSE`` loses the bet (the PartyCasino rules:
"la partie est dite morte (foul) et le joueur perd sa mise").

Money is integer chips, so a commission that is not a whole number of chips is made
one by the table's option ``commission_rounding`` (docs/RULES.md, "Commission"):

- ``down`` (default): ``floor(win * commission_pct / 100)``, never more than the
  percentage (a win of 10 chips at 5% pays 10, not 9; of 19 pays 19; of 20 pays 19);
- ``up``: ``ceil(win * commission_pct / 100)``, never less (a win of 10 pays 9; of 21
  pays 19);
- ``whole``: the table takes only main bets whose commission is whole (multiples of
  :func:`~server.rules.options.whole_commission_step`), so it is exact; a win it
  would have refused is rounded down, as ``down`` does, so settling never fails.

On a commission-free table (option ``commission_free``, docs/RULES.md,
"Commission-free tables") a win pays even money with no commission, and the dealer's
barred hand (``ez``: a queen-high pai gow; ``nine_low``: a nine-high low hand,
:mod:`server.rules.dealer_hands`) pushes every main bet, won or lost, as the published
rule cards say ("all player hands push"). A fouled split under ``FoulPolicy.LOSE`` is
dead before any comparison, so it still loses. Copies go to the dealer as ever.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from server.rules.dealer_hands import pushes_main_bet
from server.rules.options import CommissionFree, CommissionRounding, RuleOptions
from server.rules.splits import FoulPolicy, Split


class HalfResult(StrEnum):
    """The player's result on one half (high or low) against the dealer's same half."""

    WIN = "win"
    LOSE = "lose"
    COPY = "copy"  # identical values: goes to the dealer, so it counts as lost


class Outcome(StrEnum):
    """The player's result for the round."""

    WIN = "win"
    PUSH = "push"
    LOSE = "lose"


class FoulError(ValueError):
    """A fouled split given to settlement under ``FoulPolicy.REJECT``.

    Under that policy the server refuses a fouled split before the reveal, so one
    reaching settlement is a caller's bug, never a result.
    """


_DEFAULT_OPTIONS = RuleOptions()


def compare_half(player_value: int, dealer_value: int) -> HalfResult:
    """The player's result on one half, from the two values of that half."""
    if player_value > dealer_value:
        return HalfResult.WIN
    if player_value == dealer_value:
        return HalfResult.COPY
    return HalfResult.LOSE


def outcome_of(high: HalfResult, low: HalfResult) -> Outcome:
    """Both halves won: win; exactly one won: push; none won (copies count as lost): lose."""
    won = (high is HalfResult.WIN) + (low is HalfResult.WIN)
    if won == 2:
        return Outcome.WIN
    if won == 1:
        return Outcome.PUSH
    return Outcome.LOSE


def commission(
    win: int, commission_pct: int, rounding: CommissionRounding = CommissionRounding.DOWN
) -> int:
    """The commission on a win of ``win`` chips: ``win * commission_pct / 100`` made
    whole by ``rounding`` (see the module docstring): rounded up under ``up``, down
    otherwise (under ``whole`` every win the table accepts is exact already)."""
    if win < 0:
        raise ValueError("a win is not negative")
    if rounding is CommissionRounding.UP:
        return -(-win * commission_pct // 100)
    return win * commission_pct // 100


@dataclass(frozen=True, slots=True)
class Settlement:
    """One player's bet settled against the dealer.

    - ``outcome``: win, push or lose (a foul under ``FoulPolicy.LOSE`` is a loss with
      ``fouled`` set; ``high`` and ``low`` still record the hands' comparisons).
    - ``bet``: the chips staked; ``won``: the gross win (even money) before commission;
      ``commission``: the house's cut of ``won``; ``net``: the player's change
      (``won - commission`` on a win, 0 on a push, ``-bet`` on a loss); ``returned``:
      the chips handed back to the player, ``bet + net``; ``dealer_push``: the
      dealer's barred hand pushed the bet (a commission-free table only).

    Chips are conserved: the player's ``net`` plus the house's ``house_net`` is 0, and
    ``returned`` is never negative.
    """

    outcome: Outcome
    high: HalfResult
    low: HalfResult
    fouled: bool
    bet: int
    won: int
    commission: int
    net: int
    returned: int
    dealer_push: bool = False

    @property
    def house_net(self) -> int:
        """The house's change from this bet (commission included)."""
        return -self.net


def settle_values(
    player_high: int,
    player_low: int,
    dealer_high: int,
    dealer_low: int,
    bet: int,
    *,
    commission_pct: int = _DEFAULT_OPTIONS.commission_pct,
    foul: FoulPolicy = _DEFAULT_OPTIONS.foul,
    rounding: CommissionRounding = _DEFAULT_OPTIONS.commission_rounding,
    commission_free: CommissionFree = _DEFAULT_OPTIONS.commission_free,
    dealer_barred: bool = False,
) -> Settlement:
    """:func:`settle` from the four hand values (see ``server.rules.values``).

    The player's split is a foul when ``player_high <= player_low``. On a
    commission-free table (``commission_free`` not ``none``) ``dealer_barred`` says
    whether the dealer's hand is the one that pushes every bet
    (:func:`server.rules.dealer_hands.pushes_main_bet`); elsewhere it is ignored. Raises
    :class:`FoulError` for a foul under ``FoulPolicy.REJECT`` and ``ValueError`` for a
    bet that is not a non-negative integer or a commission outside 0..100.
    """
    if isinstance(bet, bool) or not isinstance(bet, int) or bet < 0:
        raise ValueError(f"a bet is a non-negative number of chips, not {bet!r}")
    if not 0 <= commission_pct <= 100:
        raise ValueError(f"commission_pct is from 0 to 100, not {commission_pct!r}")
    high = compare_half(player_high, dealer_high)
    low = compare_half(player_low, dealer_low)
    fouled = not player_high > player_low
    if fouled:
        if foul is FoulPolicy.REJECT:
            raise FoulError("a fouled split cannot be settled when the table rejects fouls")
        result = Outcome.LOSE
    else:
        result = outcome_of(high, low)
    if commission_free is not CommissionFree.NONE:
        if dealer_barred and not fouled:
            return Settlement(Outcome.PUSH, high, low, fouled, bet, 0, 0, 0, bet, True)
        commission_pct = 0
    if result is Outcome.WIN:
        cut = commission(bet, commission_pct, rounding)
        return Settlement(result, high, low, fouled, bet, bet, cut, bet - cut, 2 * bet - cut)
    if result is Outcome.PUSH:
        return Settlement(result, high, low, fouled, bet, 0, 0, 0, bet)
    return Settlement(result, high, low, fouled, bet, 0, 0, -bet, 0)


def settle(
    player: Split, dealer: Split, bet: int, options: RuleOptions = _DEFAULT_OPTIONS
) -> Settlement:
    """Settle a bet of ``bet`` chips on the player's split against the dealer's.

    The table's ``options`` give the wheel rank, the commission (its percentage and
    rounding, or none on a commission-free table) and the foul policy.
    The dealer's split is set by the house way and never fouls.
    """
    barred = pushes_main_bet(options.commission_free, dealer.high + dealer.low, dealer.low)
    return settle_values(
        player.high_value(options.wheel),
        player.low_value(),
        dealer.high_value(options.wheel),
        dealer.low_value(),
        bet,
        commission_pct=options.commission_pct,
        foul=options.foul,
        rounding=options.commission_rounding,
        commission_free=options.commission_free,
        dealer_barred=barred,
    )
