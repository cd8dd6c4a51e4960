"""An outage logged once (``server/gateway/outage.py``): one line as it begins, one as
it ends with its length and how many requests were answered ``unavailable``; it ends
only when Redis answers and no request failed for a probe interval.

A Redis of the test's own, stopped and started; the probe is its ``PING``.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from server.gateway.outage import Outage
from server.store.embedded.process import EmbeddedRedis
from server.store.errors import StoreUnavailable, translated
from tests.helpers import until


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "server.gateway.outage"]


@pytest.mark.asyncio
async def test_one_line_as_an_outage_begins_and_one_as_it_ends(
    own_redis: EmbeddedRedis, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="server.gateway.outage")
    client = own_redis.client()

    async def ping() -> None:
        with translated():
            await client.ping()

    outage = Outage(ping, probe_s=0.05)
    try:
        await own_redis.astop()
        for _ in range(5):
            with pytest.raises(StoreUnavailable) as failed:
                await ping()
            outage.failed(failed.value)
        assert outage.ongoing
        assert len(lines(caplog)) == 1
        assert lines(caplog)[0].startswith("Redis unavailable (")
        assert caplog.records[0].exc_info is None
        await asyncio.sleep(0.3)  # probes fail meanwhile: still one line
        assert len(lines(caplog)) == 1

        await own_redis.astart()
        await until(lambda: not outage.ongoing, 10, "the outage's end")
        assert len(lines(caplog)) == 2
        assert lines(caplog)[1].startswith("Redis back after ")
        assert lines(caplog)[1].endswith("; 5 request(s) were answered `unavailable`")
        assert outage.outages == 1
    finally:
        await outage.stop()
        await client.aclose()


@pytest.mark.asyncio
async def test_requests_still_failing_keep_an_outage_going_though_redis_answers(
    own_redis: EmbeddedRedis, caplog: pytest.LogCaptureFixture
) -> None:
    """A primary refusing writes answers a PING: while requests keep failing the
    outage is not over, and no second one begins."""
    caplog.set_level(logging.INFO, logger="server.gateway.outage")
    client = own_redis.client()

    async def ping() -> None:
        with translated():
            await client.ping()

    outage = Outage(ping, probe_s=0.1)
    try:
        refused = StoreUnavailable("ResponseError: NOREPLICAS Not enough good replicas")
        for _ in range(10):  # refused every 0.05 s for half a second: each probe waits
            outage.failed(refused)
            await asyncio.sleep(0.05)
        assert outage.ongoing
        assert len(lines(caplog)) == 1
        await until(lambda: not outage.ongoing, 10, "the outage's end")
        assert lines(caplog)[1].endswith("; 10 request(s) were answered `unavailable`")
        outage.failed(refused)  # a new one: logged as such
        assert [line.split(" (")[0] for line in lines(caplog)] == [
            "Redis unavailable",
            lines(caplog)[1].split(" (")[0],
            "Redis unavailable",
        ]
        assert outage.outages == 2
    finally:
        await outage.stop()
        await client.aclose()
