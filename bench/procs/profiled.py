"""``python -m bench.procs.profiled OUT [paigow-server args]``: the server under cProfile,
on demand.

The profiler starts on the first SIGUSR1 and stops on the second, writing its
statistics to ``OUT`` (a ``pstats`` file), so only the window the load driver chooses
is profiled: the rest of the run pays nothing for it. Used by ``bench/scenarios/server.py``
when ``PAIGOW_BENCH_PROFILE`` names the output file.
"""

from __future__ import annotations

import cProfile
import signal
import sys
from types import FrameType


def main() -> None:
    """Install the SIGUSR1 toggle, then run ``paigow-server`` with the remaining args."""
    out, argv = sys.argv[1], sys.argv[2:]
    profiler = cProfile.Profile()
    running = False

    def toggle(signum: int, frame: FrameType | None) -> None:
        nonlocal running
        if not running:
            profiler.enable()
        else:
            profiler.disable()
            profiler.dump_stats(out)
        running = not running

    signal.signal(signal.SIGUSR1, toggle)
    from server.cli import main as serve

    raise SystemExit(serve(argv))


if __name__ == "__main__":
    main()
