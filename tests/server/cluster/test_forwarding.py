"""Two nodes in one process, on one Redis: requests for a table held by the other node.

In-process servers (real sockets, real Redis) keep these quick; the process tests of
``test_nodes.py`` cover crashes, drains and pauses.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re

import pytest

from protocol.codec import encode
from protocol.errors import CloseCode
from protocol.messages import (
    Bet,
    BetPlaced,
    ErrorReply,
    GetBalance,
    Join,
    ListTables,
    OkReply,
    Rebuy,
    Snapshot,
    Unwatch,
    Watch,
)
from protocol.structs import Balances, TableList
from server.app import App
from server.config import Settings
from server.version import SERVER_VERSION
from tests.helpers import until, url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, Reply, assert_gapless, close_all, quick_tables
from tests.server.processes import http_get, run_cli


async def two_nodes(start_app: StartApp) -> tuple[App, App, str]:
    """Nodes ``a`` and ``b`` with one table each; the table ``a`` holds."""
    tables = quick_tables("q1", "q2", betting_ms=60_000)
    a = await start_app(tables, node_name="a")
    b = await start_app(tables, node_name="b")

    def spread() -> bool:
        return all(sum(h.ready for h in n.hosts.values()) == 1 for n in (a, b))

    await until(spread, 10, "one table each")
    return a, b, next(t for t, h in a.hosts.items() if h.ready)


async def send(client: Client, message: object) -> Reply:
    """Send ``message`` (with its own rid) and wait for its reply."""
    rid = message.rid  # type: ignore[attr-defined]
    before = len(client.replies.get(rid, []))
    await client.send(encode(message))  # type: ignore[arg-type]
    await client.wait(lambda: len(client.replies.get(rid, [])) > before)
    return client.replies[rid][-1]


@pytest.mark.asyncio
async def test_a_money_request_repeated_through_another_node_is_applied_once(
    start_app: StartApp,
) -> None:
    """A rebuy answered through the node that does not hold the table, then sent again
    with its rid from the same session, resumed on the holder: the same reply, and the
    chips moved once (protocol/PROTOCOL.md, section 3)."""
    a, b, table = await two_nodes(start_app)
    first = await Client.hello(url(b), label="first")
    clients = [first]
    try:
        await first.ok(Join, table_id=table, buy_in=500)
        rebuy = Rebuy(rid="money-1", table_id=table, amount=100)
        answered = await send(first, rebuy)
        assert isinstance(answered, OkReply)
        assert isinstance(answered.result, Balances)
        assert first.welcome is not None
        again = await Client.hello(url(a), label="again", resume_token=first.welcome.resume_token)
        clients.append(again)
        assert (await first.wait_closed()).code == CloseCode.SESSION_REPLACED
        repeated = await send(again, rebuy)
        assert repeated == answered
        different = await send(again, dataclasses.replace(rebuy, amount=200))
        assert isinstance(different, ErrorReply)
        assert different.code == "rid_reused"
        balances = await again.ok(GetBalance)
        assert isinstance(balances, Balances)
        assert balances.account == 10_000 - 600
        assert [(t.table_id, t.balance) for t in balances.tables] == [(table, 600)]
    finally:
        await close_all(clients)


@pytest.mark.asyncio
async def test_the_lobby_and_balances_seen_from_another_node(start_app: StartApp) -> None:
    a, b, table = await two_nodes(start_app)
    seated = await Client.hello(url(a), label="seated")
    looking = await Client.hello(url(b), label="looking")
    try:
        await seated.ok(Join, table_id=table, buy_in=700)
        await seated.ok(Bet, table_id=table, amount=20)

        async def listed() -> TableList | None:
            lobby = await looking.ok(ListTables)
            assert isinstance(lobby, TableList)
            row = next(t for t in lobby.tables if t.table_id == table)
            return lobby if row.phase != "idle" and row.players == 1 else None

        await until(listed, 10, "the lobby to show the table as its holder has it", every=0.2)
        balances = await seated.ok(GetBalance)
        assert isinstance(balances, Balances)
        assert [(t.table_id, t.balance) for t in balances.tables] == [(table, 680)]
    finally:
        await close_all([seated, looking])


@pytest.mark.asyncio
async def test_watching_a_table_held_elsewhere_and_no_longer(start_app: StartApp) -> None:
    a, b, table = await two_nodes(start_app)
    player = await Client.hello(url(a), label="player")
    passive = await Client.hello(url(a), label="passive")  # seated, never bets: betting stays
    watcher = await Client.hello(url(b), label="watcher")
    try:
        await player.ok(Join, table_id=table, buy_in=700)
        await passive.ok(Join, table_id=table, buy_in=700)
        reply = await watcher.call(Watch, table_id=table)
        snapshot = await watcher.event(table, Snapshot)
        assert watcher.messages.index(reply) < watcher.messages.index(snapshot)
        assert [s.status for s in snapshot.seats[:2]] == ["playing", "playing"]
        await player.ok(Bet, table_id=table, amount=20)
        await watcher.event(table, BetPlaced, lambda m: m.amount == 20)
        await watcher.ok(Unwatch, table_id=table)
        seen = len(watcher.table(table))
        await player.ok(Bet, table_id=table, amount=30)
        await player.event(table, BetPlaced, lambda m: m.amount == 30)
        await watcher.ok(ListTables)  # a round trip after the event: it would have come
        assert len(watcher.table(table)) == seen
        assert_gapless(watcher.table(table), "watcher")
    finally:
        await close_all([player, passive, watcher])


@pytest.mark.asyncio
async def test_the_nodes_command_shows_who_holds_which_table(
    start_app: StartApp, server_settings: Settings
) -> None:
    """``paigow-server nodes``: each live node, and each table with its holder and the
    node it is placed on; ``/metrics`` says the same of each node."""
    a, b, table = await two_nodes(start_app)
    assert a.port
    assert b.port
    tables_file = a.settings.tables_file
    assert tables_file is not None
    args = ["--redis-url", server_settings.redis_url or "", "--tables-file", str(tables_file)]
    done = await asyncio.to_thread(run_cli, [*args, "nodes"])
    assert done.returncode == 0, done.stderr
    nodes = re.findall(
        r"^(a|b)\t(\S+)\tws://127.0.0.1:(\d+)/\t(\d)\t\d+\t(\S+)$", done.stdout, re.M
    )
    assert sorted((name, int(port), int(count), r) for name, _, port, count, r in nodes) == [
        ("a", a.port, 1, SERVER_VERSION),
        ("b", b.port, 1, SERVER_VERSION),
    ]
    rows = dict(re.findall(r"^(q[12])\t(\w+)\t\w+$", done.stdout, re.M))
    assert rows[table] == "a"
    assert set(rows.values()) == {"a", "b"}
    _, body = await asyncio.to_thread(http_get, a.port, "/metrics")
    assert f'paigow_table_held{{table="{table}"}} 1.0' in body
    assert "paigow_cluster_nodes 2.0" in body
