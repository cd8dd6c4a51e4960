"""Who runs the archiver: one process at a time, by a lease in Redis.

Every server process runs an :class:`ArchiveService`; the one holding the archiver's
lease (:class:`~server.store.archiving.lease.ArchiverLease`, renewed at each pass) runs
a pass every ``every_ms``, and the others only wait to take it over. ``paigow-server
archive`` takes the same lease for one pass. The lease saves work, not money: two
archivers at once would still move each record once (docs/DESIGN.md, "The archive").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from server.archive.mover import Archiver, PassReport
from server.store import StoreUnavailable, lease_ms
from server.tasks import cancel_and_wait

log = logging.getLogger(__name__)


class ArchiveService:
    """Runs ``archiver`` every ``every_ms`` while this process holds the lease;
    ``on_pass`` is told each pass's report (the metrics; where another process holds
    the lease, a report of the guests' count only)."""

    def __init__(
        self,
        archiver: Archiver,
        owner: str,
        every_ms: int,
        on_pass: Callable[[PassReport], None] | None = None,
    ) -> None:
        self.archiver = archiver
        self.every_s = every_ms / 1000
        self.lease = archiver.calls.lease(owner, lease_ms(every_ms))
        self.on_pass = on_pass
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()

    def start(self) -> None:
        """Start the loop in a task of its own."""
        self._task = asyncio.get_running_loop().create_task(self._loop(), name="archiver")

    async def stop(self) -> None:
        """Stop the loop (a pass in progress is cut short: each step is repeatable) and
        give the lease up."""
        # A flag besides the cancellation: redis-py may absorb a cancellation
        # (server/tasks.py), and the loop must not start a new pass after it.
        self._stopping.set()
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None
        with contextlib.suppress(StoreUnavailable):  # else it expires by itself
            await self.lease.release()

    async def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                if await self.lease.hold():
                    report = await self.archiver.run_once()
                    if report.moved():
                        log.info("archive: %s", report.summary())
                else:  # another process archives: only count the guests here
                    report = PassReport(guests=await self.archiver.guests.count())
                if self.on_pass is not None:
                    self.on_pass(report)
            except asyncio.CancelledError:
                raise
            except StoreUnavailable as exc:  # Redis away: no fault, no traceback
                log.warning("archive pass not done, Redis unavailable: %s", exc)
            except Exception:  # the next pass tries again; nothing is half-moved
                log.exception("archive pass failed")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.every_s):
                    await self._stopping.wait()
