"""The plan of the server benchmark: player counts, windows, runs, the goals it prints
beside its figures, and the tables files of its load and rounds runs."""

from __future__ import annotations

import os
from pathlib import Path

SMALL = int(os.environ.get("PAIGOW_BENCH_SMALL", "1000"))
LARGE = int(os.environ.get("PAIGOW_BENCH_LARGE", "10000"))
SEATS = 6
ROUNDS = 8
LATENCY_S = 15.0
THROUGHPUT_S = 8.0
WARMUP_S = 2.0
GOAL_RATIO = 0.5
GOAL_P99_MS = 25.0
GOAL_KIB_RATIO = 1.15
LONG_BETTING_MS = 600_000
RUNS = int(os.environ.get("PAIGOW_BENCH_RUNS", "3"))
"""Load runs of each server: the goals are judged on the median (the figures are noisy)."""

LOAD_TABLE = """[[table]]
id = "{id}"
name = "Bench {id}"
min_bet = 10
max_bet = 1000
denominations = [5, 10, 25, 100]
min_buy_in = 100
max_buy_in = 10000
betting_ms = {betting_ms}
"""

LOAD_PREFIX = "b"
"""The load runs' table ids: ``b0000``, ``b0001``... (the driver's ``--prefix``)."""


def write_load_tables(path: Path, tables: int) -> Path:
    """``path``, written as the load runs' tables file: ``tables`` tables of
    :data:`LOAD_TABLE`, each betting for :data:`LONG_BETTING_MS`."""
    path.write_text(
        "\n".join(
            LOAD_TABLE.format(id=f"{LOAD_PREFIX}{i:04d}", betting_ms=LONG_BETTING_MS)
            for i in range(tables)
        )
    )
    return path


ROUND_TABLE = """[[table]]
id = "r0000"
name = "Bench rounds"
min_bet = 10
max_bet = 1000
denominations = [5, 10, 25, 100]
min_buy_in = 100
max_buy_in = 10000
betting_ms = 1000
dealing_ms = 100
setting_ms = 5000
revealing_ms = 200
settling_ms = 200
"""
