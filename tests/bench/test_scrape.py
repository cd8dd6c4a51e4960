"""The driver's reading of the game server's own metrics over a window
(bench/load/driver.py), against a real server's ``/metrics``."""

from __future__ import annotations

import pytest

from bench.load.scrape import server_stalls, stall_delta
from protocol.messages import Bet, Join
from server.app import App
from tests.helpers import url
from tests.server.helpers import Client, close_all


@pytest.mark.asyncio
async def test_a_window_counts_the_bets_commits_and_round_trips_with_redis(app: App) -> None:
    metrics = f"http://127.0.0.1:{app.port}/metrics"
    bettor = await Client.hello(url(app))
    watcher = await Client.hello(url(app), label="watcher")  # keeps the table betting
    try:
        await bettor.ok(Join, table_id="slow", buy_in=500)
        await watcher.ok(Join, table_id="slow", buy_in=500)
        before = await server_stalls(metrics)
        for amount in (10, 20, 30, 40):
            await bettor.ok(Bet, table_id="slow", amount=amount)
        window = stall_delta(before, await server_stalls(metrics))
    finally:
        await close_all([bettor, watcher])
    assert window["bet"]["count"] == 4
    assert window["commit"]["count"] == 4
    # One bet at a time: a commit, and a round trip, each (a timer's commit may add one).
    assert 4 <= window["pipelines"]["count"] <= window["calls"]["count"] <= 5


@pytest.mark.asyncio
async def test_no_metrics_no_figures() -> None:
    assert await server_stalls("") == {}
    assert await server_stalls("http://127.0.0.1:9/metrics") == {}  # nothing listens
