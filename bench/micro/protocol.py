"""Benchmark of the protocol codec against plain msgpack on the same maps.

For a full 6-seat table snapshot and for a bet, it times ``decode(encode(message))``
(typed, validated) and ``msgpack.unpackb(msgpack.packb(map))`` (untyped, unchecked)
in the same run and prints both rates and their ratio. The goal of issue 3 is a
ratio of at most 2. Run with ``python -m bench.micro.protocol`` (or from ``bench``'s main).
"""

from __future__ import annotations

import asyncio
import gc
import platform
import time
from collections.abc import Callable

import msgpack

from protocol import Message, as_map, decode, encode
from protocol.examples import BET, SNAPSHOT

GOAL_RATIO = 2.0


def _batch_size(fn: Callable[[], object], target: float) -> int:
    """How many calls of ``fn`` take about ``target`` seconds."""
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed > 0.02:
            return max(1, int(n * target / elapsed))
        n *= 2


def _timed(fn: Callable[[], object], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return n / (time.perf_counter() - start)


def _rates(
    typed: Callable[[], object], raw: Callable[[], object], seconds: float
) -> tuple[float, float]:
    """Best calls per second of each, from interleaved batches.

    Interleaving matters on a shared machine: a noisy neighbour then slows both sides
    alike instead of skewing the ratio.
    """
    rounds = 5
    n_typed = _batch_size(typed, seconds / (2 * rounds))
    n_raw = _batch_size(raw, seconds / (2 * rounds))
    best_typed = best_raw = 0.0
    for _ in range(rounds):
        best_typed = max(best_typed, _timed(typed, n_typed))
        best_raw = max(best_raw, _timed(raw, n_raw))
    return best_typed, best_raw


def _loop_name() -> str:
    policy = asyncio.get_event_loop_policy()
    return f"{type(policy).__module__}.{type(policy).__name__} (not used by this benchmark)"


def bench_message(label: str, message: Message, seconds: float = 3.0) -> float:
    """Prints the typed and raw round-trip rates of ``message``; returns the ratio."""
    frame = encode(message)
    plain = as_map(message)
    if decode(frame) != message:  # a benchmark of a broken codec would be meaningless
        raise AssertionError(f"{label}: round trip changed the message")
    typed, raw = _rates(
        lambda: decode(encode(message)), lambda: msgpack.unpackb(msgpack.packb(plain)), seconds
    )
    ratio = raw / typed
    verdict = "ok" if ratio <= GOAL_RATIO else f"over the {GOAL_RATIO:g}x goal"
    print(
        f"{label:<26} {len(frame):>6} B  typed {typed:>10,.0f}/s  raw msgpack {raw:>10,.0f}/s"
        f"  ratio {ratio:4.2f}x  ({verdict})"
    )
    return ratio


def main() -> None:
    """Prints encode+decode per second next to plain msgpack, and their ratio."""
    print(
        f"protocol codec: Python {platform.python_version()} ({platform.python_implementation()})"
        f" on {platform.machine()}, msgpack {'.'.join(map(str, msgpack.version))}"
        f" (C extension: {msgpack.Packer.__module__ != 'msgpack.fallback'})"
    )
    print(f"event loop: {_loop_name()}; gc thresholds {gc.get_threshold()}")
    bench_message("snapshot, 6 seats settled", SNAPSHOT)
    bench_message("bet", BET)


if __name__ == "__main__":
    main()
