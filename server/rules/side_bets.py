"""Every side bet the server knows, by kind: the one list the table reads
(docs/DESIGN.md, "Wagers", says how to add one).

The order is the order a seat's wagers are listed, settled and shown in; a riding bet
(:attr:`server.rules.wagers.SideBet.rides_on`) comes after the bet it rides on.
"""

from __future__ import annotations

from collections.abc import Mapping

from server.rules.bonus import BONUS_BET
from server.rules.envy import ENVY_BET
from server.rules.progressive import PROGRESSIVE_BET
from server.rules.queens_dragon import QUEENS_DRAGON_BET
from server.rules.tiger9 import TIGER9_BET
from server.rules.wagers import SideBet, registry

SIDE_BETS: Mapping[str, SideBet] = registry(
    BONUS_BET,
    ENVY_BET,
    QUEENS_DRAGON_BET,
    TIGER9_BET,
    PROGRESSIVE_BET,
)
"""The side bets by kind."""


def side_bet(kind: str) -> SideBet:
    """The side bet of ``kind``; raises ``KeyError`` naming the known kinds."""
    bet = SIDE_BETS.get(kind)
    if bet is None:
        raise KeyError(f"{kind!r} is not a side bet (known: {', '.join(SIDE_BETS)})")
    return bet
