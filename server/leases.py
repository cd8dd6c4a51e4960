"""Keeping this process's table leases alive: one timer and one script call for all.

Every hosted table holds a lease with a fencing token (server/store/tables.py); it
must be renewed well before it expires, every ``lease_ms / 3``. With a timer and a
task per table, a process hosting 1,667 tables woke 1,667 tasks and made as many
calls every cycle, in bursts that stalled its event loop. The :class:`LeaseKeeper`
renews them all with one timer and one script call per cycle (in chunks, so Redis is
never blocked long), and tells a table only when its lease is lost.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from redis.exceptions import RedisError

from server.store.tables import TableStore

log = logging.getLogger(__name__)

RENEW_CHUNK = 500
"""Leases renewed by one script call: Redis runs a script alone, so keep each short."""


@dataclass
class _Held:
    token: int
    renewed: float  # time.monotonic() when the last successful renewal was sent
    on_lost: Callable[[], None]


class LeaseKeeper:
    """Renews the leases handed to :meth:`hold` until :meth:`drop` or their loss.

    A lease counts as lost when Redis says it is no longer ours, or when it could not
    be renewed for ``lease_ms`` (Redis unreachable all that time: it may have expired
    and been taken). ``on_lost`` is then called once, from the keeper's task.
    """

    def __init__(self, store: TableStore, owner: str, lease_ms: int) -> None:
        self.store = store
        self.owner = owner
        self.lease_ms = lease_ms
        self._held: dict[str, _Held] = {}
        self._task: asyncio.Task[None] | None = None

    def hold(self, table_id: str, token: int, on_lost: Callable[[], None], acquired: float) -> None:
        """Keep the lease of ``table_id`` alive: acquired with ``token`` at ``acquired``
        (``time.monotonic()`` before the acquiring call: its time to live runs from
        then, whatever happened since)."""
        self._held[table_id] = _Held(token, acquired, on_lost)

    def drop(self, table_id: str) -> None:
        """Stop renewing ``table_id``'s lease (it is being given up)."""
        self._held.pop(table_id, None)

    def start(self) -> None:
        """Start the renewal timer (idempotent)."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="lease-keeper")

    async def stop(self) -> None:
        """Stop the renewal timer; leases still held are left to expire."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        interval = self.lease_ms / 3000
        while True:
            await asyncio.sleep(interval)
            try:
                await self.renew_now()
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug here must not end the renewals of every table
                log.exception("lease renewal failed")

    async def renew_now(self) -> None:
        """One renewal cycle for every lease held; losses are reported to their tables."""
        held = list(self._held.items())
        for start in range(0, len(held), RENEW_CHUNK):
            await self._renew(held[start : start + RENEW_CHUNK])

    async def _renew(self, chunk: list[tuple[str, _Held]]) -> None:
        sent = time.monotonic()
        try:
            ours = await self.store.renew_leases(
                self.owner, [(table_id, h.token) for table_id, h in chunk], self.lease_ms
            )
        except (RedisError, OSError) as exc:
            # Redis unreachable for a moment (a restart, a failover): a lease may still
            # be ours when it is back, so keep trying while it can last. Commits are
            # fenced, so acting meanwhile is safe.
            log.warning("%d leases not renewed (%s); retrying", len(chunk), exc)
            ours = [sent - h.renewed < self.lease_ms / 1000 for _, h in chunk]
            sent = -1.0  # nothing was renewed
        for (table_id, h), still in zip(chunk, ours, strict=True):
            if self._held.get(table_id) is not h:
                continue  # dropped, or taken again, meanwhile
            if not still:
                del self._held[table_id]
                log.warning("table %s: lease lost", table_id)
                h.on_lost()
            elif sent >= 0:
                h.renewed = sent
