"""Reading a benchmark's child process's standard output for the line it prints once
ready (``paigow-server listening ...``, ``bare listening on ...``)."""

from __future__ import annotations

import contextlib
import os
import re
import select
import subprocess
import time


def wait_line(proc: subprocess.Popen[str], pattern: str, seconds: float) -> str:
    """The first line ``proc`` prints on its standard output (a pipe) that matches
    ``pattern``, stripped; RuntimeError if ``proc`` exits or ``seconds`` pass first.

    Read from the pipe itself, not from ``proc.stdout``'s buffer: a child whose output
    is not line-buffered (``PYTHONUNBUFFERED`` unset) writes its lines in one block, and
    ``select`` on the pipe never fired again for the lines ``readline`` had left in the
    buffer, so the line was missed (a bench run that waited 180 s for a server
    listening all along). What follows the matching line is dropped: nobody reads the
    pipe after it."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    regex = re.compile(pattern)
    deadline = time.monotonic() + seconds
    pending = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:  # end of file: the child closed its output, or exited
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(1)  # for the exit code the error gives
                break
            *lines, pending = (pending + chunk).split(b"\n")
            for raw in lines:
                line = raw.decode(errors="replace")
                if regex.search(line):
                    return line.strip()
        elif proc.poll() is not None:
            break
    raise RuntimeError(f"{proc.args!r} did not print {pattern!r} (exit code {proc.poll()})")
