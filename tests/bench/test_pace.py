"""The human pace of bench/load/driver.py: a load as steady at a window's start as later."""

from __future__ import annotations

import random

from bench.load.stats import first_action

PACE = (5.0 * 5 / 6, 10.0 * 5 / 6)  # the bench's pace, shortened for the passive seat
PLAYERS = 8_333  # the acting players of 10,000
SECONDS = 20


def starts_per_second(first: list[float], rng: random.Random) -> list[int]:
    """How many actions start in each second of the window when each player first acts
    at its offset in ``first`` and then after every pause drawn from ``PACE``."""
    counts = [0] * SECONDS
    for offset in first:
        t = offset
        while t < SECONDS:
            counts[int(t)] += 1
            t += rng.uniform(*PACE)
    return counts


def test_the_first_actions_make_a_steady_rate_from_the_first_second() -> None:
    rng = random.Random(7)
    counts = starts_per_second([first_action(rng, PACE) for _ in range(PLAYERS)], rng)
    mean = PLAYERS / (sum(PACE) / 2)
    # Poisson-sized noise (about 37 a second here) and no more: within 10 %.
    assert all(abs(c - mean) < 0.1 * mean for c in counts), (mean, counts)


def test_first_actions_within_one_mean_pause_would_make_a_burst() -> None:
    """The check above is able to fail: offsets uniform over one mean pause (what the
    driver drew before) overload the fifth second."""
    rng = random.Random(7)
    mean_pause = sum(PACE) / 2
    counts = starts_per_second([rng.uniform(0, mean_pause) for _ in range(PLAYERS)], rng)
    assert max(counts) > 1.2 * PLAYERS / mean_pause, counts


def test_a_first_action_comes_before_the_longest_pause() -> None:
    rng = random.Random(3)
    offsets = [first_action(rng, PACE) for _ in range(10_000)]
    assert all(0 <= t <= PACE[1] for t in offsets)
    # Its mean is E[pause²] / (2 E[pause]) for a renewal process.
    low, high = PACE
    expected = (low * low + low * high + high * high) / 3 / (low + high)
    assert abs(sum(offsets) / len(offsets) - expected) < 0.05
