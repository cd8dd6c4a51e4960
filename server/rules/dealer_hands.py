"""The dealer's hands that commission-free tables and their side bets look at
(docs/RULES.md, "Commission-free tables").

- A *queen-high pai gow* (EZ Pai Gow): the dealer's seven cards make nothing better
  than a queen-high five-card hand: seven different ranks, the highest a queen, no
  straight and no flush among them, and no joker (the joker is an ace unless it
  completes a straight or flush, so a hand holding it is ace-high or better). It does
  not depend on how the hand is set: the house way never breaks up a hand that holds
  nothing, so its high hand is queen-high exactly when its seven cards are.
- A *nine-high low* (Fortune Commission-Free, Tiger 9): the dealer's two-card low hand,
  as the house way sets it, is two different ranks, the higher a nine. A pair of nines
  is a pair, not nine-high; the joker in a low hand is an ace, so a low holding it is
  never nine-high.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from server.rules.cards import JOKER
from server.rules.options import CommissionFree

QUEEN = 12
NINE = 9
_SEVEN = 7
_FLUSH = 5
_RUN = 5


def is_queen_high_pai_gow(cards: Sequence[int]) -> bool:
    """Whether seven cards are a queen-high pai gow (module docstring). Takes any seven
    distinct card codes; does not check them."""
    if JOKER in cards:
        return False
    ranks = {c >> 2 for c in cards}  # rank - 2, as the card codes hold it
    if len(ranks) != _SEVEN or max(ranks) != QUEEN - 2:
        return False
    suits = [0, 0, 0, 0]
    for c in cards:
        suits[c & 3] += 1
    if max(suits) >= _FLUSH:
        return False
    # No ace among them, so the only straights are five ranks in a row.
    return not any(all(r + k in ranks for k in range(_RUN)) for r in ranks)


def is_nine_high_low(low: Sequence[int]) -> bool:
    """Whether a two-card low hand is nine-high (module docstring)."""
    a, b = low
    if JOKER in (a, b):
        return False
    ra, rb = (a >> 2) + 2, (b >> 2) + 2
    return ra != rb and max(ra, rb) == NINE


def pushes_main_bet(
    rule: CommissionFree, dealer_cards: Sequence[int], dealer_low: Sequence[int]
) -> bool:
    """Whether, under the table's ``commission_free`` rule, the dealer's hand (its seven
    cards, and the two of them it set as its low hand) pushes every main bet."""
    if rule is CommissionFree.EZ:
        return is_queen_high_pai_gow(dealer_cards)
    if rule is CommissionFree.NINE_LOW:
        return is_nine_high_low(dealer_low)
    return False


@dataclass(frozen=True, slots=True)
class DealerBetSettlement:
    """A side bet on the dealer's hand, settled (:mod:`server.rules.queens_dragon`,
    :mod:`server.rules.tiger9`).

    ``hand_class``: the pay table's line the dealer's hand made (its wire id), or None
    when the bet loses; ``odds``: what that line pays, to 1 (0 when it loses);
    ``stake``: the chips bet; ``payout``: the chips handed back, the stake and its
    winnings, or 0; ``net``: the player's change, ``payout - stake``.
    """

    hand_class: str | None
    odds: int
    stake: int
    payout: int

    @property
    def net(self) -> int:
        """The player's change from this bet (the house's is its negative)."""
        return self.payout - self.stake


def settle_dealer_bet(hand_class: str | None, odds: int, stake: int) -> DealerBetSettlement:
    """The settlement of ``stake`` chips on a line paying ``odds`` to 1 that the dealer's
    hand made (``hand_class``) or not (None). Raises ``ValueError`` for a stake that is
    not a non-negative integer or odds that are not a positive one."""
    if isinstance(stake, bool) or not isinstance(stake, int) or stake < 0:
        raise ValueError(f"a stake is a non-negative number of chips, not {stake!r}")
    if isinstance(odds, bool) or not isinstance(odds, int) or odds < 1:
        raise ValueError(f"odds are a positive integer, not {odds!r}")
    if hand_class is None:
        return DealerBetSettlement(None, 0, stake, 0)
    return DealerBetSettlement(hand_class, odds, stake, stake * (odds + 1))


def check_dealer_bet_options(kind: str, low: int, high: int, odds: int) -> None:
    """Refuse a table's options of a dealer's-hand side bet (the Queen's Dragon, the
    Tiger 9) that are not whole chips ``0 < min <= max`` and whole odds of at least 1:
    raises ``ValueError`` naming ``kind``."""
    for name, value in (("min", low), ("max", high), ("odds", odds)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{kind} {name} is a whole number, not {value!r}")
    if not 0 < low <= high:
        raise ValueError(f"{kind}: its limits are 0 < min <= max")
    if odds < 1:
        raise ValueError(f"{kind} odds are at least 1 to 1")
