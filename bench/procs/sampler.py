"""py-spy sampling the server under test over one window, without pausing it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys


class Sampler:
    """``py-spy record`` of the server under test over one window (``--pyspy PREFIX``):
    its stacks, sampled without pausing it, to ``PREFIX.<name>.txt`` (collapsed stacks,
    one line per distinct stack with its sample count; ``bench/procs/flame.py`` reads them)."""

    def __init__(self, prefix: str, pid: int) -> None:
        self.prefix = prefix
        self.pid = pid
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self, name: str, seconds: float) -> None:
        if not self.prefix:
            return
        self.proc = await asyncio.create_subprocess_exec(
            _PYSPY,
            "record", "--pid", str(self.pid), "--duration", f"{seconds:.0f}",
            "--rate", "250", "--format", "raw", "--nonblocking",
            "--output", f"{self.prefix}.{name}.txt",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip

    async def stop(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(30):
                    await self.proc.wait()
            self.proc = None


_BESIDE = os.path.join(os.path.dirname(sys.executable), "py-spy")
_PYSPY = _BESIDE if os.path.exists(_BESIDE) else "py-spy"
"""The venv's py-spy (the dev extra installs it), else the one on PATH."""
