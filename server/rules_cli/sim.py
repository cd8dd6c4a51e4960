"""The ``sim`` subcommand: a house way against a house way over N rounds from a seed."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from typing import TYPE_CHECKING, TextIO

from server.rules.options import HouseWay, RuleOptions
from server.rules.values import WheelRank
from server.rules_cli.inputs import InputError, seed_from_text

if TYPE_CHECKING:
    from server.rules.sim import SimResult

_PROGRESS_MIN_HANDS = 50_000


def cmd_sim(args: argparse.Namespace, out: TextIO) -> None:
    """Plays ``args.hands`` rounds from ``args.seed`` and writes the rates and the EV."""
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
    # The bar is rich's, in the `cli` extra: without it the simulation runs silently.
    if args.hands >= _PROGRESS_MIN_HANDS and sys.stderr.isatty() and has_rich():
        result = sim_with_progress(seed, args.hands, way, dealer_way, options)
    else:
        result = simulate(seed, args.hands, way, dealer_way, options=options)
    seconds = time.perf_counter() - started
    _write_sim(result, seed, seconds, args.json, out)


def has_rich() -> bool:
    """Whether rich, for the progress bar, is installed (the `cli` extra)."""
    return importlib.util.find_spec("rich") is not None


def sim_with_progress(
    seed: bytes, hands: int, way: HouseWay, dealer_way: HouseWay, options: RuleOptions
) -> SimResult:
    """:func:`~server.rules.sim.simulate` with a progress bar on standard error."""
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
