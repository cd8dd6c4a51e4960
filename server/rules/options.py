"""Per-table rule options and their defaults (docs/RULES.md, "Table options")."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

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


@dataclass(frozen=True, slots=True)
class RuleOptions:
    """The rule options of one table, with the defaults of docs/RULES.md, "Table options"."""

    wheel: WheelRank = WheelRank.SECOND
    foul: FoulPolicy = FoulPolicy.REJECT
    commission_pct: int = DEFAULT_COMMISSION_PCT
    house_way: HouseWay = HouseWay.PARTY
    bonus_pay_table: str = "standard"

    def __post_init__(self) -> None:
        if not isinstance(self.commission_pct, int) or not 0 <= self.commission_pct <= 100:
            raise ValueError("commission_pct is an integer from 0 to 100")
