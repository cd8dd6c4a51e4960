"""Three nodes on one Redis, as processes: any node serves any table.

Each test starts ``paigow-server`` three times with ``--node-name`` (one Redis, one
tables file), waits until every table is held where the live nodes place it, and
plays through nodes that hold the table and nodes that do not.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
import time
from collections.abc import AsyncIterator

import msgpack
import pytest
import redis.asyncio

from protocol.codec import decode_server
from protocol.errors import CloseCode
from protocol.messages import (
    Bet,
    BetPlaced,
    Cards,
    Commitment,
    GetBalance,
    Hidden,
    HouseWay,
    Join,
    OkReply,
    Results,
    Watch,
)
from protocol.structs import Balances
from server.cluster.placement import assign, node_name
from server.store.keys import DEFAULT_KEYS
from server.store.nodes.shared import ClusterStore
from tests.helpers import until
from tests.server.cluster.conftest import Nodes
from tests.server.helpers import (
    Client,
    assert_gapless,
    assert_same_public_events,
    close_all,
    quick_tables,
    seat_status,
)

TABLES = ["t1", "t2", "t3", "t4", "t5", "t6"]
NAMES = ["n1", "n2", "n3"]


@contextlib.asynccontextmanager
async def everything_published(
    client: redis.asyncio.Redis,
) -> AsyncIterator[list[tuple[str, bytes]]]:
    """Every message published on the product's channels meanwhile: (channel, data)."""
    seen: list[tuple[str, bytes]] = []
    pubsub = client.pubsub()
    await pubsub.psubscribe(f"{DEFAULT_KEYS.prefix}*")

    async def read() -> None:
        async for message in pubsub.listen():
            if message["type"] == "pmessage":
                # One by one, as they come (the reader is cancelled, never done).
                seen.append((message["channel"].decode(), message["data"]))  # noqa: PERF401

    reader = asyncio.create_task(read())
    try:
        yield seen
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        await pubsub.aclose()


async def three_nodes(nodes: Nodes, client: redis.asyncio.Redis, **tables: int) -> dict[str, str]:
    """Three nodes serving :data:`TABLES`; table -> the node holding it."""
    nodes.tables(quick_tables(*TABLES, **tables))
    await nodes.start(*NAMES)
    return await nodes.settled(client, TABLES)


def on_seat(seat: int, message: BetPlaced) -> bool:
    return message.seat == seat


def has_seq(seq: int, message: Hidden) -> bool:
    return message.seq == seq


def others(holder: str) -> list[str]:
    return [n for n in NAMES if n != holder]


@pytest.mark.asyncio
async def test_cross_node_play_keeps_the_order_and_every_card_private(
    nodes: Nodes, redis_client: redis.asyncio.Redis
) -> None:
    """A player on the holder and one on another node play a round at one table while a
    watcher looks on from the third: each gets every event once, in order, the ``ok``
    before the events it caused, their own cards and nobody else's; and no node hears
    a card of a player not connected to it."""
    holders = await three_nodes(nodes, redis_client, betting_ms=5000, setting_ms=3000)
    table = TABLES[0]
    here, (there, third) = holders[table], others(holders[table])
    async with everything_published(redis_client) as published:
        local = await Client.hello(nodes.url(here), label="local")
        remote = await Client.hello(nodes.url(there), label="remote")
        watcher = await Client.hello(nodes.url(third), label="watcher")
        clients = [local, remote, watcher]
        try:
            await local.ok(Join, table_id=table, buy_in=1000, seat=0)
            await remote.ok(Join, table_id=table, buy_in=1000, seat=1)
            await watcher.ok(Watch, table_id=table)
            replies = await asyncio.gather(
                *(p.call(Bet, table_id=table, amount=50) for p in (local, remote))
            )
            assert all(isinstance(r, OkReply) for r in replies), replies
            # Each player's ok came before the event its bet caused.
            for seat, (p, reply) in enumerate(zip((local, remote), replies, strict=True)):
                placed = await p.event(table, BetPlaced, functools.partial(on_seat, seat))
                assert p.messages.index(reply) < p.messages.index(placed), p.label
            cards = {p.label: await p.event(table, Cards) for p in (local, remote)}
            assert (cards["local"].seat, cards["remote"].seat) == (0, 1)
            # One `cards` per seat with a bet, in seat order, each its own seq; everyone
            # else gets `hidden` with that seq (protocol/PROTOCOL.md, section 9).
            local_seq, remote_seq = cards["local"].seq, cards["remote"].seq
            assert remote_seq == local_seq + 1
            for seq in (local_seq, remote_seq):
                await watcher.event(table, Hidden, functools.partial(has_seq, seq))
            await local.event(table, Hidden, functools.partial(has_seq, remote_seq))
            await remote.event(table, Hidden, functools.partial(has_seq, local_seq))
            for p in (local, remote):
                await p.ok(HouseWay, table_id=table, mode="set")
            results = [await c.event(table, Results, within=20) for c in clients]
            assert results[0] == results[1] == results[2]
            for c in clients:
                assert_gapless(c.table(table), c.label)
                assert not any(
                    isinstance(m, Cards) and m.seat != cards.get(c.label, m).seat
                    for m in c.table(table)
                )
            assert not any(isinstance(m, Cards) for m in watcher.table(table))
            assert_same_public_events(clients, table)
            # The remote player's table balance, read from its node, follows the results.
            balances = await remote.ok(GetBalance)
            assert isinstance(balances, Balances)
            mine = next(r for r in results[0].results if r.seat == 1)
            assert [(b.table_id, b.balance) for b in balances.tables] == [(table, mine.balance)]

            # What every node could hear: a player's cards only on their own channel,
            # which only the node where they are connected listens to.
            for player in (local.player, remote.player):
                channel = DEFAULT_KEYS.player_channel(player)
                assert dict(await redis_client.pubsub_numsub(channel)) == {channel.encode(): 1}
            watchers_channel = DEFAULT_KEYS.player_channel(watcher.player)
            numsub = dict(await redis_client.pubsub_numsub(watchers_channel))
            assert numsub == {watchers_channel.encode(): 1}
        finally:
            await close_all(clients)
    sent_cards = 0
    for channel, data in published:
        message = msgpack.unpackb(data, raw=False)
        if channel == DEFAULT_KEYS.table_channel(table) and message[0] == "events":
            for _, public, _ in message[2]:
                assert not isinstance(decode_server(public), Cards), "a card on a public channel"
        elif channel.startswith(f"{DEFAULT_KEYS.prefix}player:") and message[0] == "private":
            owner = channel.split("{", 1)[1].split("}", 1)[0]
            seat = {local.player: 0, remote.player: 1}[owner]
            for _, frame in message[2]:
                private = decode_server(frame)
                assert isinstance(private, Cards)
                assert private.seat == seat
                sent_cards += 1
    assert sent_cards == 2
    nodes.audit()


@pytest.mark.asyncio
async def test_drain_during_a_round_hands_the_table_over_and_its_players_resume(
    nodes: Nodes, redis_client: redis.asyncio.Redis
) -> None:
    """SIGTERM on the node holding a table in its setting phase: the table is held by
    another node at once (not after its lease, 10 s here); the players on the other
    nodes keep their connections and barely notice; the player on the draining node
    gets 1001, resumes on another node with seat, cards and deadline, and sets."""
    lease_ms = 10_000
    nodes.tables(quick_tables(*TABLES, betting_ms=5000, setting_ms=8000))
    await nodes.start(*NAMES, lease_ms=lease_ms)
    holders = await nodes.settled(redis_client, TABLES)
    table = TABLES[0]
    here, (there, third) = holders[table], others(holders[table])
    leaving = await Client.hello(nodes.url(here), label="leaving")
    staying = await Client.hello(nodes.url(there), label="staying")
    watcher = await Client.hello(nodes.url(third), label="watcher")
    clients = [leaving, staying, watcher]
    try:
        await leaving.ok(Join, table_id=table, buy_in=1000, seat=0)
        await staying.ok(Join, table_id=table, buy_in=1000, seat=1)
        await watcher.ok(Watch, table_id=table)
        await asyncio.gather(*(p.ok(Bet, table_id=table, amount=50) for p in (leaving, staying)))
        setting = await staying.phase(table, "setting")
        cards = await leaving.event(table, Cards)
        await staying.ok(HouseWay, table_id=table, mode="set")
        assert leaving.welcome is not None
        token = leaving.welcome.resume_token

        began = time.monotonic()
        nodes.processes[here].terminate()
        # The staying player is served throughout: a request sent as the drain begins
        # is answered (by whichever node holds the table by then), and soon.
        await staying.ok(HouseWay, table_id=table, mode="suggest")
        asked = time.monotonic() - began
        assert await nodes.processes[here].exited() == 0
        drained = time.monotonic() - began
        handed = await nodes.holders(redis_client, [table])
        assert handed.get(table) in (there, third)
        assert asked < 2.0, f"a request took {asked:.3f} s during the drain"
        assert drained < lease_ms / 2000, f"the drain took {drained:.3f} s"
        await staying.ok(HouseWay, table_id=table, mode="suggest")
        closed = await leaving.wait_closed()
        assert closed.code == CloseCode.GOING_AWAY
        assert staying.closed is None
        assert watcher.closed is None

        seen = leaving.last_seq(table)  # what a client resumes from: the last it saw
        back = await Client.hello(
            nodes.url(there), label="back", resume_token=token, last_seq=[(table, seen)]
        )
        clients.append(back)
        assert back.welcome is not None
        assert back.welcome.resumed
        await back.ok(HouseWay, table_id=table, mode="set")
        results = [await c.event(table, Results, within=20) for c in (back, staying, watcher)]
        assert results[0] == results[1] == results[2]
        assert {r.seat for r in results[0].results} == {0, 1}
        assert setting.deadline_ms is not None
        for c in (staying, watcher):
            assert_gapless(c.table(table), c.label)
        assert_gapless(leaving.table(table) + back.table(table), "leaving, then back")
        assert seat_status(back, table, 0) == "playing"
        assert all(m.cards == cards.cards for m in back.table(table) if isinstance(m, Cards))
    finally:
        await close_all(clients)
    nodes.audit()


@pytest.mark.asyncio
async def test_kill_9_of_a_holder_mid_setting_the_round_finishes_elsewhere(
    nodes: Nodes, redis_client: redis.asyncio.Redis
) -> None:
    """SIGKILL of the node holding a table while its players set their hands: another
    node holds it within the lease, the players on the surviving nodes keep their
    connections and see the round end once, gaplessly; the player of the dead node
    resumes elsewhere; the audit passes."""
    lease_ms = 1000
    nodes.tables(quick_tables(*TABLES, betting_ms=5000, setting_ms=6000))
    await nodes.start(*NAMES, lease_ms=lease_ms)
    holders = await nodes.settled(redis_client, TABLES)
    table = TABLES[0]
    dead, (first, second) = holders[table], others(holders[table])
    players = [
        await Client.hello(nodes.url(first), label="first"),
        await Client.hello(nodes.url(second), label="second"),
        await Client.hello(nodes.url(dead), label="lost"),
    ]
    clients = list(players)
    try:
        for seat, p in enumerate(players):
            await p.ok(Join, table_id=table, buy_in=1000, seat=seat)
        await asyncio.gather(*(p.ok(Bet, table_id=table, amount=50) for p in players))
        await players[0].phase(table, "setting")
        await players[0].ok(HouseWay, table_id=table, mode="set")
        assert players[2].welcome is not None
        token = players[2].welcome.resume_token

        nodes.processes[dead].kill()
        killed = time.monotonic()

        async def taken() -> str | None:
            holder = (await nodes.holders(redis_client, [table])).get(table)
            return holder if holder in (first, second) else None

        await until(taken, 10, "another node to hold the table", every=0.01)
        failover = time.monotonic() - killed
        print(f"failover {failover:.3f}")
        assert failover < lease_ms / 1000 + 2, f"taken over after {failover:.3f} s"
        assert (await players[2].wait_closed()).code is None  # the process just vanished

        # The lost player resumes on a surviving node: seat and cards, and sets.
        back = await Client.hello(nodes.url(first), label="back", resume_token=token)
        clients.append(back)
        assert back.welcome is not None
        assert back.welcome.resumed
        await back.ok(HouseWay, table_id=table, mode="set")
        results = [await c.event(table, Results, within=20) for c in (*players[:2], back)]
        assert results[0] == results[1] == results[2]
        assert {r.seat for r in results[0].results} == {0, 1, 2}
        for p in players[:2]:
            assert p.closed is None, p.label
            assert_gapless(p.table(table), p.label)
            assert [m.round for m in p.table(table) if isinstance(m, Results)] == [1]
        # The round was paid once: one game log each.
        for p in players:
            assert await redis_client.llen(DEFAULT_KEYS.game_log(p.player)) == 1
    finally:
        await close_all(clients)
    nodes.audit()


@pytest.mark.asyncio
async def test_a_node_joining_takes_its_share_between_rounds(
    nodes: Nodes, redis_client: redis.asyncio.Redis
) -> None:
    """A third node joins two: the tables the placement gives it move to it, an idle
    one at once, one in the middle of a round only when the round is over; the players
    there keep their connections and play on through it."""
    nodes.tables(quick_tables(*TABLES, betting_ms=5000, setting_ms=30_000))
    await nodes.start("n1", "n2")
    await nodes.settled(redis_client, TABLES)
    live = (await ClusterStore(redis_client).live_nodes()).instances
    coming = [t for t, i in assign(TABLES, [*live, "n3#0"]).items() if node_name(i) == "n3"]
    assert len(coming) == 2
    busy, idle = coming
    before = (await nodes.holders(redis_client, TABLES))[busy]
    players = [await Client.hello(nodes.url(name), label=name) for name in ("n1", "n2")]
    try:
        for seat, p in enumerate(players):
            await p.ok(Join, table_id=busy, buy_in=1000, seat=seat)
        await asyncio.gather(*(p.ok(Bet, table_id=busy, amount=50) for p in players))
        await players[0].phase(busy, "setting")

        await nodes.start("n3")

        async def moved() -> bool:
            return idle in await nodes.held_async("n3")

        await until(moved, 10, "the idle table to move")
        # The round in play keeps its table where it is until it is over.
        assert (await nodes.holders(redis_client, [busy]))[busy] == before
        for p in players:
            await p.ok(HouseWay, table_id=busy, mode="set")
        await asyncio.gather(*(p.event(busy, Results) for p in players))
        holders = await nodes.settled(redis_client, TABLES)
        assert holders[busy] == holders[idle] == "n3"
        assert sorted(list(holders.values()).count(n) for n in NAMES) == [2, 2, 2]
        # Play on through the new holder.
        await players[0].event(busy, Commitment, lambda m: m.round == 2)
        await asyncio.gather(*(p.ok(Bet, table_id=busy, amount=60) for p in players))
        await asyncio.gather(*(p.event(busy, Cards, lambda m: m.round == 2) for p in players))
        for p in players:
            assert p.closed is None
            assert_gapless(p.table(busy), p.label)
    finally:
        await close_all(players)
    nodes.audit()


@pytest.mark.asyncio
async def test_a_holder_paused_past_its_lease_is_fenced_and_its_clients_hear_at_once(
    nodes: Nodes, redis_client: redis.asyncio.Redis
) -> None:
    """SIGSTOP of the node holding a table, long enough for another node to take it
    over and play the round on; then SIGCONT. The paused node's writes are refused
    (its lease is gone: the one stored round, the audit), it gives the table up, and
    its player and watcher are told at once: the events they missed, gaplessly, and
    their next requests are answered by the new holder. (Before, they heard nothing.)"""
    lease_ms = 1000
    # The paused node's player is away from the takeover on; a grace time shorter than
    # the pause (a round played on, longer on a loaded machine) would rightly stand them
    # up, and this test is of their coming back to the seat.
    nodes.tables(quick_tables(*TABLES, betting_ms=5000, setting_ms=4000, grace_ms=60_000))
    await nodes.start(*NAMES, lease_ms=lease_ms)
    holders = await nodes.settled(redis_client, TABLES)
    table = TABLES[0]
    paused, (other, _) = holders[table], others(holders[table])
    local = await Client.hello(nodes.url(paused), label="local")
    watcher = await Client.hello(nodes.url(paused), label="watcher")
    remote = await Client.hello(nodes.url(other), label="remote")
    clients = [local, watcher, remote]
    process = nodes.processes[paused].proc
    try:
        await local.ok(Join, table_id=table, buy_in=1000, seat=0)
        await remote.ok(Join, table_id=table, buy_in=1000, seat=1)
        await watcher.ok(Watch, table_id=table)
        await asyncio.gather(*(p.ok(Bet, table_id=table, amount=50) for p in (local, remote)))
        await remote.phase(table, "setting")

        process.send_signal(signal.SIGSTOP)
        try:

            async def taken() -> bool:
                holder = (await nodes.holders(redis_client, [table])).get(table)
                return holder not in (None, paused)

            await until(taken, 15, "another node to take the table over", every=0.02)
            # The round goes on without the paused node: set, revealed, settled.
            await remote.ok(HouseWay, table_id=table, mode="set")
            results = await remote.event(table, Results, within=15)
            heard = (len(local.table(table)), len(watcher.table(table)))
        finally:
            process.send_signal(signal.SIGCONT)
        resumed = time.monotonic()
        # Told at once: what they missed, in order, the same as everyone.
        for c in (local, watcher):
            assert await c.event(table, Results, within=5) == results
        told = time.monotonic() - resumed
        assert (len(local.table(table)), len(watcher.table(table))) != heard

        # The paused node gave the table up; its player's requests reach the new holder.
        async def given_up() -> bool:
            return table not in await nodes.held_async(paused)

        await until(given_up, 10, "the table to be given up")
        await local.event(table, Commitment, lambda m: m.round == 2, within=10)
        await local.ok(Bet, table_id=table, amount=60)
        await remote.event(table, BetPlaced, lambda m: m.seat == 0 and m.amount == 60)
        await until(lambda: seat_status(remote, table, 0) == "playing", 10, "local back")
        for c in clients:
            assert c.closed is None, c.label
            assert_gapless(c.table(table), c.label)
        assert_same_public_events(clients, table)
        assert told < 5
        assert "lease lost" in nodes.processes[paused].output()
    finally:
        await close_all(clients)
    nodes.audit()


@pytest.mark.asyncio
async def test_the_player_of_a_node_that_dies_is_away_at_a_table_held_elsewhere(
    nodes: Nodes, redis_client: redis.asyncio.Redis
) -> None:
    """SIGKILL of a node whose player sits at a table another node holds: the table
    stays where it is, so no taking over settles its seats; its holder marks the player
    away once the dead node is no longer live, and the grace time, run from then, frees
    the seat (docs/RULES.md, "Disconnection"). (Before, the seat stayed connected for as
    long as the table stood idle, and a round dealt meanwhile counted as missed.)"""
    nodes.tables(quick_tables(*TABLES))
    await nodes.start("n1", "n2", lease_ms=1000)
    holders = await nodes.settled(redis_client, TABLES)
    table = next(t for t in TABLES if holders[t] == "n1")
    lost = await Client.hello(nodes.url("n2"), label="lost")
    seen = await Client.hello(nodes.url("n1"), label="seen")
    clients = [lost, seen]
    try:
        await lost.ok(Join, table_id=table, buy_in=1000, seat=0)
        await seen.ok(Watch, table_id=table)
        await seen.wait(lambda: seat_status(seen, table, 0) == "playing")

        nodes.processes["n2"].kill()
        killed = time.monotonic()
        await seen.wait(lambda: seat_status(seen, table, 0) == "away", within=15)
        away = time.monotonic() - killed
        # Within the dead node's registration and a heartbeat of the holder's.
        assert away < 1.0 + 5, f"away after {away:.3f} s"
        assert (await nodes.holders(redis_client, [table]))[table] == "n1"
        await seen.wait(lambda: seat_status(seen, table, 0) == "empty", within=5 + 10)
        assert time.monotonic() - killed >= 5.0  # the grace time (quick tables: 5 s)
        assert seen.closed is None
    finally:
        await close_all(clients)
    nodes.audit()


@pytest.mark.asyncio
async def test_the_player_of_a_paused_node_is_away_then_back_at_a_table_held_elsewhere(
    nodes: Nodes, redis_client: redis.asyncio.Redis
) -> None:
    """SIGSTOP of a node whose player sits at a table another node holds, past the
    node's registration: the holder marks the player away. SIGCONT: the node is back
    (its heartbeat, its notice), and the holder counts its player connected again, at a
    table that never moved (docs/RULES.md, "Disconnection")."""
    nodes.tables(quick_tables(*TABLES, grace_ms=60_000))
    await nodes.start("n1", "n2", lease_ms=1000)
    holders = await nodes.settled(redis_client, TABLES)
    table = next(t for t in TABLES if holders[t] == "n1")
    paused = await Client.hello(nodes.url("n2"), label="paused")
    seen = await Client.hello(nodes.url("n1"), label="seen")
    clients = [paused, seen]
    process = nodes.processes["n2"].proc
    try:
        await paused.ok(Join, table_id=table, buy_in=1000, seat=0)
        await seen.ok(Watch, table_id=table)
        await seen.wait(lambda: seat_status(seen, table, 0) == "playing")

        process.send_signal(signal.SIGSTOP)
        try:
            await seen.wait(lambda: seat_status(seen, table, 0) == "away", within=15)
        finally:
            process.send_signal(signal.SIGCONT)
        await seen.wait(lambda: seat_status(seen, table, 0) == "playing", within=15)
        assert (await nodes.holders(redis_client, [table]))[table] == "n1"
        await paused.ok(GetBalance)  # the paused node's client was served all along
        assert paused.closed is None
    finally:
        await close_all(clients)
    nodes.audit()
