"""Stopping background tasks: server/tasks.py."""

from __future__ import annotations

import asyncio
import sys

import pytest

from server.tasks import cancel_and_wait

pytestmark = pytest.mark.asyncio


class Stubborn:
    """A task body that absorbs its first ``times`` cancellations, then ends by one."""

    def __init__(self, times: int) -> None:
        self.times = times
        self.absorbed = 0
        self.first = asyncio.Event()  # set at the first absorbed

    async def run(self) -> None:
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                if self.absorbed == self.times:
                    raise
                self.absorbed += 1
                self.first.set()


async def test_a_task_that_absorbs_its_cancellations_is_cancelled_until_it_ends() -> None:
    stubborn = Stubborn(2)
    task = asyncio.create_task(stubborn.run())
    await asyncio.sleep(0)
    await asyncio.wait_for(cancel_and_wait(task), 5)
    assert task.cancelled()
    assert stubborn.absorbed == 2


async def test_loops_of_redis_pys_kind_of_write_are_all_stopped() -> None:
    """A loop that writes through ``asyncio.wait_for`` (as redis-py does) and then sleeps
    absorbs a cancellation that comes as its inner wait ends, on Python 3.11; whatever
    the moment of the cancellation, the loop is stopped."""
    absorbed = 0

    async def writes() -> None:
        nonlocal absorbed
        me = asyncio.current_task()
        assert me is not None
        while True:
            await asyncio.wait_for(asyncio.sleep(0), 1)
            absorbed += me.cancelling() > 0
            await asyncio.sleep(0.001)

    for moment in range(40):
        task = asyncio.create_task(writes())
        for _ in range(moment % 7):
            await asyncio.sleep(0)
        await asyncio.wait_for(cancel_and_wait(task), 5)
        assert task.cancelled()
    if sys.version_info < (3, 12):  # the race this is about happened
        assert absorbed > 0


async def test_the_errors_of_the_tasks_are_logged_and_finished_tasks_are_left_alone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def fails_on_cancel() -> None:
        try:
            await asyncio.sleep(10)
        finally:
            raise RuntimeError("cleanup failed")

    async def finished() -> int:
        return 1

    failing = asyncio.create_task(fails_on_cancel())
    done = asyncio.create_task(finished())
    await asyncio.sleep(0)
    assert done.done()
    await cancel_and_wait(failing, done)
    assert isinstance(failing.exception(), RuntimeError)
    assert done.result() == 1
    assert [r.exc_info[1] for r in caplog.records if r.exc_info] == [failing.exception()]


async def test_a_cancelled_caller_still_waits_for_the_tasks_then_is_cancelled() -> None:
    """As with ``asyncio.gather``: a stop nested in another (a host's timer task
    stopping its helpers while the host stops it) must not leave the helpers running."""
    stubborn = Stubborn(2)
    task = asyncio.create_task(stubborn.run())
    await asyncio.sleep(0)
    stopping = asyncio.create_task(cancel_and_wait(task))
    await stubborn.first.wait()
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    assert task.cancelled()
    assert stubborn.absorbed == 2
