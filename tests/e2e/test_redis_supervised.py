"""The embedded Redis killed mid-round: the server starts it again and the round ends.

The server runs on its own embedded Redis (no ``redis_url``), in a folder of this
test. SIGKILL of the ``redis-server`` child during the setting phase: the supervisor
starts it again from its append-only file, the table's pending deadline fires, the
round settles, ``/readyz`` answers 200 again and ``/metrics`` counts the restart.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from protocol.messages import Bet, GetBalance, HouseWay, Join, Results
from protocol.structs import Balances, Joined
from server.app import App
from server.config import Settings
from tests.helpers import until, url
from tests.server.helpers import Client, audit_report, close_all, quick_tables
from tests.server.processes import http_get


def restarts(body: str) -> float:
    """The restart counter in a ``/metrics`` text."""
    for line in body.splitlines():
        if line.startswith("paigow_redis_restarts_total "):
            return float(line.split()[1])
    raise AssertionError("no paigow_redis_restarts_total in /metrics")


@pytest.mark.asyncio
async def test_embedded_redis_killed_mid_round(tmp_path: Path) -> None:
    tables = tmp_path / "tables.toml"
    tables.write_text(quick_tables("s", setting_ms=2500))
    app = App(
        Settings(
            port=0,
            data_dir=tmp_path / "data",  # no redis_url: the embedded Redis
            tables_file=tables,
            token_secret="supervised-secret-0123456789",
            lease_ms=3000,
        )
    )
    await app.start()
    players: list[Client] = []
    try:
        assert app.stores is not None
        assert app.stores.embedded is not None
        first_pid = app.stores.embedded.pid
        assert first_pid is not None
        players = [await Client.hello(url(app), label=f"p{i}") for i in range(2)]
        seats = {}
        for p in players:
            joined = await p.ok(Join, table_id="s", buy_in=1000)
            assert isinstance(joined, Joined)
            seats[p.player] = joined.seat
        await asyncio.gather(*(p.ok(Bet, table_id="s", amount=100) for p in players))
        await players[0].phase("s", "setting")
        await players[0].ok(HouseWay, table_id="s", mode="set")

        os.kill(first_pid, signal.SIGKILL)  # mid-round: the setting deadline is ahead

        # Started again (a new process), on the same socket, with everything stored.
        embedded = app.stores.embedded
        await until(lambda: embedded.running and embedded.pid != first_pid, 20, "a restart")
        results = await players[0].event("s", Results, within=30)
        assert sorted(r.seat for r in results.results) == [0, 1]
        await until(lambda: all(h.ready for h in app.hosts.values()), 20, "the tables")
        status, body = await asyncio.to_thread(http_get, app.port, "/readyz")
        assert status == 200, body
        _, metrics = await asyncio.to_thread(http_get, app.port, "/metrics")
        assert restarts(metrics) == 1
        for p in players:
            balances = await p.ok(GetBalance)
            assert isinstance(balances, Balances)
            mine = next(r for r in results.results if r.seat == seats[p.player])
            assert [(b.table_id, b.balance) for b in balances.tables] == [("s", mine.balance)]
        assert app.stores is not None
        report = await audit_report(app.stores.client)
        assert report.ok, report.explain()
        assert report.ledger_complete
    finally:
        await close_all(players)
        await app.stop()
