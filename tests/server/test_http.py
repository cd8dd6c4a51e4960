"""The HTTP endpoints on the WebSocket's port: ``/healthz``, ``/readyz``, ``/metrics``."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from protocol.messages import Join
from server.app import App
from server.config import Settings
from tests.helpers import until, url
from tests.server.helpers import Client, http_get


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
async def test_not_ready_while_a_table_is_owned_elsewhere(
    app: App, server_settings: Settings
) -> None:
    """``/readyz`` says 503 and names the tables another process still holds."""
    second = App(server_settings)  # same Redis: the tables are the first one's
    starting = asyncio.create_task(second.start())
    client: Client | None = None
    try:
        await until(lambda: second.server is not None, what="the second server to listen")
        status, body = await asyncio.to_thread(http_get, second.port, "/readyz")
        assert status == 503
        assert "fast" in body
        assert "slow" in body
        status, _ = await asyncio.to_thread(http_get, second.port, "/healthz")
        assert status == 200
        # A request for a table hosted elsewhere: unavailable (retryable), nothing else.
        client = await Client.hello(url(second))
        error = await client.error(Join, "unavailable", table_id="fast", buy_in=500)
        assert error.retryable
        # The first process stops and gives its leases up: the second takes over at once.
        await app.stop()
        await asyncio.wait_for(starting, 5)
        status, body = await asyncio.to_thread(http_get, second.port, "/readyz")
        assert (status, body) == (200, "ready\n")
        await client.ok(Join, table_id="fast", buy_in=500)
    finally:
        if client is not None:
            await client.close()
        starting.cancel()
        with contextlib.suppress(BaseException):
            await starting
        await second.stop()
