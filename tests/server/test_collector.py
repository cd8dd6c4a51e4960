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

from server.collector import collect_on_a_timer

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


@pytest_asyncio.fixture
async def timer(no_automatic_collections: None) -> AsyncIterator[None]:
    task = asyncio.create_task(collect_on_a_timer(TICK_S, full_every_s=0.6))
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@pytest.mark.asyncio
async def test_young_garbage_is_collected_at_the_next_tick(timer: None) -> None:
    freed: list[str] = []
    cycle(freed, "young")
    assert freed == []
    await asyncio.sleep(3 * TICK_S)
    assert sorted(freed) == ["young", "young'"]


@pytest.mark.asyncio
async def test_what_outlives_a_tick_goes_to_the_old_generation_collected_whole_on_its_own_period(
    timer: None,
) -> None:
    freed: list[str] = []
    kept = cycle(freed, "kept")
    assert in_generation(kept) == 0
    await asyncio.sleep(3 * TICK_S)
    assert in_generation(kept) == 2  # not left in the young ones for the next ticks
    del kept  # garbage now, in the old generation: the ticks leave it there
    await asyncio.sleep(3 * TICK_S)
    assert freed == []
    # The full collection, 0.6 s after the timer started.
    await asyncio.sleep(0.6)
    assert sorted(freed) == ["kept", "kept'"]


@pytest.mark.asyncio
async def test_without_the_timer_nothing_collects_here(no_automatic_collections: None) -> None:
    """The control: the collections above are the timer's."""
    freed: list[str] = []
    cycle(freed, "left")
    await asyncio.sleep(3 * TICK_S)
    assert freed == []
    gc.collect()
    assert sorted(freed) == ["left", "left'"]
