"""The latency windows' reading of how busy the server's core was (bench/load/driver.py), on
this machine's own /proc/stat and a real process spinning on one CPU."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time

import pytest

from bench.procs.procfs import CORE_FIELDS, core_shares, core_ticks, server_cpus

SPIN_S = 0.6

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/stat") or not hasattr(os, "sched_setaffinity"),
    reason="reads Linux's /proc/stat and pins a process",
)


def test_a_core_a_process_spins_on_reads_busy() -> None:
    cpu = max(os.sched_getaffinity(0))
    spin = f"import time\nend = time.monotonic() + {SPIN_S}\nwhile time.monotonic() < end: pass"
    with subprocess.Popen([sys.executable, "-c", spin]) as proc:
        try:
            os.sched_setaffinity(proc.pid, {cpu})
            assert server_cpus(proc.pid) == [cpu]
            time.sleep(0.1)  # its interpreter started: from here on it spins
            before = core_ticks([cpu])
            time.sleep(SPIN_S / 2)
            after = core_ticks([cpu])
        finally:
            proc.wait(10)
    assert set(before) == set(CORE_FIELDS)
    # (iowait may go back: the kernel says so of it.)
    assert all(after[f] >= before[f] for f in CORE_FIELDS if f != "iowait")
    shares = core_shares(before, after)
    # The spinning process alone keeps the core busy, whatever else runs here.
    assert shares["busy"] > 0.6, shares
    assert 0 <= shares["softirq"] <= shares["busy"]
    assert 0 <= shares["steal"] <= 1


def test_a_cpu_that_does_not_exist_reads_nothing() -> None:
    assert core_ticks([10**6]) == {}
    assert core_ticks([]) == {}
    assert all(math.isnan(v) for v in core_shares({}, core_ticks([0])).values())
    assert server_cpus(2**22 + 7) == []  # no such process
