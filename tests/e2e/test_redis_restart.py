"""Redis restarts between two rounds (append-only file): nothing is lost.

This test runs its own Redis in a folder of its own (a short path, so that the unix
socket, hence the URL, stays the same across the restart), not the session's one.
The server keeps running through the restart, as it would in production.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

import pytest
import redis.asyncio

from protocol.messages import Bet, Commitment, GetBalance, GetHistory, HouseWay, Join, Results
from protocol.structs import Balances, HistoryPage
from server.app import App
from server.config import Settings
from server.store.embedded.process import EmbeddedRedis
from server.store.players.accounts import AccountStore
from server.store.tables.store import TableStore
from tests.helpers import until, url
from tests.server.helpers import Client, audit_report, close_all, quick_tables


async def logged(caplog: pytest.LogCaptureFixture, logger: str, text: str) -> None:
    """Wait until ``logger`` (or one below it) has logged a record containing ``text``."""

    def found() -> bool:
        return any(
            (r.name == logger or r.name.startswith(f"{logger}.")) and text in r.getMessage()
            for r in caplog.records
        )

    await until(found, 10, f"{logger} to log {text!r}")


async def everything(client: redis.asyncio.Redis, players: list[str]) -> dict[str, object]:
    """What must survive: accounts, table states and event buffers, histories, ledger."""
    tables = TableStore(client)
    found: dict[str, object] = {
        "accounts": await AccountStore(client).list_accounts(),
        "money": await client.hgetall("pg:money"),
        "ledger": await client.xrange("pg:ledger"),
    }
    for table_id in await tables.table_ids():
        found[f"table {table_id}"] = await tables.load(table_id)
        found[f"events {table_id}"] = await tables.replay.events_since(table_id, 0)
    for p in players:
        found[f"history {p}"] = (await tables.history.page(p)).items
    return found


async def play(players: list[Client], table_id: str, round_no: int) -> Results:
    starts = [len(p.table(table_id)) for p in players]
    await asyncio.gather(*(p.ok(Bet, table_id=table_id, amount=100) for p in players))
    for p, start in zip(players, starts, strict=True):
        await p.phase(table_id, "setting", after=start)
        await p.ok(HouseWay, table_id=table_id, mode="set")
    results = await players[0].event(table_id, Results, lambda m: m.round == round_no)
    for p in players:  # the next round's betting is open: between rounds
        await p.event(table_id, Commitment, lambda m: m.round == round_no + 1)
    return results


@pytest.mark.asyncio
async def test_redis_restart_between_rounds(
    own_redis: EmbeddedRedis, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="server.host")
    tables = tmp_path / "tables.toml"
    # A long betting phase: nothing happens between the rounds but what the test does.
    tables.write_text(quick_tables("r", betting_ms=60_000))
    settings = Settings(
        port=0,
        redis_url=own_redis.url,
        data_dir=tmp_path / "data",
        tables_file=tables,
        token_secret="restart-secret-0123456789",
        # Long enough to outlive the outage below: a lease that expired while Redis was
        # down is lost (another process may have the table by then), and requests made
        # while it is taken again get `unavailable`, a race this test is not about.
        lease_ms=3000,
    )
    app = App(settings)
    await app.start()
    client = own_redis.client()
    players: list[Client] = []
    try:
        players = [await Client.hello(url(app), label=f"p{i}") for i in range(2)]
        for p in players:
            await p.ok(Join, table_id="r", buy_in=1000)
        first = await play(players, "r", 1)
        names = [p.player for p in players]
        before = await everything(client, names)

        await client.aclose()
        await own_redis.astop()  # SHUTDOWN: the append-only file is synced
        # Down long enough for the server to miss a lease renewal (every lease_ms / 3).
        await logged(caplog, "server.host", "leases not renewed")
        await own_redis.astart()
        client = own_redis.client()
        assert await everything(client, names) == before

        # The server carries on with the same players: another round.
        await until(lambda: all(h.ready for h in app.hosts.values()), 10, "the tables")
        second = await play(players, "r", 2)
        for p in players:
            history = await p.ok(GetHistory)
            assert isinstance(history, HistoryPage)
            assert [r.round for r in history.rounds] == [2, 1]
            balances = await p.ok(GetBalance)
            assert isinstance(balances, Balances)
            seat = next(r.seat for r in history.rounds)
            expected = 1000 + sum(
                r.payout + r.bonus_payout - r.bet - r.bonus_bet
                for res in (first, second)
                for r in res.results
                if r.seat == seat
            )
            assert [(b.table_id, b.balance) for b in balances.tables] == [("r", expected)]
        report = await audit_report(client)
        assert report.ok, report.explain()
        assert report.ledger_complete
    finally:
        await close_all(players)
        await app.stop()
        await client.aclose()


@pytest.mark.asyncio
async def test_a_deadline_passing_while_redis_is_down(
    own_redis: EmbeddedRedis, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The tick that cannot be stored is retried once Redis is back; the server keeps
    its lease through a short outage (no takeover, no ``unavailable``)."""
    caplog.set_level(logging.WARNING, logger="server.host")
    tables = tmp_path / "tables.toml"
    tables.write_text(quick_tables("d", setting_ms=300))
    settings = Settings(
        port=0,
        redis_url=own_redis.url,
        data_dir=tmp_path / "data",
        tables_file=tables,
        token_secret="restart-secret-0123456789",
        lease_ms=3000,
    )
    app = App(settings)
    await app.start()
    host = app.hosts["d"]
    token = host.token
    player: Client | None = None
    try:
        player = await Client.hello(url(app))
        await player.ok(Join, table_id="d", buy_in=1000)
        await player.ok(Bet, table_id="d", amount=100)
        setting = await player.phase("d", "setting")
        assert setting.deadline_ms is not None
        await own_redis.astop()
        # The setting deadline passes while Redis is down: its tick is not stored.
        await logged(caplog, "server.host", "table d: tick not stored")
        await own_redis.astart()
        results = await player.event("d", Results)
        assert [r.seat for r in results.results] == [0]
        assert host.ready
        assert host.token == token
        balances = await player.ok(GetBalance)
        assert isinstance(balances, Balances)
        assert balances.tables[0].balance == results.results[0].balance
        async with contextlib.aclosing(own_redis.client()) as client:
            report = await audit_report(client)
        assert report.ok, report.explain()
    finally:
        if player is not None:
            await player.close()
        await app.stop()
