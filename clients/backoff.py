"""Waiting between tries of a connection, as protocol/PROTOCOL.md, section 11 asks: a
first delay doubling up to a ceiling, each jittered, and cut short when a person asks to
retry now."""

from __future__ import annotations

import asyncio
import contextlib
import random


class Backoff:
    """The delays before each new try: ``first_s`` (0 for ``now``: the first try at
    once), then doubling up to ``max_s``; each one jittered by x0.5..1.5 so that many
    clients dropped together do not come back together."""

    def __init__(self, first_s: float, max_s: float, *, now: bool = False) -> None:
        self.first_s = first_s
        self.max_s = max_s
        self._delay = 0.0 if now else first_s
        self._wake = asyncio.Event()

    def next(self) -> float:
        """The delay before the coming try (jittered); the one after it doubles."""
        delay = self._delay * random.uniform(0.5, 1.5)
        self._delay = min(self.max_s, max(self._delay * 2, self.first_s))
        return delay

    async def wait(self, delay_s: float) -> None:
        """Wait ``delay_s`` seconds, or less if :meth:`retry_now` is called meanwhile."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(delay_s):
                await self._wake.wait()
        self._wake.clear()

    def retry_now(self) -> None:
        """End the wait in progress (or the next one) at once."""
        self._wake.set()
