"""Stopping background tasks, and trying things again: server/tasks.py."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest

from server.tasks import Retries, cancel_and_wait
from tests.helpers import until

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


class Attempts:
    """An attempt that fails ``failures`` times, then succeeds; when each was made."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.times: list[float] = []

    async def __call__(self) -> bool:
        self.times.append(time.monotonic())
        return len(self.times) > self.failures


async def test_retries_back_off_until_the_attempt_is_done() -> None:
    retries = Retries(first_s=0.05, max_s=0.1)
    attempts = Attempts(failures=3)
    began = time.monotonic()
    retries.start("k", attempts)
    assert "k" in retries
    await until(lambda: "k" not in retries, 10, "the retries to end")
    assert len(attempts.times) == 4
    gaps = [b - a for a, b in zip([began, *attempts.times[:-1]], attempts.times, strict=True)]
    # Waits of 0.05, 0.1, then 0.1 (the cap) and 0.1: at least that long each.
    for gap, least in zip(gaps, [0.05, 0.1, 0.1, 0.1], strict=True):
        assert gap >= least - 0.005
    await retries.stop()


async def test_one_retry_per_key_and_none_after_an_attempt_raised() -> None:
    retries = Retries(first_s=0.01, max_s=0.01)
    first, second = Attempts(failures=2), Attempts(failures=0)
    retries.start("k", first)
    retries.start("k", second)  # tried already: its next attempt does the same
    retries.start("other", second)
    await until(lambda: "k" not in retries and "other" not in retries, 10, "both done")
    assert (len(first.times), len(second.times)) == (3, 1)

    async def broken() -> bool:
        raise ValueError("a bug")

    retries.start("k", broken)
    await until(lambda: "k" not in retries, 10, "the broken attempt to end its retries")
    retries.start("k", second)  # the key is free again
    await until(lambda: "k" not in retries, 10, "done")
    assert len(second.times) == 2
    await retries.stop()


async def test_stopped_retries_end_and_none_starts_after() -> None:
    retries = Retries(first_s=0.01, max_s=60)
    attempts = Attempts(failures=1000)
    retries.start("k", attempts)
    await until(lambda: len(attempts.times) >= 3, 10, "a few attempts (waiting a minute at most)")
    await asyncio.wait_for(retries.stop(), 5)
    assert "k" not in retries
    retries.start("k", attempts)
    assert "k" not in retries  # no task: no attempt will be made


class Blocking:
    """An attempt that waits for ``release`` (``entered`` set meanwhile), then returns
    ``results`` in turn."""

    def __init__(self, *results: bool) -> None:
        self.results = list(results)
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.calls = 0

    async def __call__(self) -> bool:
        self.calls += 1
        self.entered.set()
        await self.release.wait()
        return self.results.pop(0)


async def test_a_start_during_an_attempt_gets_one_more_attempt_after_it() -> None:
    """The attempt under way may have read the state before the newer request: once it
    is done, the newer one's attempt is still made, once, at once."""
    retries = Retries(first_s=2, max_s=60)  # the first attempt 2 s late; the extra one not
    blocking, newer = Blocking(True), Attempts(failures=0)
    retries.start("k", blocking)
    await asyncio.wait_for(blocking.entered.wait(), 10)
    retries.start("k", newer)  # mid-attempt: not dropped
    retries.start("k", newer)  # twice: still one more attempt, not two
    assert "k" in retries
    blocking.release.set()
    began = time.monotonic()
    await until(lambda: "k" not in retries, 10, "the retries to end")
    assert (blocking.calls, len(newer.times)) == (1, 1)
    assert newer.times[0] - began < 2  # at once, not after a backoff's wait
    await retries.stop()


async def test_a_start_during_a_failing_attempt_is_made_by_the_next_attempt() -> None:
    retries = Retries(first_s=0.01, max_s=0.01)
    blocking, newer = Blocking(False), Attempts(failures=0)
    retries.start("k", blocking)
    await asyncio.wait_for(blocking.entered.wait(), 5)
    retries.start("k", newer)
    blocking.release.set()
    await until(lambda: "k" not in retries, 10, "the retries to end")
    # The retry after the failure read the state after the newer request: no more.
    assert (blocking.calls, len(newer.times)) == (1, 1)
    await retries.stop()


async def test_a_start_while_the_retry_waits_adds_no_attempt() -> None:
    retries = Retries(first_s=0.2, max_s=0.2)
    first, second = Attempts(failures=0), Attempts(failures=0)
    retries.start("k", first)
    retries.start("k", second)  # the waiting retry's attempt reads after this
    await until(lambda: "k" not in retries, 10, "the retries to end")
    assert (len(first.times), len(second.times)) == (1, 0)
    await retries.stop()
