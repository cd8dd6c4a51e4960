"""``SilenceWatch``, the gateway's one timer for every connection's silence, on a real
event loop with stand-in connections (it asks of a connection only ``_silence_due``
and ``_check_silence``)."""

from __future__ import annotations

import asyncio
from typing import cast

import pytest

from server.gateway.connection import Connection, SilenceWatch
from tests.helpers import until


class _Counted(SilenceWatch):
    """Counts its firings."""

    __slots__ = ("fires",)

    def __init__(self) -> None:
        super().__init__()
        self.fires = 0

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        self.fires += 1
        super()._fire(loop)


class _Stand:
    """A connection that asks to be checked again ``every`` seconds, ``times`` times."""

    def __init__(self, watch: SilenceWatch, every: float, times: int) -> None:
        self._silence_due: float | None = None
        self.watch, self.every, self.left = watch, every, times
        self.checked: list[float] = []

    def _check_silence(self, loop: asyncio.AbstractEventLoop) -> None:
        self.checked.append(loop.time())
        self.left -= 1
        if self.left > 0:
            self.watch.at(cast(Connection, self), loop.time() + self.every, loop)


@pytest.mark.asyncio
async def test_one_timer_runs_however_many_connections_it_checked() -> None:
    """Each connection is checked at its time, again and again, and the watch fires no
    more often than connections are checked: a firing that checked some connections
    leaves exactly one timer behind (it used to leave one more each time, every one
    of them firing for good, a busy loop that grew with the server's age)."""
    loop = asyncio.get_running_loop()
    watch = _Counted()
    stands = [_Stand(watch, every=0.02 + i * 0.0005, times=15) for i in range(40)]
    start = loop.time()
    for i, stand in enumerate(stands):
        watch.at(cast(Connection, stand), start + 0.01 + i * 0.0003, loop)
    # Done in about 0.6 s; waited for, since a loaded machine's timers come late.
    await until(lambda: all(s.left == 0 for s in stands), what="every check")
    checks = sum(len(s.checked) for s in stands)
    assert checks == 40 * 15
    assert len(watch) == 0
    # A timer may fire a little early and find nothing due yet: a few firings more.
    assert watch.fires <= checks + 40, (watch.fires, checks)
    fires = watch.fires
    await asyncio.sleep(0.05)
    assert watch.fires == fires  # no timer left behind, firing for good
    for stand in stands:
        gaps = [b - a for a, b in zip(stand.checked, stand.checked[1:], strict=False)]
        assert min(gaps) >= stand.every - 0.002  # never checked before its time


@pytest.mark.asyncio
async def test_a_connection_watched_after_the_heap_ran_dry_is_checked() -> None:
    """When the last due connection does not come back, the watch has no timer; the
    next connection watched arms one again."""
    loop = asyncio.get_running_loop()
    watch = _Counted()
    first = _Stand(watch, every=0.01, times=1)
    watch.at(cast(Connection, first), loop.time() + 0.01, loop)
    await asyncio.sleep(0.05)
    assert len(first.checked) == 1
    assert len(watch) == 0
    fires = watch.fires
    await asyncio.sleep(0.05)
    assert watch.fires == fires  # nothing left to fire for
    second = _Stand(watch, every=0.01, times=2)
    watch.at(cast(Connection, second), loop.time() + 0.01, loop)
    await asyncio.sleep(0.08)
    assert len(second.checked) == 2
    assert len(watch) == 0
