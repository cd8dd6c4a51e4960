"""``python -m bench.scenarios.lone``: lone actions at a fixed rate against the real servers, a few
players and short windows."""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(
    r"^(?P<server>game|bare) (?P<what>bet|ping): (?P<rate>[\d,]+) a second; CPU per action: "
    r"server (?P<server_us>\d+) us, its Redis (?P<redis_us>\d+) us; CPU (?P<cpus>[\d,?]+) "
    r"busy (?P<busy>[\d.]+|nan) \(softirqs (?P<softirq>[\d.]+|nan)\); p50 (?P<p50>[\d.]+) ms, "
    r"p99 (?P<p99>[\d.]+) ms; (?P<errors>\d+) errors$"
)


def _lone(*args: str) -> list[dict[str, str]]:
    """Run the benchmark; the fields of each window's line. In a session of its own,
    all killed if it runs too long: a SIGKILL of it alone would leave its servers."""
    with subprocess.Popen(
        [sys.executable, "-m", "bench.scenarios.lone", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    assert proc.returncode == 0, err
    windows = []
    for line in out.splitlines():
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
        assert 0 < float(w["p50"]) <= float(w["p99"])
        busy = float(w["busy"])
        assert math.isnan(busy) or 0 <= busy <= 1
        if server == "bare":
            assert w["redis_us"] == "0"  # no Redis
    # The server's CPU moved (counted in 10 ms ticks: over both windows, 120 actions).
    assert sum(int(w["server_us"]) for w in windows) > 0
