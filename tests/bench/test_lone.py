"""``python -m bench.lone``: lone actions at a fixed rate against the real servers, a few
players and short windows."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(
    r"^(?P<server>game|bare) (?P<what>bet|ping): (?P<rate>[\d,]+) a second; CPU per action: "
    r"server (?P<server_us>\d+) us, its Redis (?P<redis_us>\d+) us; the server's core busy "
    r"(?P<busy>[\d.]+|nan) \(softirqs (?P<softirq>[\d.]+|nan)\); p50 (?P<p50>[\d.]+) ms, "
    r"p99 (?P<p99>[\d.]+) ms; (?P<errors>\d+) errors$"
)


def _lone(*args: str) -> list[dict[str, str]]:
    """Run the benchmark; the fields of each window's line."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.lone", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    windows = []
    for line in done.stdout.splitlines():
        found = LINE.match(line)
        assert found is not None, line
        windows.append(found.groupdict())
    return windows


@pytest.mark.parametrize(("server", "what"), [("bare", "bet"), ("game", "bet"), ("game", "ping")])
def test_each_window_reports_its_actions_their_cost_and_latency(server: str, what: str) -> None:
    windows = _lone(
        server, "--players", "24", "--rate", "40", "--seconds", "1.5", "--windows", "2",
        "--what", what,
    )  # fmt: skip
    assert len(windows) == 2
    for w in windows:
        assert (w["server"], w["what"]) == (server, what)
        assert w["errors"] == "0"
        # 60 actions started over 1.5 s, each answered: the rate holds (the window
        # ends with the last answer, so a little under 40 a second).
        assert 30 <= int(w["rate"].replace(",", "")) <= 41
        assert int(w["server_us"]) > 0  # the server's CPU moved (10 ms ticks at least)
        assert 0 < float(w["p50"]) <= float(w["p99"])
        busy = float(w["busy"])
        assert math.isnan(busy) or 0 < busy <= 1
        if server == "bare":
            assert w["redis_us"] == "0"  # no Redis
