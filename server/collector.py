"""CPython's cyclic garbage collector on a timer, not on allocation counts.

CPython 3.11 starts a young collection once 50,000 (the server's threshold) more
objects were allocated than freed. Under a steady load a server allocates about as
many as it frees, so that count wanders: at 10,000 players the young collections came
from 1 to 70 s apart, and the young generation held whatever was made since and still
lived (each connection's wait for its next message, before server/gateway/wsconn.py;
tables' new states): 50,000 to 700,000 objects, a pause of 20 to 260 ms, and 100 to
320 ms for the middle generation every fourth time (measured with a hook on
``gc.callbacks``). A pause that long is the p99 of every request that comes during it.

:func:`collect_on_a_timer` collects the young and middle generations every
:data:`YOUNG_EVERY_S` instead: what was made since the last tick and still lives, a
few thousand objects, 3 ms on average and 13 at most at 10,000 players; what survives
goes to the old generation, collected whole every :data:`FULL_EVERY_S` (a generation
to which the timer's collections add a count each: see :data:`THRESHOLDS`). So a
reference cycle that dies older than a tick waits up to an hour, and the hourly
collection is a pause of its own (0.3 to 0.7 s at 10,000 players). This is CPython
3.11's collector; 3.14's incremental one would call for measuring again.
"""

from __future__ import annotations

import asyncio
import gc
from typing import NoReturn

YOUNG_EVERY_S = 0.1
"""How often the young and middle generations are collected."""

THRESHOLDS = (50_000, 3, 1_000_000)
"""``gc.set_threshold`` beside the timer: a burst of allocations between two ticks is
still collected by CPython (a young collection every 50,000 objects kept, the middle
one every 4 of them), but never the old generation, which the timer collects: each tick
counts as a middle collection, so at CPython's 10 or the server's former 500, the first
burst after a minute set off a full collection (0.7 s measured at 10,000 players)."""

FULL_EVERY_S = 3600.0
"""How often every generation is. Reference cycles are rare here: the timer's 306
collections in 30 s at 10,000 players found none."""


async def collect_on_a_timer(
    young_every_s: float = YOUNG_EVERY_S, full_every_s: float = FULL_EVERY_S
) -> NoReturn:
    """Collect the young and middle generations every ``young_every_s``, and all of
    them every ``full_every_s``, until cancelled."""
    loop = asyncio.get_running_loop()
    full_at = loop.time() + full_every_s
    while True:
        await asyncio.sleep(young_every_s)
        if loop.time() >= full_at:
            gc.collect()
            full_at = loop.time() + full_every_s
        else:
            gc.collect(1)
