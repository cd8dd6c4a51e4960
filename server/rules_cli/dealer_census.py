"""The ``dealer-census`` subcommand: the dealer's hands that commission-free tables
look at (a queen-high pai gow, a nine-high low hand), counted exactly over every
seven-card hand, and each against the counts checked in (docs/RULES.md, "The math,
checked")."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from server.rules.bonus_census import ALL_RANKS
from server.rules.dealer_census import KNOWN, DealerCensus, dealer_census
from server.rules.options import HouseWay
from server.rules.values import WheelRank
from server.rules_cli.inputs import InputError


def cmd_dealer_census(args: argparse.Namespace, out: TextIO) -> None:
    """Counts the census for each house way (``--way``, default every one) at the wheel
    ``--wheel``, writes it (a table, or one JSON object per way), and raises
    :class:`InputError` when a count differs from the checked-in one: the house way
    changed, and :data:`server.rules.dealer_census.KNOWN` and docs/RULES.md with it.
    With ``--ranks`` it counts the deck of those ranks only (nothing is checked in for
    it): what a test compares with every hand of that deck."""
    wheel = WheelRank(args.wheel)
    ways = [HouseWay(args.way)] if args.way else list(HouseWay)
    ranks = _ranks(args.ranks)
    differ = []
    for way in ways:
        try:
            census = dealer_census(way, wheel, ALL_RANKS if ranks is None else ranks)
        except ValueError as exc:
            raise InputError(f"--ranks {args.ranks}: {exc}") from None
        known = KNOWN.get((way, wheel)) if ranks is None else None
        if known is not None and known != census:
            differ.append(way.value)
        if args.json:
            out.write(json.dumps(_as_json(way, wheel, census, known)) + "\n")
        else:
            _write_text(way, wheel, census, known, out)
    if differ:
        raise InputError(
            f"the counts of {', '.join(differ)} differ from the checked-in ones "
            "(server/rules/dealer_census.py, KNOWN)"
        )


def _ranks(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(r) for r in text.split(","))
    except ValueError:
        raise InputError(f"--ranks {text}: ranks are numbers 2..14, comma-separated") from None


def _as_json(
    way: HouseWay, wheel: WheelRank, c: DealerCensus, known: DealerCensus | None
) -> dict[str, object]:
    return {
        "house_way": way.value,
        "wheel": wheel.value,
        "hands": c.hands,
        "queen_high_pai_gow": c.queen_high,
        "nine_high_low": c.nine_low,
        "both": c.both,
        "as_checked_in": None if known is None else known == c,
    }


def _write_text(
    way: HouseWay, wheel: WheelRank, c: DealerCensus, known: DealerCensus | None, out: TextIO
) -> None:
    check = "not checked in" if known is None else ("as checked in" if known == c else "DIFFERS")
    lines = [f"house way {way.value}, wheel {wheel.value} ({check})"]
    for label, n in (
        ("queen-high pai gow", c.queen_high),
        ("nine-high low hand", c.nine_low),
        ("both", c.both),
    ):
        one_in = f"one in {c.hands / n:.2f}" if n else "none"
        lines.append(f"  {label:<20}{n:>12,} of {c.hands:,}  ({one_in})")
    out.write("\n".join(lines) + "\n")
