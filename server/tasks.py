"""Stopping background tasks, even one that absorbed its cancellation.

On Python 3.11, ``asyncio.wait_for`` returns the inner result when a cancellation
arrives in the same loop pass as that result: the cancelled task goes on as if nothing
happened (fixed in 3.12). redis-py writes every command through ``wait_for`` when a
socket timeout is set, so a loop cancelled just as one of its writes completed
outlived a ``cancel()`` followed by one wait, and the server's stop hung. A test
restarting Redis (tests/server/test_redis_restart.py) hung that way about once in 40
runs.
"""

from __future__ import annotations

import asyncio
import logging
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
