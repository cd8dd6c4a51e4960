"""Stopping background tasks, even one that absorbed its cancellation.

On Python 3.11, ``asyncio.wait_for`` returns the inner result when a cancellation
arrives in the same loop pass as that result: the cancelled task goes on as if nothing
happened (fixed in 3.12). redis-py sends every command through ``wait_for`` when a
socket timeout is set, so a loop cancelled just as one of its writes completed
outlived a ``cancel()`` followed by one wait, and the server's stop hung. A test restarting
Redis (tests/server/test_redis_restart.py) hung that way about once in 40 runs.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger(__name__)

FIRST_RECANCEL_S = 0.02
RECANCEL_S = 0.5
"""How long a cancelled task may run on before it is cancelled again: from
:data:`FIRST_RECANCEL_S`, doubled each time up to this."""


async def cancel_and_wait(*tasks: asyncio.Future[Any]) -> None:
    """Cancel ``tasks`` and return once every one has ended, cancelling again every
    while (:data:`RECANCEL_S` at most) any still running. Their results and errors are dropped.

    A cancellation of the caller is not absorbed here: it propagates, and the tasks
    still running are cancelled once more on the way out.
    """
    pending = {task for task in tasks if not task.done()}
    wait_s = FIRST_RECANCEL_S
    try:
        while pending:
            for task in pending:
                task.cancel()
            _, pending = await asyncio.wait(pending, timeout=wait_s)
            wait_s = min(2 * wait_s, RECANCEL_S)
            for task in pending:
                log.info("%s still runs after its cancellation: cancelling it again", task)
    except asyncio.CancelledError:
        for task in pending:
            task.cancel()
        raise
    for task in tasks:
        if not task.cancelled():
            task.exception()  # retrieved, so not reported as never retrieved
