"""The ``deal`` and ``demo`` subcommands: what a seed deals, and one round told for people."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, TextIO

from protocol.fairness import SEED_BYTES, commitment, deal
from server.rules.bonus import BONUS_CLASS_NAMES, classify_bonus, pay_table
from server.rules.cards import cards_text
from server.rules.values import WheelRank, high_name, low_name
from server.rules_cli.inputs import DEFAULTS, PROG, hex_seed

if TYPE_CHECKING:
    from server.rules.splits import Split

_DEMO_SEED = bytes(range(SEED_BYTES))
_DEMO_BET = 100


def cmd_deal(args: argparse.Namespace, out: TextIO) -> None:
    """Writes the commitment and the seven hands that ``args.seed`` (64 hex digits) deals."""
    seed = hex_seed(args.seed)
    hands = deal(seed)
    if args.json:
        payload = {
            "seed": seed.hex(),
            "commitment": commitment(seed),
            "seats": [cards_text(h) for h in hands[:6]],
            "dealer": cards_text(hands[6]),
        }
        out.write(json.dumps(payload) + "\n")
        return
    out.write(f"commitment {commitment(seed)}\n")
    for seat, hand in enumerate(hands[:6], 1):
        out.write(f"seat {seat}  {cards_text(hand)}\n")
    out.write(f"dealer  {cards_text(hands[6])}\n")


def cmd_demo(out: TextIO) -> None:
    """Writes one round dealt from a fixed seed, each seat settled against the dealer."""
    from server.rules.houseways import house_way
    from server.rules.settlement import settle

    options = DEFAULTS
    table = pay_table(options.bonus_pay_table)
    hands = deal(_DEMO_SEED)
    dealer = house_way(hands[6], options.house_way, options.wheel)
    lines = [
        "Pai Gow Poker: one round dealt from a fixed seed (53 cards, one joker).",
        f"seed       {_DEMO_SEED.hex()}",
        f"commitment {commitment(_DEMO_SEED)}  (SHA-256 of the seed, shown before the deal)",
        f"house way  {options.house_way.value}; commission {options.commission_pct}%; "
        f"every seat bets {_DEMO_BET} chips",
        "",
        f"dealer   {cards_text(hands[6])}",
        *_describe_split(dealer, options.wheel),
        "",
    ]
    for seat, hand in enumerate(hands[:6], 1):
        split = house_way(hand, options.house_way, options.wheel)
        result = settle(split, dealer, _DEMO_BET, options)
        bonus = classify_bonus(hand)
        odds = table.odds_of(bonus)
        bonus_text = f"{BONUS_CLASS_NAMES[bonus]}, pays {odds} to 1" if odds else "no bonus"
        lines += [
            f"seat {seat}   {cards_text(hand)}",
            *_describe_split(split, options.wheel),
            f"         high {result.high.value}, low {result.low.value}: "
            f"{result.outcome.value.upper()} {result.net:+d} chips "
            f"(commission {result.commission}); bonus: {bonus_text}",
            "",
        ]
    lines.append(f"Check the deal yourself: {PROG} deal --seed {_DEMO_SEED.hex()}")
    out.write("\n".join(lines) + "\n")


def _describe_split(split: Split, wheel: WheelRank) -> list[str]:
    return [
        f"         high {cards_text(split.high):<16} {high_name(split.high_value(wheel))}",
        f"         low  {cards_text(split.low):<16} {low_name(split.low_value())}",
    ]
