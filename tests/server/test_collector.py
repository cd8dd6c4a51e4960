"""The collector's timer: young garbage goes at the next tick, survivors of a tick go
to the old generation, and the old generation is collected whole on its own period.

CPython's own collections are kept out of the way (thresholds out of reach), so every
collection seen here is the timer's.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from server.collector import FULL_EVERY_S, THRESHOLDS, YOUNG_EVERY_S, collect_on_a_timer
from tests.helpers import until

TICK_S = 0.05


class Node:
    """One half of a reference cycle, which only the collector frees."""

    def __init__(self, freed: list[str], name: str) -> None:
        self.other: Node | None = None
        self.freed = freed
        self.name = name

    def __del__(self) -> None:
        self.freed.append(self.name)


def cycle(freed: list[str], name: str) -> Node:
    a, b = Node(freed, name), Node(freed, name + "'")
    a.other, b.other = b, a
    return a


def in_generation(obj: object) -> int:
    return next(g for g in range(3) if any(o is obj for o in gc.get_objects(g)))


@pytest.fixture
def no_automatic_collections() -> Iterator[None]:
    thresholds = gc.get_threshold()
    gc.collect()
    gc.set_threshold(10**9, 10**9, 10**9)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


FULL_S = 2.0


@pytest_asyncio.fixture
async def timer(no_automatic_collections: None) -> AsyncIterator[float]:
    """The timer running (ticks of TICK_S, a full collection every FULL_S); the loop's
    time it started."""
    started = asyncio.get_running_loop().time()
    task = asyncio.create_task(collect_on_a_timer(TICK_S, full_every_s=FULL_S))
    try:
        yield started
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@pytest.mark.asyncio
async def test_young_garbage_is_collected_at_the_next_tick(timer: float) -> None:
    freed: list[str] = []
    cycle(freed, "young")
    assert freed == []
    await asyncio.sleep(3 * TICK_S)
    assert sorted(freed) == ["young", "young'"]


@pytest.mark.asyncio
async def test_what_outlives_a_tick_goes_to_the_old_generation_collected_whole_on_its_own_period(
    timer: float,
) -> None:
    loop = asyncio.get_running_loop()
    freed: list[str] = []
    kept = cycle(freed, "kept")
    assert in_generation(kept) == 0
    await asyncio.sleep(3 * TICK_S)
    assert in_generation(kept) == 2  # not left in the young ones for the next ticks
    del kept  # garbage now, in the old generation: the ticks leave it there
    await asyncio.sleep(3 * TICK_S)
    assert loop.time() - timer < FULL_S - 0.5, "too slow a machine to tell"
    assert freed == []
    await until(lambda: len(freed) == 2, 2 * FULL_S, "the full collection")
    assert loop.time() - timer >= FULL_S  # on its period, not before
    assert sorted(freed) == ["kept", "kept'"]


def test_the_timer_s_ticks_never_bring_cpython_to_a_full_collection_of_its_own() -> None:
    """Each tick counts as a middle collection: within the hour between two full ones
    (and then some), the old generation's count must stay below its threshold."""
    assert THRESHOLDS[2] > 10 * FULL_EVERY_S / YOUNG_EVERY_S


@pytest.mark.asyncio
async def test_without_the_timer_nothing_collects_here(no_automatic_collections: None) -> None:
    """The control: the collections above are the timer's."""
    freed: list[str] = []
    cycle(freed, "left")
    await asyncio.sleep(3 * TICK_S)
    assert freed == []
    gc.collect()
    assert sorted(freed) == ["left", "left'"]
