"""The ``edge`` subcommand: the house edge of every bet of a table of a tables file.

For each table: the main bet at its minimum and its maximum (each with the commission
that bet pays under the table's rounding) and at the exact percentage, estimated by
the simulator with 95 % confidence intervals; and the bonus bet on its pay table,
exactly (docs/RULES.md, "The math, checked"). At a commission-free table the main bet
pays no commission at any size, so it has one line. Then each side bet the table offers
beyond the bonus (``[table.side_bets.<kind>]``), exactly: the Queen's Dragon and the
Tiger 9 at the table's odds (the Tiger 9 under its house way), and the Envy bonus's
expected pay per qualifying bonus bet for one to five other players. Tables of one
house way and wheel share one simulation. Then
each progressive jackpot of the file (``[jackpot.<name>]``): its wager's return as a
function of the meter, at the seed, its break-even meter and its return over the
meter's life, exactly.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from server.rules import queens_dragon as dragon
from server.rules import tiger9
from server.rules.bonus import pay_table
from server.rules.envy import ENVY, EnvyOptions
from server.rules.options import CommissionFree, RuleOptions
from server.rules.values import WheelRank
from server.rules_cli.inputs import InputError, seed_from_text
from server.tables_file import TablesFileError, load_tables

if TYPE_CHECKING:
    from server.rules.edges import MainEdge
    from server.rules.options import HouseWay
    from server.rules.sim import SimResult
    from server.table.state import TableConfig

ENVY_OTHERS = range(1, 6)
"""The numbers of other players the Envy bonus's expected pay is printed for."""

DEFAULT_HANDS = 100_000
DEFAULT_SEED = "paigow-rules edge"


def cmd_edge(args: argparse.Namespace, out: TextIO) -> None:
    """Writes the house edges of the tables ``args`` names (all of the file's by
    default): one block of text per table, or one JSON object per line."""
    from server.rules.edges import bonus_edge, main_edge, queens_dragon_edge, tiger9_edge

    if args.hands < 2:
        raise InputError(f"--hands {args.hands}: at least 2 rounds")
    try:
        tables = load_tables(Path(args.tables_file) if args.tables_file else None)
    except TablesFileError as exc:
        raise InputError(str(exc)) from None
    if args.table:
        known = {t.table_id: t for t in tables}
        missing = [t for t in args.table if t not in known]
        if missing:
            raise InputError(f"no table {missing[0]!r} in the file (it has {', '.join(known)})")
        tables = [known[t] for t in args.table]
    seed = seed_from_text(args.seed)
    sims: dict[tuple[HouseWay, WheelRank], tuple[SimResult, float]] = {}
    for config in tables:
        rules = config.rules
        key = (rules.house_way, rules.wheel)
        if key not in sims:
            started = time.perf_counter()
            sims[key] = (_simulate(seed, args.hands, rules), time.perf_counter() - started)
        result, seconds = sims[key]
        if rules.commission_free is CommissionFree.NONE:
            mains = [
                ("minimum", main_edge(result, config.min_bet, rules)),
                ("maximum", main_edge(result, config.max_bet, rules)),
                ("exact percentage", main_edge(result, None, rules)),
            ]
        else:
            mains = [("no commission", main_edge(result, None, rules))]
        bonus = bonus_edge(pay_table(rules.bonus_pay_table))
        sides: list[tuple[str, int, Fraction]] = []
        envy: EnvyOptions | None = None
        # The side bets the table offers, in the registry's order (the bonus above).
        for kind in config.side_kinds:
            if kind == dragon.KIND:
                odds = config.side_options(kind).odds
                sides.append((kind, odds, queens_dragon_edge(odds)))
            elif kind == tiger9.KIND:
                odds = config.side_options(kind).odds
                sides.append((kind, odds, tiger9_edge(rules.house_way, rules.wheel, odds)))
            elif kind == ENVY:
                envy = config.side_options(kind)
        if args.json:
            line = _as_json(config, result, mains, bonus, sides, seed)
            if envy is not None:
                line["envy"] = _envy_json(envy)
            out.write(json.dumps(line) + "\n")
        else:
            _write_text(config, result, seconds, mains, bonus, sides, out, envy)
    # Every simulation deals the same hands whatever its house way: any one's counts of
    # the players' seven-card classes serve the progressive.
    sample = next(iter(sims.values()))[0] if sims else None
    _write_jackpots(args, [t.table_id for t in tables], sample, out)


def _write_jackpots(
    args: argparse.Namespace, shown: list[str], sample: SimResult | None, out: TextIO
) -> None:
    """The progressive wager of each jackpot of the file offered at a table shown (every
    jackpot when no ``--table`` was given): exactly, as a function of the meter, and its
    fixed part as measured on the simulation's hands."""
    from server.jackpots_file import JackpotsFileError, load_jackpots
    from server.rules.bonus import BonusClass
    from server.rules.edges import progressive_edge
    from server.rules.progressive import sampled_return

    try:
        jackpots = load_jackpots(Path(args.tables_file) if args.tables_file else None)
    except JackpotsFileError as exc:
        raise InputError(str(exc)) from None
    for name, (options, offered) in jackpots.items():
        if args.table and not set(offered) & set(shown):
            continue
        r = progressive_edge(options.table)
        wager, seed = options.wager, options.seed
        at_seed = r.at(seed, wager)
        break_even = r.break_even(wager)
        long_run = r.long_run(options.contribution_bps, seed, wager)
        sampled = None
        if sample is not None and sample.bonus_counts:
            counts = dict(zip(BonusClass, sample.bonus_counts, strict=True))
            sampled = sampled_return(counts, options.table)
        if args.json:
            line = {
                "jackpot": name,
                "tables": list(offered),
                "pay_table": options.pay_table,
                "wager": wager,
                "seed": seed,
                "contribution_bps": options.contribution_bps,
                "fixed_return": float(r.fixed),
                "fixed_return_fraction": _fraction(r.fixed),
                "meter_share_per_hand": _fraction(r.per_meter_chip),
                "return_at_seed": float(at_seed),
                "break_even_meter": float(break_even),
                "long_run_return": float(long_run),
                "exact": True,
            }
            if sampled is not None:
                line["simulated"] = {
                    "hands": sampled.hands,
                    "fixed_return": sampled.fixed,
                    "half_width_95": sampled.half_width,
                    "meter_hands": sampled.meter_hands,
                }
            out.write(json.dumps(line) + "\n")
            continue
        lines = [
            f"jackpot {name}: progressive wager of {wager}, {options.pay_table} pay table "
            f"(exact), tables {', '.join(offered) or '(none)'}",
            f"  return per chip at a meter of m chips: {float(r.fixed):.4%} + "
            f"m x {float(r.per_meter_chip / wager):.4e}",
            f"  at the seed ({seed}): return {float(at_seed):.4%}, edge {float(1 - at_seed):+.4%}",
            f"  break-even meter: {float(break_even):,.0f} chips",
            f"  over the meter's life ({options.contribution_bps / 100:g}% of each wager to the "
            f"meter, the seed after each full hit): return {float(long_run):.4%}",
        ]
        if sampled is not None:
            lines.append(
                f"    (simulated: the fixed amounts return {sampled.fixed:.3%} ± "
                f"{sampled.half_width:.3%} over {sampled.hands:,} hands, exactly "
                f"{float(r.fixed):.3%}; {sampled.meter_hands} hands took a share of the meter)"
            )
        out.write("\n".join(lines) + "\n\n")


def _simulate(seed: bytes, hands: int, rules: RuleOptions) -> SimResult:
    from server.rules.sim import simulate
    from server.rules_cli.sim import has_rich, sim_with_progress

    way = rules.house_way
    if hands >= 50_000 and sys.stderr.isatty() and has_rich():
        return sim_with_progress(seed, hands, way, way, rules)
    return simulate(seed, hands, way, way, options=rules)


def _rounding(rules: RuleOptions) -> str:
    return {
        "down": "rounded down",
        "up": "rounded up",
        "whole": "exact (main bets whose commission is whole chips)",
    }[rules.commission_rounding.value]


_BARRED = {
    CommissionFree.EZ: "the dealer's queen-high pai gow",
    CommissionFree.NINE_LOW: "the dealer's nine-high low hand",
}
_SIDE_NAMES = {"queens_dragon": "Queen's Dragon", "tiger9": "Tiger 9"}


def _write_text(
    config: TableConfig,
    result: SimResult,
    seconds: float,
    mains: list[tuple[str, MainEdge]],
    bonus: Fraction,
    sides: list[tuple[str, int, Fraction]],
    out: TextIO,
    envy: EnvyOptions | None = None,
) -> None:
    rules = config.rules
    barred = _BARRED.get(rules.commission_free)
    commission = (
        f"no commission, every main bet pushes on {barred}"
        if barred is not None
        else f"commission {rules.commission_pct}% {_rounding(rules)}"
    )
    lines = [
        f"{config.table_id}: {config.name}",
        f"  {commission}; house way "
        f"{rules.house_way.value} for the player and the dealer; wheel {rules.wheel.value}",
    ]
    for label, m in mains:
        if barred is not None:
            what = "main bet, no commission"
        elif m.bet is not None:
            what = f"main bet of {m.bet} ({label}), commission {m.commission} on a win"
        else:
            what = f"main bet, commission of exactly {rules.commission_pct}%"
        lines.append(f"  {what:<58} {m.edge:+8.3%} ± {m.half_width:.3%}")
    lines.append(
        f"    (simulated: {result.rounds:,} rounds in {seconds:.1f} s; 95 % intervals; "
        f"win {result.win_rate:.3%}, push {result.push_rate:.3%}, loss {result.loss_rate:.3%})"
    )
    if barred is not None:
        won, pushed, lost = (
            result.queen_high if rules.commission_free is CommissionFree.EZ else result.nine_low
        )
        hits = won + pushed + lost
        lines.append(
            f"    (the dealer's barred hand in {hits:,} of the rounds, {hits / result.rounds:.3%}: "
            f"{won:,} wins and {lost:,} losses pushed)"
        )
    label = f"bonus bet, {rules.bonus_pay_table} pay table (exact)"
    lines.append(f"  {label:<58} {float(bonus):+8.4%}  return {float(1 - bonus):.4%}")
    for name, odds, edge in sides:
        label = f"{_SIDE_NAMES[name]} at {odds} to 1 (exact)"
        lines.append(f"  {label:<58} {float(edge):+8.4%}  return {float(1 - edge):.4%}")
    if envy is not None:
        lines.extend(_envy_text(envy))
    out.write("\n".join(lines) + "\n\n")


def _envy_text(envy: EnvyOptions) -> list[str]:
    from server.rules.edges import envy_per_other

    per = envy_per_other(envy)
    lines = [
        f"  Envy bonus on a bonus bet of {envy.min_bonus} or more (exact): "
        f"{float(per):.4f} chips per other player",
    ]
    for n in ENVY_OTHERS:
        chips = n * per
        lines.append(
            f"    {n} other player{'s' if n > 1 else ' '}: {float(chips):8.4f} chips a round, "
            f"{float(chips / envy.min_bonus):+.4%} of a bonus bet of {envy.min_bonus}"
        )
    return lines


def _envy_json(envy: EnvyOptions) -> dict[str, Any]:
    from server.rules.edges import envy_per_other

    per = envy_per_other(envy)
    return {
        "min_bonus": envy.min_bonus,
        "per_other": float(per),
        "per_other_fraction": _fraction(per),
        "by_others": [
            {
                "others": n,
                "chips": float(n * per),
                "per_qualifying_chip": float(n * per / envy.min_bonus),
            }
            for n in ENVY_OTHERS
        ],
        "exact": True,
    }


def _as_json(
    config: TableConfig,
    result: SimResult,
    mains: list[tuple[str, MainEdge]],
    bonus: Fraction,
    sides: list[tuple[str, int, Fraction]],
    seed: bytes,
) -> dict[str, Any]:
    rules = config.rules
    return {
        "table": config.table_id,
        "name": config.name,
        "commission_pct": rules.commission_pct,
        "commission_rounding": rules.commission_rounding.value,
        "commission_free": rules.commission_free.value,
        "house_way": rules.house_way.value,
        "main": [
            {
                "at": label,
                "bet": m.bet,
                "commission": m.commission,
                "edge": m.edge,
                "half_width_95": m.half_width,
            }
            for label, m in mains
        ],
        "simulation": {
            "seed": seed.hex(),
            "rounds": result.rounds,
            "wins": result.wins,
            "pushes": result.pushes,
            "losses": result.losses,
        },
        "bonus": {
            "pay_table": rules.bonus_pay_table,
            "edge": float(bonus),
            "edge_fraction": f"{bonus.numerator}/{bonus.denominator}",
            "exact": True,
        },
        "side_bets": [
            {
                "bet": name,
                "odds": odds,
                "edge": float(edge),
                "edge_fraction": f"{edge.numerator}/{edge.denominator}",
                "exact": True,
            }
            for name, odds, edge in sides
        ],
    }


def _fraction(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"
