"""The HTTP endpoints on the WebSocket's port: ``/healthz``, ``/readyz``, ``/metrics``."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time

import pytest
import redis.asyncio
from prometheus_client.parser import text_string_to_metric_families

from protocol.messages import Bet, Join
from server.app import App
from server.config import Settings
from server.store.tables.store import TableStore
from tests.helpers import until, url
from tests.server.helpers import Client, close_all
from tests.server.processes import http_get


@pytest.mark.asyncio
async def test_health_ready_and_metrics(app: App) -> None:
    client = await Client.hello(url(app))
    try:
        await client.ok(Join, table_id="fast", buy_in=500)
        status, body = await asyncio.to_thread(http_get, app.port, "/healthz")
        assert (status, body) == (200, "ok\n")
        status, body = await asyncio.to_thread(http_get, app.port, "/readyz")
        assert (status, body) == (200, "ready\n")
        status, body = await asyncio.to_thread(http_get, app.port, "/metrics")
        assert status == 200
        assert "paigow_connections 1.0" in body
        assert "paigow_tables_hosted 2.0" in body
        assert 'paigow_requests_total{type="Join"} 1.0' in body
        status, _ = await asyncio.to_thread(http_get, app.port, "/nothing-here")
        assert status in (400, 404, 426)
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_metrics_count_the_round_trips_the_commits_shared(app: App) -> None:
    """``/metrics`` counts the round trips with Redis that carried commits, and the
    script calls they carried: their ratio is how well the group commit batches."""

    def sent(body: str) -> tuple[float, float]:
        found = {
            family.name: family.samples[0].value
            for family in text_string_to_metric_families(body)
            if family.name in ("paigow_redis_pipelines", "paigow_redis_script_calls")
        }
        return found["paigow_redis_pipelines"], found["paigow_redis_script_calls"]

    client = await Client.hello(url(app))
    # Seated without a bet, so that the table keeps betting (it deals once all have bet).
    watcher = await Client.hello(url(app), label="watcher")
    try:
        await client.ok(Join, table_id="slow", buy_in=500)
        await watcher.ok(Join, table_id="slow", buy_in=500)
        _, body = await asyncio.to_thread(http_get, app.port, "/metrics")
        pipelines, calls = sent(body)
        assert 1 <= pipelines <= calls  # the join's commit, at least
        for amount in (10, 20, 30):  # one at a time: a commit each, a round trip each
            await client.ok(Bet, table_id="slow", amount=amount)
        _, body = await asyncio.to_thread(http_get, app.port, "/metrics")
        more_pipelines, more_calls = sent(body)
        assert more_pipelines - pipelines >= 3
        assert more_calls - calls >= more_pipelines - pipelines
    finally:
        await close_all([client, watcher])


def _block_the_loop(seconds: float) -> None:
    """What a CPU-bound bug does to the server: nothing else runs meanwhile."""
    time.sleep(seconds)


def _buckets(body: str, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """The bucket counts of histogram ``name`` in a Prometheus text body, by labels."""
    return {
        tuple(sorted(s.labels.items())): s.value
        for family in text_string_to_metric_families(body)
        if family.name == name
        for s in family.samples
        if s.name == name + "_bucket"
    }


@pytest.mark.asyncio
async def test_metrics_show_loop_stalls_and_collector_pauses(app: App) -> None:
    """A blocked event loop and a full collection are both visible on ``/metrics``."""

    def probes() -> float:
        """How many times the loop-lag probe has run."""
        metric = next(iter(app.metrics.loop_lag.collect()))
        return next(s.value for s in metric.samples if s.name.endswith("_count"))

    _, body = await asyncio.to_thread(http_get, app.port, "/metrics")
    before = _buckets(body, "paigow_loop_lag_seconds")
    slow, count = (("le", "0.25"),), (("le", "+Inf"),)
    ran = probes()  # no await from here to the block: the next probe is the late one
    _block_the_loop(0.4)
    await until(lambda: probes() > ran, 5, "the probe to wake up")
    gc.collect()
    _, body = await asyncio.to_thread(http_get, app.port, "/metrics")
    after = _buckets(body, "paigow_loop_lag_seconds")
    # The probe woke up at least 0.4 - 0.1 s late: outside the 0.25 s bucket.
    assert after[count] - after[slow] >= before[count] - before[slow] + 1
    pauses = _buckets(body, "paigow_gc_pause_seconds")
    assert pauses[(("generation", "2"), ("le", "+Inf"))] >= 1


@pytest.mark.asyncio
async def test_not_ready_while_no_live_node_holds_a_table(
    server_settings: Settings, redis_client: redis.asyncio.Redis
) -> None:
    """``/readyz`` says 503 and names the tables no live node holds: here a node that
    died with its lease of ``fast`` not run out yet. A request for it gets
    ``unavailable`` (retryable); once the lease is gone, the table is taken at once.
    (A table held by another live node is served through it: tests/server/cluster.)"""
    lease = TableStore(redis_client).keys.table_lease("fast")
    await redis_client.set(lease, b"7:dead-node#1", px=60_000)
    app = App(server_settings)
    starting = asyncio.create_task(app.start())
    client: Client | None = None
    try:
        await until(lambda: app.server is not None, what="the server to listen")
        await until(lambda: app.hosts["slow"].ready, what="the free table to be taken")
        status, body = await asyncio.to_thread(http_get, app.port, "/readyz")
        assert status == 503
        assert body.removeprefix("not ready: ").split() == ["fast"]
        status, _ = await asyncio.to_thread(http_get, app.port, "/healthz")
        assert status == 200
        client = await Client.hello(url(app))
        error = await client.error(Join, "unavailable", table_id="fast", buy_in=500)
        assert error.retryable
        # The dead node's lease goes: the table is taken over at once.
        await redis_client.delete(lease)
        await asyncio.wait_for(starting, 5)
        status, body = await asyncio.to_thread(http_get, app.port, "/readyz")
        assert (status, body) == (200, "ready\n")
        await client.ok(Join, table_id="fast", buy_in=500)
    finally:
        if client is not None:
            await client.close()
        starting.cancel()
        with contextlib.suppress(BaseException):
            await starting
        await app.stop()


@pytest.mark.asyncio
async def test_a_second_node_is_ready_and_serves_the_tables_of_the_first(
    app: App, server_settings: Settings
) -> None:
    """Two nodes on one Redis: the second is ready once every table is held (by either
    one), serves them all, and holds them all once the first one stops."""
    second = App(server_settings)
    client: Client | None = None
    try:
        await second.start()
        status, body = await asyncio.to_thread(http_get, second.port, "/readyz")
        assert (status, body) == (200, "ready\n")
        client = await Client.hello(url(second))
        await client.ok(Join, table_id="fast", buy_in=500)
        await client.ok(Join, table_id="slow", buy_in=500)
        await app.stop()  # hands its tables over
        await until(lambda: all(h.ready for h in second.hosts.values()), what="every table")
        status, body = await asyncio.to_thread(http_get, second.port, "/readyz")
        assert (status, body) == (200, "ready\n")
        await client.ok(Bet, table_id="slow", amount=10)
    finally:
        if client is not None:
            await client.close()
        await second.stop()
