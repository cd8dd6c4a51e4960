"""Stopping background tasks: server/tasks.py."""

from __future__ import annotations

import asyncio
import sys

import pytest

from server.tasks import cancel_and_wait

pytestmark = pytest.mark.asyncio


async def test_a_task_that_absorbs_its_cancellations_is_cancelled_until_it_ends() -> None:
    absorbed = 0

    async def stubborn() -> None:
        nonlocal absorbed
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                if absorbed == 2:
                    raise
                absorbed += 1

    task = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    await asyncio.wait_for(cancel_and_wait(task), 5)
    assert task.cancelled()
    assert absorbed == 2


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
    absorbed = 0
    first = asyncio.Event()

    async def absorbs_twice() -> None:
        nonlocal absorbed
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                if absorbed == 2:
                    raise
                absorbed += 1
                first.set()

    task = asyncio.create_task(absorbs_twice())
    await asyncio.sleep(0)
    stopping = asyncio.create_task(cancel_and_wait(task))
    await first.wait()
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    assert task.cancelled()
    assert absorbed == 2
