"""The node's watch over the progressive jackpots of its tables file: every few seconds
it delivers the hits a process left between the meter and the player's account (any
node may: each is applied once, docs/DESIGN.md, "Progressive jackpots"), and reads the
meters into ``paigow_jackpot_meter_chips``. Started only when the file defines a
jackpot."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from server.store import StoreFailure
from server.tasks import cancel_and_wait

if TYPE_CHECKING:
    from server.metrics import Metrics
    from server.rules.progressive import JackpotOptions
    from server.store import JackpotStore

log = logging.getLogger(__name__)

EVERY_S = 2.0
"""How often the watch runs: a hit left undelivered waits this long at most for it."""


class JackpotWatch:
    """Delivers the jackpots' pending hits and reads their meters, every ``every_s``."""

    def __init__(
        self,
        store: JackpotStore,
        jackpots: list[JackpotOptions],
        metrics: Metrics,
        every_s: float = EVERY_S,
    ) -> None:
        self.store = store
        self.jackpots = jackpots
        self.metrics = metrics
        self.every_s = every_s
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Run in the background until :meth:`stop`."""
        self._task = asyncio.create_task(self._run(), name="jackpots")

    async def stop(self) -> None:
        """Stop the background task; safe to call twice."""
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None

    async def run_once(self) -> None:
        """One pass: the pending hits delivered, the meters read (a meter never started
        shows its seed). Raises :class:`~server.store.StoreFailure` where Redis failed."""
        for options in self.jackpots:
            delivered = await self.store.deliver_pending(options.name)
            if delivered:
                log.info("jackpot %s: %d hits delivered", options.name, delivered)
        meters = await self.store.meters([o.name for o in self.jackpots])
        for options in self.jackpots:
            meter = meters[options.name]
            self.metrics.jackpot_seen(options.name, options.seed if meter is None else meter)

    async def _run(self) -> None:
        while True:
            try:
                await self.run_once()
            except StoreFailure as exc:  # Redis away: the next pass tries again
                log.warning("jackpots: %s", exc)
            await asyncio.sleep(self.every_s)
