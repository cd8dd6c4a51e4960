"""The ``census`` subcommand: the exact count of every category over all hands."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from functools import partial
from itertools import combinations
from typing import TextIO

from server.rules.cards import DECK_SIZE
from server.rules.values import (
    CATEGORY_NAMES,
    Category,
    WheelRank,
    category_of,
    high_value,
    low_value,
)
from server.rules_cli.inputs import InputError


def census(cards: int, wheel: WheelRank = WheelRank.SECOND) -> dict[Category, int]:
    """The number of hands of each category over all hands of ``cards`` (5 or 2) cards.

    Counts every hand, best category first; 2,869,685 five-card hands take a few seconds.
    """
    if cards == 5:
        values = Counter(map(partial(high_value, wheel=wheel), combinations(range(DECK_SIZE), 5)))
    elif cards == 2:
        values = Counter(map(low_value, combinations(range(DECK_SIZE), 2)))
    else:
        raise InputError(f"a census is of 5-card or 2-card hands, not {cards}")
    by_category: Counter[Category] = Counter()
    for value, count in values.items():
        by_category[category_of(value)] += count
    present = Category if cards == 5 else (Category.PAIR, Category.HIGH_CARD)
    return {c: by_category[c] for c in sorted(present, reverse=True)}


def cmd_census(args: argparse.Namespace, out: TextIO) -> None:
    """Writes the census asked by ``args`` (a table, or one JSON object with ``--json``)."""
    counts = census(args.cards, WheelRank(args.wheel))
    if args.json:
        payload = {
            "cards": args.cards,
            "hands": sum(counts.values()),
            "counts": {CATEGORY_NAMES[c]: n for c, n in counts.items()},
        }
        out.write(json.dumps(payload) + "\n")
        return
    for category, count in counts.items():
        out.write(f"{CATEGORY_NAMES[category]:<16}{count:>12,}\n")
    out.write(f"{'total':<16}{sum(counts.values()):>12,}\n")
