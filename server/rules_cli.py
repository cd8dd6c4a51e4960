"""``paigow-rules``: the rules engine on the command line (a thin shell over the rules).

Subcommands::

    rank [CARDS]        5 cards: the high hand's name; 2 cards: the low hand's name
    split [CARDS]       the house way's split of 7 cards, with both hands' names
    classify [CARDS]    the best 5-card category among 7 cards
    bonus [CARDS]       the bonus class of 7 cards and its odds on a pay table
    census              the exact count of every category over all 5- (or 2-) card hands
    sim                 a house way against a house way over N rounds from a seed
    deal                the seven hands a 32-byte seed deals, and its commitment
    demo                one round from a fixed seed, told for people

Without CARDS, ``rank``, ``split``, ``classify`` and ``bonus`` read one hand per line
from standard input (blank lines skipped) and write one JSON object per line; the
first bad line stops the batch. Bad input prints a message naming the bad token on
standard error and exits with status 2.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from functools import partial
from itertools import combinations
from typing import TYPE_CHECKING, TextIO

from protocol.fairness import SEED_BYTES, SeedError, commitment, deal
from server.rules.bonus import (
    BONUS_CLASS_NAMES,
    DEFAULT_PAY_TABLE,
    PAY_TABLES,
    PayTableError,
    classify,
    classify_bonus,
    pay_table,
)
from server.rules.cards import DECK_SIZE, JOKER, CardError, card_text, cards_text, parse_card
from server.rules.options import HouseWay, RuleOptions
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

if TYPE_CHECKING:
    from server.rules.sim import SimResult
    from server.rules.splits import Split

PROG = "paigow-rules"
EXIT_USAGE = 2
_FLUSH_LINES = 4096
_PROGRESS_MIN_HANDS = 50_000
_DEMO_SEED = bytes(range(SEED_BYTES))
_DEMO_BET = 100
_DEFAULTS = RuleOptions()


class InputError(ValueError):
    """Bad input from the command line or standard input; the message says what."""


# --- parsing cards fast ----------------------------------------------------------------


def _token_table() -> dict[str, int]:
    # Every spelling of every card in either case, so batch lines skip parse_card.
    table: dict[str, int] = {}
    for code in range(DECK_SIZE):
        text = card_text(code)
        for r in {text[0].upper(), text[0].lower()}:
            for s in {text[1].lower(), text[1].upper()}:
                table[r + s] = code
        if text[0] == "T" and code != JOKER:
            table["10" + text[1]] = table["10" + text[1].upper()] = code
    for spelling in ("JK", "jk", "Jk", "jK", "JOKER", "joker", "Joker", "*"):
        table[spelling] = JOKER
    return table


_TOKENS = _token_table()


def parse_hand(text: str, counts: tuple[int, ...]) -> tuple[int, ...]:
    """Cards from one line of text; raises :class:`InputError` naming the bad token."""
    tokens = text.replace(",", " ").split()
    table = _TOKENS
    try:
        cards = tuple([table[t] for t in tokens])
    except KeyError:
        try:
            cards = tuple(parse_card(t) for t in tokens)
        except CardError as exc:
            raise InputError(str(exc)) from None
    if len(cards) not in counts:
        wanted = " or ".join(str(n) for n in counts)
        raise InputError(f"expected {wanted} cards, got {len(cards)}: {text.strip()!r}")
    if len(set(cards)) != len(cards):
        seen: set[int] = set()
        for card in cards:
            if card in seen:
                raise InputError(f"{card_text(card)} is given twice")
            seen.add(card)
    return cards


# --- the per-hand commands -------------------------------------------------------------

Handler = Callable[[tuple[int, ...]], str]


def _js(text: str) -> str:
    return json.dumps(text)


def _rank_handler(wheel: WheelRank, as_json: bool) -> Handler:
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


def _split_handler(way: HouseWay, wheel: WheelRank, as_json: bool) -> Handler:
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


def _classify_handler(as_json: bool) -> Handler:
    names = {c: CATEGORY_NAMES[c] for c in Category}

    def handle(cards: tuple[int, ...]) -> str:
        name = names[classify(cards)]
        if not as_json:
            return name[0].upper() + name[1:]
        return f'{{"cards": "{cards_text(cards)}", "category": "{name}"}}'

    return handle


def _bonus_handler(table_name: str, as_json: bool) -> Handler:
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


def _run_hands(
    args: argparse.Namespace, handler: Handler, counts: tuple[int, ...], out: TextIO
) -> None:
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


# --- census ----------------------------------------------------------------------------


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


def _cmd_census(args: argparse.Namespace, out: TextIO) -> None:
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


# --- sim, deal, demo -------------------------------------------------------------------


def seed_from_text(text: str) -> bytes:
    """A 32-byte seed: 64 hex digits as they are, any other text by its SHA-256."""
    stripped = text.strip()
    if len(stripped) == 2 * SEED_BYTES:
        try:
            return bytes.fromhex(stripped)
        except ValueError:
            pass
    return hashlib.sha256(stripped.encode()).digest()


def _hex_seed(text: str) -> bytes:
    try:
        seed = bytes.fromhex(text.strip())
    except ValueError:
        raise InputError(f"{text!r} is not a hex seed") from None
    if len(seed) != SEED_BYTES:
        raise InputError(f"{text!r} is not {SEED_BYTES} bytes ({2 * SEED_BYTES} hex digits)")
    return seed


def _cmd_sim(args: argparse.Namespace, out: TextIO) -> None:
    from server.rules.sim import simulate

    if args.hands < 0:
        raise InputError(f"--hands {args.hands}: the number of hands is not negative")
    if not 0 <= args.commission <= 100:
        raise InputError(f"--commission {args.commission}: a percentage from 0 to 100")
    options = RuleOptions(
        wheel=WheelRank(args.wheel),
        commission_pct=args.commission,
        house_way=HouseWay(args.way),
        bonus_pay_table=args.pay_table,
    )
    seed = seed_from_text(args.seed)
    way = HouseWay(args.way)
    dealer_way = HouseWay(args.dealer_way) if args.dealer_way else way
    started = time.perf_counter()
    if args.hands >= _PROGRESS_MIN_HANDS and sys.stderr.isatty():
        result = _sim_with_progress(seed, args.hands, way, dealer_way, options)
    else:
        result = simulate(seed, args.hands, way, dealer_way, options=options)
    seconds = time.perf_counter() - started
    _write_sim(result, seed, seconds, args.json, out)


def _sim_with_progress(
    seed: bytes, hands: int, way: HouseWay, dealer_way: HouseWay, options: RuleOptions
) -> SimResult:
    from rich.console import Console
    from rich.progress import Progress

    from server.rules.sim import simulate

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("simulating", total=hands)
        return simulate(
            seed,
            hands,
            way,
            dealer_way,
            options=options,
            progress=lambda done: bar.update(task, completed=done),
        )


def _write_sim(result: SimResult, seed: bytes, seconds: float, as_json: bool, out: TextIO) -> None:
    if as_json:
        payload = {"seed": seed.hex(), **result.as_dict(), "seconds": round(seconds, 3)}
        out.write(json.dumps(payload) + "\n")
        return
    rate = result.rounds / seconds if seconds > 0 else 0.0
    out.write(
        f"{result.rounds:,} rounds, player {result.player_way.value} "
        f"against dealer {result.dealer_way.value} (seed {seed.hex()})\n"
        f"win  {result.win_rate:8.4%}\npush {result.push_rate:8.4%}\n"
        f"loss {result.loss_rate:8.4%}\n"
        f"EV per unit bet, {result.commission_pct}% commission: {result.ev:+.4%}\n"
        f"bonus ({result.pay_table.name} table): EV {result.bonus_ev:+.4%}, "
        f"return {result.bonus_return:.4%}\n"
        f"{seconds:.1f} s, {rate:,.0f} rounds per second\n"
    )


def _cmd_deal(args: argparse.Namespace, out: TextIO) -> None:
    seed = _hex_seed(args.seed)
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


def _cmd_demo(out: TextIO) -> None:
    from server.rules.houseways import house_way
    from server.rules.settlement import settle

    options = _DEFAULTS
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


# --- the command line ------------------------------------------------------------------


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
    rank.add_argument("--wheel", choices=wheels, default=_DEFAULTS.wheel.value)
    split = hand_command("split", "the house way's split of 7 cards")
    split.add_argument("--way", choices=ways, default=_DEFAULTS.house_way.value)
    split.add_argument("--wheel", choices=wheels, default=_DEFAULTS.wheel.value)
    hand_command("classify", "the best 5-card category among 7 cards")
    bonus = hand_command("bonus", "the bonus class of 7 cards")
    bonus.add_argument("--pay-table", choices=list(PAY_TABLES), default=DEFAULT_PAY_TABLE)

    cen = sub.add_parser("census", help="count every category over all hands")
    cen.add_argument("--cards", type=int, choices=[5, 2], default=5)
    cen.add_argument("--wheel", choices=wheels, default=_DEFAULTS.wheel.value)
    cen.add_argument("--json", action="store_true")

    sim = sub.add_parser("sim", help="a house way against a house way over N rounds")
    sim.add_argument("--hands", type=int, required=True, help="rounds to play")
    sim.add_argument(
        "--seed",
        required=True,
        help="64 hex digits, or any text (the seed is then its SHA-256)",
    )
    sim.add_argument("--way", choices=ways, default=_DEFAULTS.house_way.value)
    sim.add_argument("--dealer-way", choices=ways, default=None, help="default: --way")
    sim.add_argument("--commission", type=int, default=_DEFAULTS.commission_pct, metavar="PCT")
    sim.add_argument("--pay-table", choices=list(PAY_TABLES), default=DEFAULT_PAY_TABLE)
    sim.add_argument("--wheel", choices=wheels, default=_DEFAULTS.wheel.value)
    sim.add_argument("--json", action="store_true")

    dl = sub.add_parser("deal", help="the seven hands a seed deals, and its commitment")
    dl.add_argument("--seed", required=True, help="the 32-byte seed in hex (64 digits)")
    dl.add_argument("--json", action="store_true")

    sub.add_parser("demo", help="one round from a fixed seed, told for people")
    return parser


def _dispatch(args: argparse.Namespace, out: TextIO) -> None:
    command = args.command
    if command == "rank":
        _run_hands(
            args, _rank_handler(WheelRank(args.wheel), args.json or not args.cards), (5, 2), out
        )
    elif command == "split":
        handler = _split_handler(
            HouseWay(args.way), WheelRank(args.wheel), args.json or not args.cards
        )
        _run_hands(args, handler, (7,), out)
    elif command == "classify":
        _run_hands(args, _classify_handler(args.json or not args.cards), (7,), out)
    elif command == "bonus":
        _run_hands(args, _bonus_handler(args.pay_table, args.json or not args.cards), (7,), out)
    elif command == "census":
        _cmd_census(args, out)
    elif command == "sim":
        _cmd_sim(args, out)
    elif command == "deal":
        _cmd_deal(args, out)
    else:
        _cmd_demo(out)


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
