"""The load's arithmetic: percentiles, a latency summary, a human player's first action."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of sorted values, nearest rank; NaN if empty."""
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, round(q * len(sorted_values) + 0.5) - 1))
    return sorted_values[k]


def first_action(rng: random.Random, pace: tuple[float, float]) -> float:
    """When a player who acts every ``pace`` seconds (uniform between the two) acts
    next, seen from a moment picked at random: the forward recurrence time of that
    renewal process (density ``P(pause > x) / mean pause``).

    Players who start together at this offset act at the same rate from their first
    second on. Each first acting at a uniform point of one mean pause instead, their
    second actions piled onto the last of the first ones: a third more actions than
    the mean in the fifth second of a window, fewer in the next ones, and the ringing
    went on for several pauses.
    """
    low, high = pace
    if rng.random() < low / ((low + high) / 2):
        return rng.uniform(0, low)  # sooner than the shortest pause: evenly
    return high - (high - low) * math.sqrt(rng.random())  # later: ever less likely


def summary(latencies: list[float]) -> dict[str, float | int]:
    """Count, p50, p99 and max of latencies (seconds in, milliseconds out)."""
    values = sorted(latencies)
    return {
        "count": len(values),
        "p50_ms": percentile(values, 0.50) * 1000,
        "p99_ms": percentile(values, 0.99) * 1000,
        "max_ms": (values[-1] * 1000) if values else float("nan"),
    }
