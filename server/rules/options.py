"""Per-table rule options and their defaults (docs/RULES.md, "Table options")."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from math import gcd

from server.rules.splits import FoulPolicy
from server.rules.values import WheelRank


class HouseWay(StrEnum):
    """The house ways this server knows, named for the rule text they come from."""

    # The PartyCasino rules' house way ("règles de la maison" of PartyBets' online
    # table): splits two pair by fixed thresholds (both pairs 6 or lower stay together,
    # ...). docs/RULES.md, "House way".
    PARTY = "party"
    # The "donneur" page's house way: sorts pairs into low (2-6), medium (7-10) and
    # high (J-K) classes and splits two pair by class and by the best single card.
    PAIR_CLASSES = "pair-classes"


DEFAULT_COMMISSION_PCT = 5  # the "Le Tirage" and "donneur" pages: "une commission de 5%"


class CommissionRounding(StrEnum):
    """How a commission that is not a whole number of chips is made one
    (docs/RULES.md, "Commission")."""

    DOWN = "down"  # rounded down: never more than the percentage (small wins pay none)
    UP = "up"  # rounded up: never less than the percentage (at most one chip more)
    WHOLE = "whole"  # main bets only in amounts whose commission is whole: exact


class CommissionFree(StrEnum):
    """Whether the main bet is commission-free, and which dealer's hand then pushes it
    (docs/RULES.md, "Commission-free tables")."""

    NONE = "none"  # the commission of ``commission_pct`` on every win
    # EZ Pai Gow: no commission; every main bet pushes when the dealer's seven cards
    # are a queen-high pai gow (server/rules/dealer_hands.py).
    EZ = "ez"
    # Fortune Commission-Free ("Tiger 9" tables): no commission; every main bet pushes
    # when the dealer's two-card low hand, as the house way sets it, is nine-high.
    NINE_LOW = "nine_low"


def whole_commission_step(commission_pct: int) -> int:
    """The smallest bet whose commission at ``commission_pct`` is a whole number of
    chips; exactly the multiples of it have one (20 at 5 %, 10 at 10 %, 1 at 0 %)."""
    return 100 // gcd(100, commission_pct)


@dataclass(frozen=True, slots=True)
class RuleOptions:
    """The rule options of one table, with the defaults of docs/RULES.md, "Table options"."""

    wheel: WheelRank = WheelRank.SECOND
    foul: FoulPolicy = FoulPolicy.REJECT
    commission_pct: int = DEFAULT_COMMISSION_PCT
    house_way: HouseWay = HouseWay.PARTY
    bonus_pay_table: str = "standard"
    # Added after release 0.1.0, whose nodes cannot read it: stored only when it is not
    # the default (server/store/tables/parts.py).
    commission_rounding: CommissionRounding = CommissionRounding.DOWN
    # Added after release 0.1.0 too, and stored by the same rule.
    commission_free: CommissionFree = CommissionFree.NONE

    def __post_init__(self) -> None:
        if not isinstance(self.commission_pct, int) or not 0 <= self.commission_pct <= 100:
            raise ValueError("commission_pct is an integer from 0 to 100")
        if not isinstance(self.commission_rounding, CommissionRounding):
            known = ", ".join(repr(r.value) for r in CommissionRounding)
            raise ValueError(f"commission_rounding is one of {known}")
        if not isinstance(self.commission_free, CommissionFree):
            known = ", ".join(repr(r.value) for r in CommissionFree)
            raise ValueError(f"commission_free is one of {known}")
        if (
            self.commission_free is not CommissionFree.NONE
            and self.commission_rounding is CommissionRounding.WHOLE
        ):
            # 'whole' restricts the main bets for the sake of a commission these tables
            # never take.
            raise ValueError(
                "a commission-free table takes no commission: its commission_rounding "
                "is not 'whole'"
            )
