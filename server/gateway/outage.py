"""A Redis outage as the requests meet it: answered in the protocol's words, logged
once.

While Redis is away (the embedded one restarting, an external one down, a Sentinel
failover in progress) every store call of a request raises
:class:`~server.store.StoreUnavailable`, and the request is answered ``unavailable``
(retryable: protocol/PROTOCOL.md, section 10). That is no fault of the server's: a
traceback a request would bury the log under hundreds of copies of one fact. An
:class:`Outage` logs one line when the first such request fails, and one when Redis
answers again, with how long it was away and how many requests were answered
``unavailable`` meanwhile (docs/DESIGN.md, "Redis failures").

The end is not the next request that succeeds: most requests (a ``ping``, a house
way suggestion) never reach Redis. It is a probe of the store that answers, at
least one probe interval after the last request that failed: an outage of refused
writes (a primary with too few replicas answers a ``PING`` but refuses scripts)
lasts as long as the requests keep failing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from server.store import StoreFailure
from server.tasks import cancel_and_wait

log = logging.getLogger(__name__)

PROBE_S = 0.5
"""How often an outage in progress asks the store whether it is back."""


class Outage:
    """One process's view of Redis outages (see the module docstring). ``probe``
    returns once the store answers, and raises :class:`StoreFailure` while it does not."""

    def __init__(self, probe: Callable[[], Awaitable[None]], probe_s: float = PROBE_S) -> None:
        self.probe = probe
        self.probe_s = probe_s
        self.began: float | None = None
        """When the outage in progress began (the loop's clock), None when there is none."""
        self.answered = 0
        """Requests answered ``unavailable`` in the outage in progress."""
        self.outages = 0
        """Outages begun so far."""
        self._last_failure = 0.0
        self._watch: asyncio.Task[None] | None = None

    @property
    def ongoing(self) -> bool:
        """Whether an outage is in progress."""
        return self.began is not None

    def failed(self, exc: StoreFailure) -> None:
        """A request failed for ``exc`` (the store did not answer) and is answered
        ``unavailable``: the first of an outage is logged, the others counted."""
        now = asyncio.get_running_loop().time()
        self._last_failure = now
        self.answered += 1
        if self.began is not None:
            return
        self.began = now
        self.outages += 1
        log.warning(
            "Redis unavailable (%s): requests are answered `unavailable` until it is back",
            exc,
        )
        self._watch = asyncio.get_running_loop().create_task(
            self._until_back(), name="outage-probe"
        )

    async def _until_back(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.probe_s)
            if loop.time() - self._last_failure < self.probe_s:
                continue  # requests still fail: still away
            with contextlib.suppress(StoreFailure):
                await self.probe()
                break
        began = self.began
        assert began is not None
        log.warning(
            "Redis back after %.1f s; %d request(s) were answered `unavailable`",
            loop.time() - began,
            self.answered,
        )
        self.began = None
        self.answered = 0
        self._watch = None

    async def stop(self) -> None:
        """Stop watching for the end of an outage in progress (the process stops)."""
        if self._watch is not None:
            await cancel_and_wait(self._watch)
            self._watch = None
