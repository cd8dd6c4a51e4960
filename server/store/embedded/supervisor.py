"""The embedded Redis, supervised: started again from its append-only file if it dies.

The server runs on while its Redis is down: calls fail, nothing is half-written (each
commit is one script), tables keep their leases while those can still be valid and
retry on their own (docs/DESIGN.md, "Redis failures"). The supervisor only has to bring
the child back, on the same socket, from the same append-only file, which holds every
acknowledged write (Redis writes it before it answers; a process that dies loses
nothing). A child that dies again and again is restarted after a growing pause, so a
Redis that cannot start (a full disk, a damaged file) is retried, logged each time,
without spinning.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from server.store.embedded.process import EmbeddedRedis
from server.tasks import cancel_and_wait

log = logging.getLogger(__name__)

FIRST_PAUSE_S = 0.05
"""The pause before the first restart after a death."""

LONGEST_PAUSE_S = 5.0
"""The longest pause between two restarts."""

STEADY_S = 30.0
"""A child that ran this long counts as healthy: the next death restarts it at once."""


class RedisSupervisor:
    """Restarts ``embedded`` whenever it exits, until :meth:`stop`.

    ``on_restart`` is called after each successful restart (the metrics count them).
    """

    def __init__(self, embedded: EmbeddedRedis, on_restart: Callable[[], None] | None = None):
        self.embedded = embedded
        self.on_restart = on_restart
        self.restarts = 0
        """Successful restarts so far."""
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Watch the child (already started) from now on."""
        if self._task is None:
            self._task = asyncio.create_task(self._watch(), name="redis-supervisor")

    async def stop(self) -> None:
        """Stop watching (before the child is stopped on purpose)."""
        task, self._task = self._task, None
        if task is not None:
            await cancel_and_wait(task)

    async def _watch(self) -> None:
        pause = FIRST_PAUSE_S
        while True:
            started = time.monotonic()
            code = await self.embedded.wait_exit()
            if time.monotonic() - started > STEADY_S:
                pause = FIRST_PAUSE_S
            log.error(
                "the embedded redis-server exited (status %d); starting it again from its "
                "append-only file",
                code,
            )
            while True:
                await asyncio.sleep(pause)
                pause = min(pause * 2, LONGEST_PAUSE_S)
                try:
                    await self.embedded.arestart()
                except Exception as exc:
                    log.error("the embedded redis-server did not start again: %s", exc)
                    continue
                break
            self.restarts += 1
            log.warning(
                "the embedded redis-server runs again (pid %s, restart %d)",
                self.embedded.pid,
                self.restarts,
            )
            if self.on_restart is not None:
                self.on_restart()
