"""The benchmarks' wait for a child's "listening" line (bench/procs/output.py), on real child
processes."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from bench.procs.output import wait_line


@contextlib.contextmanager
def _child(code: str) -> Iterator[subprocess.Popen[str]]:
    """A Python child running ``code``, killed (if still running) and its pipe closed
    after. Not unbuffered: its lines leave in one block, as a server's do when
    ``PYTHONUNBUFFERED`` is not set."""
    with subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    ) as proc:
        try:
            yield proc
        finally:
            proc.kill()


def test_a_line_that_came_in_one_block_with_others_is_found_at_once() -> None:
    code = (
        "import sys, time\n"
        "print('settings: a')\nprint('settings: b')\nprint('server listening on 4321')\n"
        "sys.stdout.flush()\ntime.sleep(30)\n"
    )
    with _child(code) as proc:
        started = time.monotonic()
        assert wait_line(proc, r"listening on \d+", 10) == "server listening on 4321"
        assert time.monotonic() - started < 5


def test_a_line_split_across_writes_is_read_whole() -> None:
    code = (
        "import sys, time\n"
        "sys.stdout.write('server list'); sys.stdout.flush(); time.sleep(0.3)\n"
        "sys.stdout.write('ening on 99\\n'); sys.stdout.flush(); time.sleep(30)\n"
    )
    with _child(code) as proc:
        assert wait_line(proc, r"listening on \d+", 10) == "server listening on 99"


def test_a_child_that_exits_without_the_line_is_an_error() -> None:
    with (
        _child("print('starting'); raise SystemExit(3)") as proc,
        pytest.raises(RuntimeError, match="exit code 3"),
    ):
        wait_line(proc, "listening", 10)
