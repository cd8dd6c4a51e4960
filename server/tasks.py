"""Stopping background tasks, even one that absorbed its cancellation; and
:class:`Retries`, background tasks that try something again until it is done.

On Python 3.11, ``asyncio.wait_for`` returns the inner result when a cancellation
arrives in the same loop pass as that result: the cancelled task goes on as if nothing
happened (fixed in 3.12). redis-py writes every command through ``wait_for`` when a
socket timeout is set, so a loop cancelled just as one of its writes completed
outlived a ``cancel()`` followed by one wait, and the server's stop hung. A test
restarting Redis (tests/e2e/test_redis_restart.py) hung that way about once in 40
runs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

log = logging.getLogger(__name__)

FIRST_RECANCEL_S = 0.1
RECANCEL_S = 1.0
"""How long a cancelled task may run on before it is cancelled again: from
:data:`FIRST_RECANCEL_S`, doubled each time up to this."""

WARN_AFTER_S = 2.0
"""How long tasks may take to end before each further cancellation is a warning."""


async def cancel_and_wait(*tasks: asyncio.Future[Any]) -> None:
    """Cancel ``tasks`` and return once every one has ended, cancelling again any
    still running after a while (:data:`FIRST_RECANCEL_S`, then twice as long each
    time up to :data:`RECANCEL_S`). An error a task ended with is logged, not raised.

    A cancellation of the caller is not absorbed: as with ``asyncio.gather``, the
    tasks are still waited for (and cancelled again as needed), then it is raised.
    """
    pending = {task for task in tasks if not task.done()}
    wait_s = FIRST_RECANCEL_S
    waited = 0.0
    cancelled = False
    while pending:
        for task in pending:
            task.cancel()
        try:
            _, pending = await asyncio.wait(pending, timeout=wait_s)
        except asyncio.CancelledError:
            cancelled = True  # raised once the tasks have ended
            continue
        waited += wait_s
        wait_s = min(2 * wait_s, RECANCEL_S)
        for task in pending:
            level = logging.WARNING if waited >= WARN_AFTER_S else logging.INFO
            log.log(
                level,
                "%s still runs %.1f s after its cancellation: cancelling it again",
                task,
                waited,
            )
    for task in set(tasks):
        if not task.cancelled() and task.exception() is not None:
            log.warning("%s had failed when stopped", task, exc_info=task.exception())
    if cancelled:
        raise asyncio.CancelledError


RETRY_FIRST_S = 0.5
RETRY_MAX_S = 10.0
"""How long :class:`Retries` waits before each attempt: from :data:`RETRY_FIRST_S`,
doubled after each failed one up to this."""


class Retries:
    """Background tasks that each try one thing again, with a backoff, until it is done:
    at most one task per key at a time, all of them stopped by :meth:`stop`."""

    def __init__(self, first_s: float = RETRY_FIRST_S, max_s: float = RETRY_MAX_S) -> None:
        self.first_s = first_s
        self.max_s = max_s
        self._tasks: dict[Hashable, asyncio.Task[None]] = {}
        self._trying: set[Hashable] = set()  # keys whose attempt is under way
        self._again: dict[Hashable, Callable[[], Awaitable[bool]]] = {}
        self._stopped = False

    def __contains__(self, key: Hashable) -> bool:
        task = self._tasks.get(key)
        return task is not None and not task.done()

    def start(self, key: Hashable, attempt: Callable[[], Awaitable[bool]]) -> None:
        """Call ``attempt()`` after :attr:`first_s`, then again after twice as long each
        time up to :attr:`max_s`, until it returns True (done, or nothing left to do).

        If ``key`` is being tried already, no second task: while it waits, its next
        attempt does what this one would (it reads the state after this call); while an
        attempt is under way, that attempt may have read the state before this call, so
        one more attempt is made after it, at once if it returned True (``attempt`` this
        time, the newest given). Nothing once stopped. An attempt that raises ends its
        retries, logged."""
        if self._stopped:
            return
        if key in self:
            if key in self._trying:
                self._again[key] = attempt
            return
        task = asyncio.create_task(self._run(key, attempt), name=f"retry {key}")
        self._tasks[key] = task
        task.add_done_callback(lambda done: self._forget(key, done))

    def _forget(self, key: Hashable, task: asyncio.Task[None]) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]

    async def _run(self, key: Hashable, attempt: Callable[[], Awaitable[bool]]) -> None:
        wait_s = self.first_s
        try:
            while True:
                await asyncio.sleep(wait_s)
                # A start() during the last attempt: this one reads after it.
                attempt = self._again.pop(key, attempt)
                self._trying.add(key)
                try:
                    done = await attempt()
                except Exception:
                    log.exception("%s: given up", key)
                    return
                finally:
                    self._trying.discard(key)
                if done and key not in self._again:
                    return
                if done:
                    # Asked again meanwhile: at once, since what was tried just worked
                    # (the waits space out failures, and the newer request is pending).
                    wait_s = 0.0
                elif wait_s:
                    wait_s = min(2 * wait_s, self.max_s)
                else:
                    wait_s = self.first_s  # the one made at once failed: the backoff afresh
        finally:
            self._again.pop(key, None)

    async def stop(self) -> None:
        """Stop every retry (no new one starts from now on)."""
        self._stopped = True
        await cancel_and_wait(*self._tasks.values())
