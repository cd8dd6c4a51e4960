"""The house ways by name: one entry point for the table, the dealer and the tools."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from server.rules import houseway_pair_classes, houseway_party
from server.rules.options import HouseWay
from server.rules.splits import Split
from server.rules.values import WheelRank

__all__ = ["HOUSE_WAYS", "SetHand", "house_way"]

SetHand = Callable[[Sequence[int], WheelRank], Split]

HOUSE_WAYS: Mapping[HouseWay, SetHand] = MappingProxyType(
    {
        HouseWay.PARTY: houseway_party.set_hand,
        HouseWay.PAIR_CLASSES: houseway_pair_classes.set_hand,
    }
)


def house_way(cards: Sequence[int], way: HouseWay, wheel: WheelRank = WheelRank.SECOND) -> Split:
    """The split house way ``way`` makes of seven distinct cards; never a foul.

    Raises :class:`ValueError` unless ``cards`` are seven distinct card codes, and
    :class:`KeyError` for a house way with no module.
    """
    return HOUSE_WAYS[way](cards, wheel)
