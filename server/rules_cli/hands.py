"""The per-hand subcommands ``rank``, ``split``, ``classify`` and ``bonus``.

Each builds a handler (cards -> one line of text or JSON) from its options, then runs
it on the cards given, or on every line of standard input (batch mode: JSON out,
written in large chunks; the first bad line stops the batch).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from typing import TextIO

from server.rules.bonus import BONUS_CLASS_NAMES, classify, classify_bonus, pay_table
from server.rules.cards import cards_text
from server.rules.options import HouseWay
from server.rules.values import (
    CATEGORY_NAMES,
    Category,
    WheelRank,
    category_of,
    high_name,
    high_value,
    low_name,
    low_value,
)
from server.rules_cli.inputs import InputError, parse_hand

_FLUSH_LINES = 4096

Handler = Callable[[tuple[int, ...]], str]
"""One hand (its card codes) -> one line of output, without the newline."""


def _js(text: str) -> str:
    return json.dumps(text)


def rank_handler(wheel: WheelRank, as_json: bool) -> Handler:
    """The name (or JSON) of a 5-card high hand or a 2-card low hand."""
    cache: dict[int, str] = {}

    def handle(cards: tuple[int, ...]) -> str:
        if len(cards) == 5:
            value = high_value(cards, wheel)
            hand, name = "high", high_name
        else:
            value = low_value(cards)
            hand, name = "low", low_name
        if not as_json:
            return name(value)
        key = value if hand == "high" else -value
        tail = cache.get(key)
        if tail is None:
            tail = cache[key] = (
                f'"hand": "{hand}", "category": {_js(CATEGORY_NAMES[category_of(value)])}, '
                f'"name": {_js(name(value))}, "value": {value}}}'
            )
        return f'{{"cards": "{cards_text(cards)}", {tail}'

    return handle


def split_handler(way: HouseWay, wheel: WheelRank, as_json: bool) -> Handler:
    """The house way's split of 7 cards, both hands named."""
    from server.rules.houseways import house_way

    def handle(cards: tuple[int, ...]) -> str:
        split = house_way(cards, way, wheel)
        high, low = cards_text(split.high), cards_text(split.low)
        hname, lname = high_name(split.high_value(wheel)), low_name(split.low_value())
        if not as_json:
            return f"high: {high}  ({hname})\nlow:  {low}  ({lname})"
        return (
            f'{{"cards": "{cards_text(cards)}", "way": "{way.value}", "high": "{high}", '
            f'"high_name": {_js(hname)}, "low": "{low}", "low_name": {_js(lname)}}}'
        )

    return handle


def classify_handler(as_json: bool) -> Handler:
    """The best 5-card category among 7 cards."""
    names = {c: CATEGORY_NAMES[c] for c in Category}

    def handle(cards: tuple[int, ...]) -> str:
        name = names[classify(cards)]
        if not as_json:
            return name[0].upper() + name[1:]
        return f'{{"cards": "{cards_text(cards)}", "category": "{name}"}}'

    return handle


def bonus_handler(table_name: str, as_json: bool) -> Handler:
    """The bonus class of 7 cards and its odds on the pay table ``table_name``."""
    table = pay_table(table_name)

    def handle(cards: tuple[int, ...]) -> str:
        cls = classify_bonus(cards)
        name, odds = BONUS_CLASS_NAMES[cls], table.odds_of(cls)
        if not as_json:
            pays = f"pays {odds} to 1" if odds else "does not pay"
            return f"{name[0].upper() + name[1:]} ({pays} on the {table.name} table)"
        return (
            f'{{"cards": "{cards_text(cards)}", "class": "{name}", '
            f'"pay_table": "{table.name}", "odds": {odds}}}'
        )

    return handle


def run_hands(
    args: argparse.Namespace, handler: Handler, counts: tuple[int, ...], out: TextIO
) -> None:
    """Runs ``handler`` on the cards given, or on every line of standard input."""
    if args.cards:
        out.write(handler(parse_hand(" ".join(args.cards), counts)) + "\n")
        return
    _batch(sys.stdin, handler, counts, out)


def _batch(lines: Iterable[str], handler: Handler, counts: tuple[int, ...], out: TextIO) -> None:
    """One output line per non-blank input line, written in large chunks."""
    chunk: list[str] = []
    append = chunk.append
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            cards = parse_hand(line, counts)
        except InputError as exc:
            out.write("".join(chunk))
            raise InputError(f"line {number}: {exc}") from None
        append(handler(cards) + "\n")
        if len(chunk) >= _FLUSH_LINES:
            out.write("".join(chunk))
            chunk.clear()
    out.write("".join(chunk))
