"""Finishing the transfers a table left under way, by the table's holder.

Chips between the table and an account cross in steps (:mod:`server.store.chips.transfers`);
a crash, or a Redis error, between two of them leaves the table's slot saying what is
under way. The holder finishes it (:meth:`~server.store.chips.transfers.Transfers.recover`):
when it takes the table, as soon as one of its own steps failed, and about every
:data:`SWEEP_S` in any case. It does so under the table's lock, so that none of its
own commits is between its steps meanwhile (docs/DESIGN.md, "Keys ready for Redis
Cluster").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time

from server.host.lease_keeper import TableLease
from server.store import Leftovers, Recovered, StoreUnavailable, Transfers

log = logging.getLogger(__name__)

CHECK_S = 5.0
"""How long the holder waits before trying a failed recovery again."""

SWEEP_S = 60.0
"""How often, on average, the holder looks at the table's transfers even when nothing
failed: each interval is drawn between half and one and a half of it (the first one,
after its first look, within it)."""


class Recovery:
    """The recovery of one table's transfers by its host: through ``transfers``, while
    ``lease`` is ready, under the table's ``lock``; woken by ``leftovers``."""

    def __init__(
        self,
        table_id: str,
        transfers: Transfers,
        leftovers: Leftovers,
        lease: TableLease,
        lock: asyncio.Lock,
    ) -> None:
        self.table_id = table_id
        self.transfers = transfers
        self.leftovers = leftovers
        self.lease = lease
        self.lock = lock
        self.due = asyncio.Event()
        """Set when a step of this table's transfers failed: recovered at once."""

    async def now(self) -> Recovered | None:
        """Finish what the table has under way, now (None if the table is not hosted)."""
        async with self.lock:
            if not self.lease.ready:
                return None
            return await self.transfers.recover(self.table_id)

    async def run(self) -> None:
        """Recover at once, then whenever a step failed, and every :data:`SWEEP_S`,
        while the table is hosted here.

        A step that fails in the store wakes it (``Leftovers.watch``): with thousands of
        tables, each holder asking the store every few seconds was a timer a table."""
        self.leftovers.watch(self.table_id, self.due.set)
        try:
            await self._recover_while_ready()
        finally:
            self.leftovers.watch(self.table_id, self.due.set, on=False)

    async def _recover_while_ready(self) -> None:
        # A process takes its tables together at start-up: sweeping each every SWEEP_S
        # from its first look, 1,667 tables asked Redis together in a second and a
        # half every minute, and the commits queued behind them (a p99 of hundreds of
        # ms at 10,000 players). Each interval is drawn at random instead (the first
        # within SWEEP_S, the next ones around it), so the sweeps spread out, and stay
        # spread after anything that brought them together (a Redis restart).
        swept = float("-inf")  # the first look is at once (a table taken over)
        every = random.uniform(0.0, SWEEP_S)  # until the second sweep
        while self.lease.ready:
            due = self.due.is_set() or self.leftovers.take(self.table_id)
            if due or time.monotonic() - swept >= every:
                self.due.clear()
                try:
                    # A sweep first asks whether anything is under way (one command,
                    # no lock): 1,667 tables each reading and parsing their transfers
                    # under the lock every minute were a twentieth of a node's CPU.
                    done = None
                    if due or await self.transfers.has_pending(self.table_id):
                        done = await self.now()
                    failed = done is not None and done.failed > 0
                except StoreUnavailable as exc:
                    log.warning("table %s: transfers not recovered (%s)", self.table_id, exc)
                    failed = True
                if swept != float("-inf"):
                    every = random.uniform(SWEEP_S / 2, 3 * SWEEP_S / 2)
                swept = time.monotonic()
                if failed:
                    self.due.set()
                    await asyncio.sleep(CHECK_S)
                    continue
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, swept + every - time.monotonic())):
                    await self.due.wait()
