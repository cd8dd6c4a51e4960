"""A child process of the server: how it dies with us, and how we wait for its exit."""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Callable


def parent_death_signal() -> Callable[[], None] | None:
    """A ``preexec_fn`` asking Linux to SIGTERM the child when its parent thread dies."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()
    pr_set_pdeathsig = 1

    def preexec() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGTERM))
        # The parent may have died between fork and prctl: then nobody would signal us.
        if os.getppid() != parent:
            os._exit(1)

    return preexec


async def exited(proc: subprocess.Popen[bytes]) -> None:
    """Wait for ``proc`` to exit: a pidfd watched by the loop where Linux has them,
    else a poll every tenth of a second."""
    loop = asyncio.get_running_loop()
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        while proc.poll() is None:  # noqa: ASYNC110 -- no event to wait for: poll
            await asyncio.sleep(0.1)
        return
    done: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not done.done():
            done.set_result(None)

    try:
        loop.add_reader(fd, readable)
        try:
            if proc.poll() is None:
                await done
        finally:
            loop.remove_reader(fd)
    finally:
        os.close(fd)
