"""The goals of issue 16, and their summary over several runs of ``bench/scenarios/server.py``.

Each run gives a flat dict of named figures (:func:`load_figures` for a load run of
the game server beside one of the bare server, :func:`round_figures` for the rounds
step); :data:`GOALS` says which figure each goal reads and what it must be; and
:func:`summary` prints, for each goal, the median over the runs beside the bare
server's, each run's value, and whether the goal is met (a goal of the game server's
own figure that it misses also says whether the bare server, the machine's floor,
misses it too). A new goal is one line of :data:`GOALS` (and its figure one line of
the function that reads it).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

NAN = float("nan")


@dataclass(frozen=True)
class Goal:
    """What one figure must be.

    ``figure`` names the game server's figure (``game.<figure>``, with the bare
    server's as ``bare.<figure>`` where it has one) or another one by its full name
    (``rounds.commands``). With ``ratio``, ``limit`` bounds the game server's figure
    divided by the bare server's (the median of each run's ratio: a run's two servers
    met the same load on the machine), else the figure itself. ``limit`` None: the
    figure is measured, with no goal yet.
    """

    label: str
    figure: str
    op: str  # ">=" or "<="
    limit: float | None
    ratio: bool = False
    unit: str = ""
    spec: str = ",.0f"


GOALS: tuple[Goal, ...] = (
    Goal("actions acknowledged per second, 833 players closed loop", "rate", ">=", 0.5, True),
    Goal("actions per server CPU-second, same window", "per_cpu", ">=", 0.5, True),
    Goal("p99 action-to-ack, 10,000 players at human pace", "p99_large", "<=", 25.0, False, "ms", ".1f"),  # noqa: E501
    Goal("server RSS per connected player, 10,000 idle", "kib", "<=", 1.15, True, "KiB", ".1f"),
    Goal("Redis commands per 6-player round (executed)", "rounds.commands", "<=", 120.0, False, "", ".1f"),  # noqa: E501
    # Halved: 34 KB a round were appended before issue 16 (the rounds step measures it).
    Goal("bytes appended to the AOF per 6-player round", "rounds.aof_bytes", "<=", 17_000.0),
)  # fmt: skip


def load_figures(game: dict[str, Any], bare: dict[str, Any], large: int) -> dict[str, float]:
    """The figures of one load run of each server (``bench/load/driver.py``'s results);
    ``large``: the players the 10,000-player part wanted (fewer connected: no figure)."""
    out: dict[str, float] = {}
    for name, run in (("game", game), ("bare", bare)):
        t = run["throughput"]
        out[f"{name}.rate"] = t["actions_per_s"]
        out[f"{name}.per_cpu"] = t["actions_per_s"] / t["server_cpu"] if t["server_cpu"] else NAN
        complete = run["mem_large"]["players"] >= large
        out[f"{name}.p99_large"] = run["latency_large"]["p99_ms"] if complete else NAN
        out[f"{name}.kib"] = kib_per_player(run)
    return out


def round_figures(rounds: dict[str, Any]) -> dict[str, float]:
    """The figures of the rounds step (six bots at one table, ``rounds`` of them)."""
    n = rounds["rounds"]
    return {
        "rounds.commands": sum(rounds["executed"].values()) / n,
        "rounds.aof_bytes": rounds["aof_bytes"] / n if "aof_bytes" in rounds else NAN,
    }


def kib_per_player(run: dict[str, Any]) -> float:
    """Server RSS per connected player at the largest count: the growth from the
    server's start, over the players."""
    mem = run["mem_large"]
    grown: float = mem["rss_kib"] - run["rss_start_kib"]
    players: int = mem["players"]
    return grown / max(1, players)


def _median(values: Sequence[float]) -> float:
    known = [v for v in values if not math.isnan(v)]
    return statistics.median(known) if known else NAN


def _fmt(value: float, spec: str, unit: str = "") -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:{spec}}" + (f" {unit}" if unit else "")


def _meets(value: float, op: str, limit: float) -> bool:
    """Whether ``value``, measured, meets ``op limit``."""
    return value >= limit if op == ">=" else value <= limit


def _met(value: float, op: str, limit: float | None) -> str:
    if limit is None:
        return "measured (no goal yet)"
    if math.isnan(value):
        return "NOT measured"
    return "met" if _meets(value, op, limit) else "NOT met"


def summary(runs: Sequence[dict[str, float]], goals: Sequence[Goal] = GOALS) -> list[str]:
    """The lines of the goals' summary over ``runs`` (each a dict of figures)."""
    head = f"  {'goal':<56} {'game server':>12} {'bare':>10} {'ratio':>6}  {'wanted':<15} verdict"
    lines = [head]
    for goal in goals:
        key = goal.figure if "." in goal.figure else f"game.{goal.figure}"
        bare_key = "" if "." in goal.figure else f"bare.{goal.figure}"
        game = [r.get(key, NAN) for r in runs]
        bare = [r.get(bare_key, NAN) for r in runs]
        ratios = [g / b if b else NAN for g, b in zip(game, bare, strict=True)]
        g, b, ratio = _median(game), _median(bare), _median(ratios)
        judged = ratio if goal.ratio else g
        wanted = "" if goal.limit is None else f"{goal.op} {goal.limit:g}"
        if goal.ratio and wanted:
            wanted += " x bare"
        elif wanted and goal.unit:
            wanted += f" {goal.unit}"
        verdict = _met(judged, goal.op, goal.limit)
        limit = goal.limit
        if verdict == "NOT met" and not goal.ratio and bare_key and limit is not None:
            measured = [v for v in bare if not math.isnan(v)]
            missed = sum(1 for v in measured if not _meets(v, goal.op, limit))
            if measured and not _meets(b, goal.op, limit):
                # An absolute goal the machine's own floor misses as well.
                verdict += f" (the bare server misses it too, in {missed} of {len(measured)} runs)"
        lines.append(
            f"  {goal.label:<56} {_fmt(g, goal.spec, goal.unit):>12} "
            f"{_fmt(b, goal.spec, goal.unit):>10} {_fmt(ratio, '.2f'):>6}  {wanted:<15} "
            f"{verdict}"
        )
        if bare_key and len(runs) > 1:
            each = ", ".join(_fmt(v, goal.spec) for v in game)
            bares = ", ".join(_fmt(v, goal.spec) for v in bare)
            extra = f"; bare {bares}" if bare_key else ""
            extra += f"; ratio {', '.join(_fmt(r, '.2f') for r in ratios)}" if bare_key else ""
            lines.append(f"      each run: game {each}{extra}")
    return lines
