"""Failover through Sentinel: the primary killed mid-round, the replica promoted, the
round finishes, and nothing acknowledged is lost.

Real processes from the one ``redis-server`` binary: a primary, a replica and three
sentinels (:class:`~bench.procs.topology.LocalSentinel`). The server connects with a
``redis+sentinel://`` URL, so it waits (``WAIT``) for the replica before it
acknowledges a change. SIGKILL of the primary during the setting phase: once the
replica is promoted the table carries on, every acknowledged bet and hand is in the
round's results, and the audit on the new primary finds every chip.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio
from redis.asyncio.connection import AbstractConnection

from bench.procs.topology import LocalSentinel, RedisProcess
from protocol.messages import Bet, GetBalance, HouseWay, Join, Results, Reveal, SetHand
from protocol.structs import Balances, HandChoice, Joined
from server.app import App
from server.config import Settings
from server.store.client.batching import Replication, ScriptBatcher
from server.store.client.connection import close_client, redis_client
from server.store.errors import Unreplicated, WritesRefused
from tests.helpers import until, url
from tests.server.helpers import Client, audit_report, close_all, counting_gets, quick_tables


@pytest.fixture
def topology() -> Iterator[LocalSentinel]:
    with LocalSentinel() as running:
        yield running


@pytest.mark.asyncio
@pytest.mark.slow
async def test_primary_killed_mid_round(topology: LocalSentinel, tmp_path: Path) -> None:
    tables = tmp_path / "tables.toml"
    tables.write_text(quick_tables("f", setting_ms=6000))
    settings = Settings(
        port=0,
        redis_url=topology.url,
        data_dir=tmp_path / "data",
        tables_file=tables,
        token_secret="sentinel-secret-0123456789",
        lease_ms=3000,
    )
    assert settings.replicas_to_wait_for() == 1
    app = App(settings)
    await app.start()
    players: list[Client] = []
    try:
        store = app.hosts["f"].store
        assert store.replication == Replication(1, 1000)
        players = [await Client.hello(url(app), label=f"p{i}") for i in range(3)]
        seats = {}
        for p in players:
            joined = await p.ok(Join, table_id="f", buy_in=1000)
            assert isinstance(joined, Joined)
            seats[p.label] = joined.seat
        await asyncio.gather(
            *(p.ok(Bet, table_id="f", amount=100 + 10 * i) for i, p in enumerate(players))
        )
        await players[0].phase("f", "setting")
        # p0 sets a hand of its own, p1 the house way: both acknowledged, so both held
        # by the replica. p2 sets nothing: the deadline does it after the failover.
        choice = await players[0].ok(HouseWay, table_id="f", mode="suggest")
        assert isinstance(choice, HandChoice)
        await players[0].ok(SetHand, table_id="f", low=choice.low)
        await players[1].ok(HouseWay, table_id="f", mode="set")
        seq_before = players[2].last_seq("f")
        with contextlib.closing(topology.primary.client()) as primary:
            assert int(primary.info("commandstats")["cmdstat_wait"]["calls"]) > 0

        killed = time.monotonic()
        topology.primary.kill()
        await asyncio.to_thread(topology.wait_promoted)
        reveal = await players[2].event("f", Reveal, within=40)
        results = await players[2].event("f", Results, within=20)
        print(f"failover: the table went on {time.monotonic() - killed:.1f} s after the kill")

        assert reveal.seq > seq_before
        hands = {h.hand: h for h in reveal.hands}
        assert hands[seats["p0"]].low == choice.low
        assert not hands[seats["p0"]].house_way
        assert hands[seats["p1"]].house_way
        bets = {r.seat: r.bet for r in results.results}
        assert bets == {seats[p.label]: 100 + 10 * i for i, p in enumerate(players)}
        for p in players:
            balances = await p.ok(GetBalance)
            assert isinstance(balances, Balances)
            mine = next(r for r in results.results if r.seat == seats[p.label])
            assert [(b.table_id, b.balance) for b in balances.tables] == [("f", mine.balance)]
            assert balances.account == 10_000 - 1000
        client = redis_client(topology.url, 2, 10)
        try:
            report = await audit_report(client)
        finally:
            await close_client(client)
        assert report.ok, report.explain()
        assert report.ledger_complete
        assert report.credited == 3 * 10_000
    finally:
        await close_all(players)
        with contextlib.suppress(Exception):
            await app.stop()


class _Replica:
    """The topology's replica, frozen (SIGSTOP: its link to the primary held, nothing
    acknowledged) and thawed."""

    def __init__(self, topology: LocalSentinel) -> None:
        proc = topology.replica.proc
        assert proc is not None
        self.pid = proc.pid
        self.frozen = False

    def freeze(self) -> None:
        os.kill(self.pid, signal.SIGSTOP)
        self.frozen = True

    def thaw(self) -> None:
        if self.frozen:
            os.kill(self.pid, signal.SIGCONT)
            self.frozen = False


def _betting_app(topology: LocalSentinel, tmp_path: Path, table: str, lease_ms: int) -> App:
    """A server through the sentinels, with one table betting for a minute and a short
    ``WAIT`` (0.3 s)."""
    tables = tmp_path / "tables.toml"
    tables.write_text(quick_tables(table, betting_ms=60_000))
    return App(
        Settings(
            port=0,
            redis_url=topology.url,
            data_dir=tmp_path / "data",
            tables_file=tables,
            token_secret="sentinel-secret-0123456789",
            lease_ms=lease_ms,
            redis_wait_ms=300,
        )
    )


@pytest.mark.asyncio
@pytest.mark.slow
async def test_no_replica_acknowledges(topology: LocalSentinel, tmp_path: Path) -> None:
    """A replica that holds its link but answers nothing (SIGSTOP): a change is not
    acknowledged (``unavailable``, retry), and the table carries on once it answers,
    from what the primary holds."""
    app = _betting_app(topology, tmp_path, "w", lease_ms=3000)
    await app.start()
    player: Client | None = None
    replica = _Replica(topology)
    try:
        player = await Client.hello(url(app))
        await player.ok(Join, table_id="w", buy_in=1000)
        replica.freeze()
        await player.error(Bet, "unavailable", table_id="w", amount=100)
        replica.thaw()

        async def bet_on_the_table() -> bool:
            assert player is not None
            reply = await player.call(GetBalance)
            balances = getattr(reply, "result", None)
            # While the table is between holders the reply may not list it yet.
            tables = balances.tables if isinstance(balances, Balances) else ()
            return [t.balance for t in tables] == [900]

        # The primary kept the bet: once the table is taken again, it is there.
        await until(bet_on_the_table, 30, "the table back, with the bet", every=0.2)
        assert app.stores is not None
        report = await audit_report(app.stores.client)
        assert report.ok, report.explain()
    finally:
        replica.thaw()
        if player is not None:
            await player.close()
        await app.stop()


@pytest.mark.asyncio
async def test_the_batcher_keeps_no_connection_of_sentinels_pool(
    topology: LocalSentinel,
) -> None:
    """Sentinel's pool moves only its idle connections to a new primary after a
    failover: a connection the batcher kept would stay on the old one. So each round
    trip takes its connection from the pool and gives it back."""
    client = redis_client(topology.url, 8, 10)
    try:
        batcher = ScriptBatcher(client)
        echo = client.register_script("return ARGV[1]")
        await client.script_load("return ARGV[1]")
        taken = counting_gets(client.connection_pool)
        for i in range(3):
            assert await batcher.call(echo, [], [str(i)]) == str(i).encode()
        assert len(taken) == 3
    finally:
        await close_client(client)


INCR = "return redis.call('INCR', KEYS[1])"


class _TwoServers(redis.asyncio.ConnectionPool):
    """A pool whose first connection reaches port ``first`` and every later one port
    ``then``, as Sentinel's pool may across a failover: a connection in use stays on
    the old primary, idle ones go to the new one."""

    def __init__(
        self, first: int, then: int, max_connections: int = 4, socket_timeout: float = 5
    ) -> None:
        super().__init__(
            host="127.0.0.1",
            port=first,
            max_connections=max_connections,
            socket_timeout=socket_timeout,
        )
        self.then = then
        self.made = 0

    def make_connection(self) -> AbstractConnection:
        self.made += 1
        port = self.connection_kwargs["port"] if self.made == 1 else self.then
        connection: AbstractConnection = self.connection_class(
            **{**self.connection_kwargs, "port": port}
        )
        return connection


@contextlib.asynccontextmanager
async def _beside_a_lone_redis(
    topology: LocalSentinel, folder: Path, lone_first: bool, **pool_options: Any
) -> AsyncIterator[tuple[_TwoServers, redis.asyncio.Redis, _Replica]]:
    """A client on a :class:`_TwoServers` pool over the topology's primary and a Redis
    of its own, alone (``lone_first``: its connection comes first), with the INCR
    script loaded on its first connection; and the replica, thawed at the end."""
    lone = RedisProcess(folder / "lone", {})
    lone.start()
    ports = (lone.port, topology.primary.port) if lone_first else (topology.primary.port, lone.port)
    pool = _TwoServers(*ports, **pool_options)
    client = redis.asyncio.Redis(connection_pool=pool)
    replica = _Replica(topology)
    try:
        await client.script_load(INCR)
        yield pool, client, replica
    finally:
        replica.thaw()
        await client.aclose()
        await pool.aclose()
        lone.stop()


@pytest.mark.asyncio
@pytest.mark.slow
async def test_whether_the_primary_is_alone_is_asked_of_the_one_that_took_the_writes(
    topology: LocalSentinel, tmp_path: Path
) -> None:
    """A WAIT that falls short counts as a lone primary's only if the server that took
    the writes has no replica; and once a primary was found alone, a pipeline asks
    again after its writes, on its own connection. Here every other connection of the
    pool reaches a Redis that is alone: asked there, the primary's unreplicated writes
    (its replica linked, but frozen) were acknowledged."""

    def replicas() -> int:
        return int(str(topology.primary.info("replication")["connected_slaves"]))

    async with _beside_a_lone_redis(topology, tmp_path, lone_first=False) as (
        pool,
        client,
        replica,
    ):
        incr = client.register_script(INCR)
        batcher = ScriptBatcher(client, replication=Replication(1, 200))
        assert await batcher.call(incr, ["n"], []) == 1  # kept: the primary's connection
        replica.freeze()
        with pytest.raises(Unreplicated):
            await batcher.call(incr, ["n"], [], durable=True)
        assert batcher.waits == 1
        # Alone for real (the frozen replica's link cut): acknowledged as a lone Redis's.
        topology.primary.client().client_kill_filter(_type="replica")
        await until(lambda: replicas() == 0, 10, "the replica's link cut")
        assert await batcher.call(incr, ["n"], [], durable=True) == 3
        assert batcher.waits == 2
        # The replica back, then frozen again: the next pipeline finds it (asked after
        # the writes), waits for it, and its silence fails it.
        replica.thaw()
        await until(lambda: replicas() == 1, 20, "the replica back")
        replica.freeze()
        with pytest.raises(Unreplicated):
            await batcher.call(incr, ["n"], [], durable=True)
        assert batcher.waits == 3
        assert batcher.unreplicated == 2
        # Any other connection of the pool reaches the lone Redis (the batcher holds
        # the first one): its INFO says no replica.
        assert (await client.info("replication"))["connected_slaves"] == 0
        assert pool.made == 2


@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_primary_found_alone_on_one_connection_is_not_taken_alone_on_another(
    topology: LocalSentinel, tmp_path: Path
) -> None:
    """Found alone through one connection (the new primary's, say), the primary is
    asked again by the next pipeline on another one (the old primary's, its replica
    frozen): its writes are not acknowledged. And the ``WAIT`` then sent after them
    takes longer than the connection's time limit: the calls keep their replies (the
    durable one unreplicated), and nothing runs twice."""
    # Two connections at most, so the batcher keeps none (it takes one from the pool
    # for each round trip, as from Sentinel's); the first reaches the lone Redis.
    async with _beside_a_lone_redis(
        topology, tmp_path, lone_first=True, max_connections=2, socket_timeout=0.5
    ) as (pool, client, replica):
        incr = client.register_script(INCR)
        topology.primary.client().script_load(INCR)
        batcher = ScriptBatcher(client, replication=Replication(1, 200))
        assert await batcher.call(incr, ["n"], [], durable=True) == 1  # alone: acknowledged
        assert batcher.waits == 1
        replica.freeze()
        # From now on a WAIT outlasts the connection's time limit (0.5 s).
        batcher.replication = Replication(1, 3_000)
        # The lone Redis's connection, held: the next pipeline's is a new one (redis-py's
        # deprecation wrapper leaves get_connection untyped).
        held = await pool.get_connection()  # type: ignore[no-untyped-call]
        try:
            durable = batcher.call(incr, ["n"], [], durable=True)
            plain = batcher.call(incr, ["m"], [])
            with pytest.raises(Unreplicated) as refused:
                await durable
            assert refused.value.reply == 1  # the primary's own counter
            assert await plain == 1
        finally:
            await pool.release(held)
        assert batcher.waits == 2
        assert pool.made == 2
        primary = topology.primary.client()
        assert (primary.get("n"), primary.get("m")) == ("1", "1")  # each ran once


@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_primary_that_refuses_writes_leaves_the_table_as_it_was(
    topology: LocalSentinel, tmp_path: Path
) -> None:
    """A primary with ``min-replicas-to-write`` whose replica stopped answering refuses
    the commit's writes (``NOREPLICAS``, deploy/README.md): the bet is refused as
    ``unavailable`` (retryable), nothing is stored and no event sent, the table stays
    with its holder, and a bet once the replica answers again goes through."""
    app = _betting_app(topology, tmp_path, "m", lease_ms=10_000)  # renewals refused too
    await app.start()
    player: Client | None = None
    replica = _Replica(topology)
    primary = topology.primary.client()
    try:
        primary.config_set("min-replicas-max-lag", 1)
        primary.config_set("min-replicas-to-write", 1)
        player = await Client.hello(url(app))
        await player.ok(Join, table_id="m", buy_in=1000)
        seq = player.last_seq("m")
        host = app.hosts["m"]
        assert host.state is not None
        version = host.state.version
        keys = host.store.keys

        def stored() -> tuple[bytes | str | None, int, int]:
            """What Redis holds of the table: its version, its events and its ledger."""
            return (
                primary.hget(keys.table_state("m"), "v"),
                primary.xlen(keys.table_events("m")),
                primary.xlen(keys.table_ledger("m")),
            )

        before = stored()
        assert before[0] == str(version)
        replica.freeze()

        def refuses_writes() -> bool:
            try:
                primary.set("probe", "1")
            except redis.ResponseError as exc:
                return WritesRefused.of(exc) is not None
            return False

        await until(lambda: asyncio.to_thread(refuses_writes), 20, "the primary refusing writes")
        await player.error(Bet, "unavailable", table_id="m", amount=100)
        assert host.lease.ready  # still held here: nothing was written to lose it for
        assert host.state.version == version
        assert stored() == before  # nothing written: no version, event or ledger entry
        await asyncio.sleep(0.3)
        assert player.last_seq("m") == seq  # no event went out

        replica.thaw()
        await until(
            lambda: asyncio.to_thread(lambda: not refuses_writes()), 20, "writes taken again"
        )
        await player.ok(Bet, table_id="m", amount=100)
        after = stored()
        assert after[0] == str(version + 1)
        assert after[1] > before[1]  # its event
        assert after[2] > before[2]  # its ledger entry
        balances = await player.ok(GetBalance)
        assert isinstance(balances, Balances)
        assert [t.balance for t in balances.tables] == [900]
        assert app.stores is not None
        report = await audit_report(app.stores.client)
        assert report.ok, report.explain()
    finally:
        replica.thaw()
        primary.close()
        if player is not None:
            await player.close()
        await app.stop()
