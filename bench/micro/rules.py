"""Benchmark of the rules engine, with ``treys`` on the same hands in the same run.

Prints 5-card evaluations per second (ours on joker-free hands and on hands dealt
from the 53-card deck; ``treys`` on the same joker-free hands, and the ratio), bonus
classifications, house-way splits and simulated rounds per second. Goals (issue 2, on
one core): at least ``treys``'s rate per 5-card evaluation, 100,000 house-way splits
per second, a million simulated rounds in under 30 seconds. Run with
``python -m bench.micro.rules``.
"""

from __future__ import annotations

import gc
import platform
import random
import time
from collections.abc import Callable, Sequence

from treys import Card, Evaluator

from server.rules.bonus import classify_bonus_unchecked
from server.rules.cards import card_text
from server.rules.houseways import house_way
from server.rules.options import HouseWay
from server.rules.sim import simulate
from server.rules.values import high_value

HANDS = 200_000
SPLIT_HANDS = 50_000
SIM_ROUNDS = 50_000
REPEATS = 3
GOAL_SPLITS = 100_000
GOAL_SIM_SECONDS = 30.0


def _best_rate(run: Callable[[], object], count: int) -> float:
    """Items per second of ``run`` (which handles ``count`` items), best of a few runs."""
    best = 0.0
    for _ in range(REPEATS):
        start = time.perf_counter()
        run()
        best = max(best, count / (time.perf_counter() - start))
    return best


def _ours(hands: Sequence[tuple[int, ...]]) -> Callable[[], object]:
    def run() -> None:
        hv = high_value
        for hand in hands:
            hv(hand)

    return run


def _theirs(hands: Sequence[tuple[int, ...]]) -> Callable[[], object]:
    evaluator = Evaluator()
    # treys's public call takes a 2-card hand and a 3-card board; split before timing.
    pairs = [
        ([Card.new(card_text(c)) for c in h[:2]], [Card.new(card_text(c)) for c in h[2:]])
        for h in hands
    ]

    def run() -> None:
        evaluate = evaluator.evaluate
        for hand, board in pairs:
            evaluate(hand, board)

    return run


def main() -> None:
    """Prints the rules engine's figures beside ``treys``'s, from one run."""
    rng = random.Random(20240601)  # fixed, so every run times the same hands
    plain = [tuple(rng.sample(range(52), 5)) for _ in range(HANDS)]
    any53 = [tuple(rng.sample(range(53), 5)) for _ in range(HANDS)]
    sevens = [tuple(rng.sample(range(53), 7)) for _ in range(SPLIT_HANDS)]
    print(
        f"rules engine: Python {platform.python_version()} "
        f"({platform.python_implementation()}) on {platform.machine()}, one core, "
        f"gc thresholds {gc.get_threshold()}"
    )

    ours_plain, theirs = 0.0, 0.0
    run_ours, run_theirs = _ours(plain), _theirs(plain)
    for _ in range(REPEATS):  # interleaved, so a noisy neighbour slows both alike
        ours_plain = max(ours_plain, _best_rate(run_ours, HANDS))
        theirs = max(theirs, _best_rate(run_theirs, HANDS))
    ours_any = _best_rate(_ours(any53), HANDS)
    print(f"5-card evaluations, joker-free hands:  ours  {ours_plain:>12,.0f}/s")
    print(f"5-card evaluations, same hands:        treys {theirs:>12,.0f}/s")
    verdict = "ok" if ours_plain >= theirs else "below the goal"
    print(f"  ratio ours / treys: {ours_plain / theirs:.2f}x ({verdict})")
    print(f"5-card evaluations, 53-card deck:      ours  {ours_any:>12,.0f}/s")

    def classify_all() -> None:
        for hand in sevens:
            classify_bonus_unchecked(hand)

    classify_all()  # builds the rank table once, outside the timing
    rate = _best_rate(classify_all, SPLIT_HANDS)
    print(f"bonus classifications (7 cards):             {rate:>12,.0f}/s")

    for way in HouseWay:

        def split_all(way: HouseWay = way) -> None:
            for hand in sevens:
                house_way(hand, way)

        rate = _best_rate(split_all, SPLIT_HANDS)
        verdict = "ok" if rate >= GOAL_SPLITS else f"below {GOAL_SPLITS:,}/s"
        print(f"house-way splits, {way.value:<14}             {rate:>12,.0f}/s ({verdict})")

    seed = bytes(32)
    rate = _best_rate(lambda: simulate(seed, SIM_ROUNDS, HouseWay.PARTY), SIM_ROUNDS)
    million = 1_000_000 / rate
    verdict = "ok" if million < GOAL_SIM_SECONDS else f"over {GOAL_SIM_SECONDS:g} s"
    print(
        f"simulated rounds (party vs party):           {rate:>12,.0f}/s"
        f"  -> a million in {million:.1f} s ({verdict})"
    )


if __name__ == "__main__":
    main()
