"""A node alone on its Redis publishes nothing after its commits; a node joining it
later still finds every table as it is (docs/DESIGN.md, "Several nodes on one Redis")."""

from __future__ import annotations

import functools

import msgpack
import pytest
import redis.asyncio

from protocol.events import Snapshot
from protocol.messages import Bet, BetPlaced, GetBalance, Join, ListTables
from protocol.structs import Balances, TableList
from server.cluster.placement import assign, node_name
from server.store.keys import DEFAULT_KEYS
from server.store.nodes.shared import ClusterStore
from tests.server.cluster.conftest import Nodes
from tests.server.cluster.test_nodes import TABLES, everything_published, on_seat
from tests.server.helpers import Client, close_all, quick_tables


@pytest.mark.asyncio
async def test_a_node_joining_one_that_played_alone_sees_its_tables_as_they_are(
    nodes: Nodes, redis_client: redis.asyncio.Redis
) -> None:
    """Two players sit and bet on a node alone: nothing is published, and the lobby
    summary stays as the node wrote it when it took the table. A second node starts:
    at once (it waits for the first one's announcement before it serves), its lobby
    shows the table's players, a player resuming through it is found seated (attached
    with a snapshot, their table balance known), and the other player's bet reaches
    them across the nodes."""
    nodes.tables(quick_tables(*TABLES, betting_ms=60_000))
    await nodes.start("n1")
    await nodes.settled(redis_client, TABLES)
    # A table the two nodes leave on n1 (the placement goes by the nodes' names).
    stays = [t for t, i in assign(TABLES, ["n1#a", "n2#b"]).items() if node_name(i) == "n1"]
    table = stays[0]
    clients: list[Client] = []
    try:
        async with everything_published(redis_client) as published:
            a = await Client.hello(nodes.url("n1"), label="a")
            b = await Client.hello(nodes.url("n1"), label="b")
            clients += [a, b]
            await a.ok(Join, table_id=table, buy_in=1000, seat=0)
            await b.ok(Join, table_id=table, buy_in=1000, seat=1)
            await a.ok(Bet, table_id=table, amount=50)
            await b.event(table, BetPlaced, functools.partial(on_seat, 0))
        alone = [c for c, _ in published if not c.startswith(DEFAULT_KEYS.nodes_channel())]
        assert alone == [], "a node alone published"
        taken = await redis_client.get(DEFAULT_KEYS.table_summary(table))
        assert isinstance(taken, bytes)
        assert msgpack.unpackb(taken, raw=False) == ["idle", []]  # as taken, before the joins
        assert await redis_client.smembers(DEFAULT_KEYS.player_seats(a.player)) == set()

        await nodes.start("n2")
        # No wait: n2 serves once n1 has announced its tables.
        summary = await redis_client.get(DEFAULT_KEYS.table_summary(table))
        assert isinstance(summary, bytes)
        phase, seats = msgpack.unpackb(summary, raw=False)
        assert phase == "betting"
        assert sorted(p for p, _ in seats) == sorted([a.player, b.player])
        watcher = await Client.hello(nodes.url("n2"), label="watcher")
        clients.append(watcher)
        listed = await watcher.ok(ListTables)
        assert isinstance(listed, TableList)
        row = next(t for t in listed.tables if t.table_id == table)
        assert (row.players, row.phase) == (2, "betting")

        assert a.welcome is not None
        again = await Client.hello(
            nodes.url("n2"), label="a-again", resume_token=a.welcome.resume_token
        )
        clients.append(again)
        snapshot = await again.event(table, Snapshot)
        assert snapshot.your_seat == 0
        balances = await again.ok(GetBalance)
        assert isinstance(balances, Balances)
        assert [(t.table_id, t.balance) for t in balances.tables] == [(table, 950)]

        await b.ok(Bet, table_id=table, amount=60)
        placed = await again.event(table, BetPlaced, functools.partial(on_seat, 1))
        assert placed.amount == 60
        live = await ClusterStore(redis_client).live_nodes()
        assert sorted(node_name(i) for i in live.instances) == ["n1", "n2"]
        holders = await nodes.holders(redis_client, [table])
        assert holders == {table: "n1"}  # the events crossed from n1 to n2
    finally:
        await close_all(clients)
    nodes.audit()
