"""``paigow-rules``: the rules engine on the command line (a thin shell over the rules).

Subcommands::

    rank [CARDS]        5 cards: the high hand's name; 2 cards: the low hand's name
    split [CARDS]       the house way's split of 7 cards, with both hands' names
    classify [CARDS]    the best 5-card category among 7 cards
    bonus [CARDS]       the bonus class of 7 cards and its odds on a pay table
    census              the exact count of every category over all 5- (or 2-) card hands
    sim                 a house way against a house way over N rounds from a seed
    edge                the house edge of every bet of a table (the main bet simulated,
                        the bonus exact)
    dealer-census       the dealer's queen-high pai gows and nine-high lows, counted
                        exactly over every seven-card hand
    deal                the seven hands a 32-byte seed deals, and its commitment
    demo                one round from a fixed seed, told for people

Without CARDS, ``rank``, ``split``, ``classify`` and ``bonus`` read one hand per line
from standard input (blank lines skipped) and write one JSON object per line; the
first bad line stops the batch. Bad input prints a message naming the bad token on
standard error and exits with status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

from protocol.fairness import SeedError
from server.rules.bonus import DEFAULT_PAY_TABLE, PAY_TABLES, PayTableError
from server.rules.cards import CardError
from server.rules.options import HouseWay
from server.rules.values import WheelRank
from server.rules_cli.census import census, cmd_census
from server.rules_cli.deal import cmd_deal, cmd_demo
from server.rules_cli.dealer_census import cmd_dealer_census
from server.rules_cli.edge import DEFAULT_HANDS, DEFAULT_SEED, cmd_edge
from server.rules_cli.hands import (
    bonus_handler,
    classify_handler,
    rank_handler,
    run_hands,
    split_handler,
)
from server.rules_cli.inputs import (
    DEFAULTS,
    EXIT_USAGE,
    PROG,
    InputError,
    parse_hand,
    seed_from_text,
)
from server.rules_cli.sim import cmd_sim

__all__ = ["EXIT_USAGE", "PROG", "InputError", "census", "main", "parse_hand", "seed_from_text"]


def _parser() -> argparse.ArgumentParser:
    ways = [w.value for w in HouseWay]
    wheels = [w.value for w in WheelRank]
    parser = argparse.ArgumentParser(prog=PROG, description="Pai Gow Poker rules engine.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def hand_command(name: str, help_text: str) -> argparse.ArgumentParser:
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        cmd.add_argument(
            "cards",
            nargs="*",
            metavar="CARDS",
            help="cards like 'As Kd JK' (none: one hand per line from stdin, JSON out)",
        )
        cmd.add_argument("--json", action="store_true", help="print JSON for a hand given")
        return cmd

    rank = hand_command("rank", "the name of a 5-card high hand or a 2-card low hand")
    rank.add_argument("--wheel", choices=wheels, default=DEFAULTS.wheel.value)
    split = hand_command("split", "the house way's split of 7 cards")
    split.add_argument("--way", choices=ways, default=DEFAULTS.house_way.value)
    split.add_argument("--wheel", choices=wheels, default=DEFAULTS.wheel.value)
    hand_command("classify", "the best 5-card category among 7 cards")
    bonus = hand_command("bonus", "the bonus class of 7 cards")
    bonus.add_argument("--pay-table", choices=list(PAY_TABLES), default=DEFAULT_PAY_TABLE)

    cen = sub.add_parser("census", help="count every category over all hands")
    cen.add_argument("--cards", type=int, choices=[5, 2], default=5)
    cen.add_argument("--wheel", choices=wheels, default=DEFAULTS.wheel.value)
    cen.add_argument("--json", action="store_true")

    sim = sub.add_parser("sim", help="a house way against a house way over N rounds")
    sim.add_argument("--hands", type=int, required=True, help="rounds to play")
    sim.add_argument(
        "--seed",
        required=True,
        help="64 hex digits, or any text (the seed is then its SHA-256)",
    )
    sim.add_argument("--way", choices=ways, default=DEFAULTS.house_way.value)
    sim.add_argument("--dealer-way", choices=ways, default=None, help="default: --way")
    sim.add_argument("--commission", type=int, default=DEFAULTS.commission_pct, metavar="PCT")
    sim.add_argument("--pay-table", choices=list(PAY_TABLES), default=DEFAULT_PAY_TABLE)
    sim.add_argument("--wheel", choices=wheels, default=DEFAULTS.wheel.value)
    sim.add_argument("--json", action="store_true")

    edge = sub.add_parser(
        "edge",
        help="the house edge of every bet of a table",
        description="The house edge of each bet of the tables of a tables file: the main "
        "bet at the table's minimum, its maximum and the exact percentage, simulated "
        "with the table's house way (95%% intervals); the bonus bet exactly, over every "
        "seven-card hand; at a commission-free table the main bet without commission and "
        "the side bet on its barred hand (Queen's Dragon, Tiger 9) exactly.",
    )
    edge.add_argument("--table", action="append", metavar="ID", help="this table only (repeatable)")
    edge.add_argument(
        "--tables-file", metavar="PATH", help="a tables file (default: the built-in tables)"
    )
    edge.add_argument(
        "--hands", type=int, default=DEFAULT_HANDS, help="rounds to simulate (%(default)s)"
    )
    edge.add_argument(
        "--seed", default=DEFAULT_SEED, help="64 hex digits, or any text (its SHA-256)"
    )
    edge.add_argument("--json", action="store_true", help="one JSON object per table")

    dc = sub.add_parser(
        "dealer-census",
        help="the dealer's queen-high pai gows and nine-high lows, exactly",
        description="The dealer's seven-card hands that commission-free tables look at, "
        "counted exactly over all of them (twenty seconds to a minute a house way), "
        "beside the counts checked in; exits with status 2 if they differ.",
    )
    dc.add_argument("--way", choices=ways, default=None, help="default: every house way")
    dc.add_argument("--wheel", choices=wheels, default=DEFAULTS.wheel.value)
    dc.add_argument(
        "--ranks", metavar="R,R,...", help="a deck of these ranks (2..14) only, in four suits"
    )
    dc.add_argument("--json", action="store_true", help="one JSON object per house way")

    dl = sub.add_parser("deal", help="the seven hands a seed deals, and its commitment")
    dl.add_argument("--seed", required=True, help="the 32-byte seed in hex (64 digits)")
    dl.add_argument("--json", action="store_true")

    sub.add_parser("demo", help="one round from a fixed seed, told for people")
    return parser


def _dispatch(args: argparse.Namespace, out: TextIO) -> None:
    command = args.command
    if command == "rank":
        run_hands(
            args, rank_handler(WheelRank(args.wheel), args.json or not args.cards), (5, 2), out
        )
    elif command == "split":
        handler = split_handler(
            HouseWay(args.way), WheelRank(args.wheel), args.json or not args.cards
        )
        run_hands(args, handler, (7,), out)
    elif command == "classify":
        run_hands(args, classify_handler(args.json or not args.cards), (7,), out)
    elif command == "bonus":
        run_hands(args, bonus_handler(args.pay_table, args.json or not args.cards), (7,), out)
    elif command == "census":
        cmd_census(args, out)
    elif command == "sim":
        cmd_sim(args, out)
    elif command == "edge":
        cmd_edge(args, out)
    elif command == "dealer-census":
        cmd_dealer_census(args, out)
    elif command == "deal":
        cmd_deal(args, out)
    else:
        cmd_demo(out)


def main(argv: list[str] | None = None) -> int:
    """Run ``paigow-rules`` with ``argv`` (default: the process's); return the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed its message on stderr
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    out = sys.stdout
    try:
        _dispatch(args, out)
        out.flush()
    except (InputError, CardError, SeedError, PayTableError) as exc:
        out.flush()
        sys.stderr.write(f"{PROG} {args.command}: error: {exc}\n")
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
