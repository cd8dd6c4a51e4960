"""The Redis work of a round alone: step 1 of ``bench/scenarios/server.py``, in a minute.

``python -m bench.scenarios.rounds [--rounds N] [--detail]``: the game server on its embedded
Redis, one table of short phases, six bots playing N rounds (8 by default); prints the
commands sent and executed and the bytes appended to the append-only file per round
(``--detail``: by command and key). ``PAIGOW_BENCH_SERVER_ROOT=DIR`` measures the server
of another checkout (say, the one before a change). The figures are counts: a loaded
machine makes the rounds slower, not the counts different (a round's timers may
differ, so a figure can move by a command or two).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from bench.procs.servers import ROOT
from bench.scenarios.plan import ROUNDS
from bench.scenarios.report import report_rounds
from bench.scenarios.server import measure_rounds


def main(argv: list[str] | None = None) -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--detail", action="store_true", help="the AOF bytes by command")
    args = parser.parse_args(argv)
    root = Path(os.environ.get("PAIGOW_BENCH_SERVER_ROOT", str(ROOT))).resolve()
    print(f"rounds: server from {root}", flush=True)
    with tempfile.TemporaryDirectory(prefix="paigow-rounds-") as tmp:
        rounds = measure_rounds(root, Path(tmp), args.rounds)
    report_rounds(rounds, detail=args.detail)


if __name__ == "__main__":
    main()
