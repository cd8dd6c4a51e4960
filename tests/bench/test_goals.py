"""The goals' summary of ``make bench`` (bench/scenarios/goals.py): each goal's median and
verdict."""

from __future__ import annotations

import math

from bench.scenarios.goals import GOALS, summary

NAN = math.nan


def _runs(p99s: list[tuple[float, float]]) -> list[dict[str, float]]:
    """Runs with every figure meeting its goal but the p99, which is ``(game, bare)``."""
    return [
        {
            "game.rate": 3_000.0,
            "bare.rate": 4_000.0,
            "game.per_cpu": 5_000.0,
            "bare.per_cpu": 9_000.0,
            "game.p99_large": game,
            "bare.p99_large": bare,
            "game.kib": 16.0,
            "bare.kib": 15.0,
            "rounds.commands": 74.0,
            "rounds.aof_bytes": 14_000.0,
        }
        for game, bare in p99s
    ]


def _verdicts(runs: list[dict[str, float]]) -> dict[str, str]:
    lines = [line for line in summary(runs) if not line.strip().startswith("each run")]
    return {goal.label: line for goal, line in zip(GOALS, lines[1:], strict=True)}


def test_each_goal_is_judged_on_the_median_of_the_runs() -> None:
    verdicts = _verdicts(_runs([(20.0, 10.0), (90.0, 12.0), (24.0, 11.0)]))
    p99 = verdicts["p99 action-to-ack, 10,000 players at human pace"]
    assert "24.0 ms" in p99  # the median, not the 90
    ratio = verdicts["actions acknowledged per second, 833 players closed loop"]
    assert "0.75" in ratio
    assert all(line.endswith(" met") and "NOT" not in line for line in verdicts.values())


def test_a_goal_the_bare_server_misses_too_says_so() -> None:
    """The machine's floor: the bare server's own p99 above the goal in most runs."""
    verdicts = _verdicts(_runs([(89.8, 55.6), (65.2, 13.9), (167.9, 73.6)]))
    p99 = verdicts["p99 action-to-ack, 10,000 players at human pace"]
    assert p99.endswith("NOT met (the bare server misses it too, in 2 of 3 runs)")


def test_a_goal_only_the_game_server_misses_is_plainly_not_met() -> None:
    verdicts = _verdicts(_runs([(89.8, 10.0), (65.2, 13.9), (167.9, 30.0)]))
    assert verdicts["p99 action-to-ack, 10,000 players at human pace"].endswith(" NOT met")


def test_a_goal_met_is_met_whatever_the_bare_server_did() -> None:
    verdicts = _verdicts(_runs([(20.0, 30.0), (22.0, 40.0), (24.0, 11.0)]))
    assert verdicts["p99 action-to-ack, 10,000 players at human pace"].endswith("  met")


def test_the_bare_servers_runs_are_counted_where_measured() -> None:
    verdicts = _verdicts(_runs([(89.8, 30.0), (65.2, NAN), (167.9, NAN)]))
    p99 = verdicts["p99 action-to-ack, 10,000 players at human pace"]
    assert p99.endswith("NOT met (the bare server misses it too, in 1 of 1 runs)")
