"""The jackpot calls of a settled round across a Redis failover: made on a real primary
with a real replica, they are answered only once the replica holds them (as the
tables' commits are), so a replica promoted after an unanswered call gets it from the
holder's retry; and a holder that takes its table again makes the calls of the round
it finds settling again, whatever answered before it lost the table."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio

from bench.procs.topology import PERSISTENT, RedisProcess, command, wait_for
from protocol.messages import Bet, Join
from protocol.structs import Wager
from server.host.jackpots import TableJackpots
from server.store import AccountStore, Contribution, JackpotStore, StoreUnavailable
from server.store.client.batching import Replication
from server.table.state import Phase
from tests.conftest import FAST_TABLES
from tests.helpers import until, url
from tests.server.conftest import StartApp
from tests.server.helpers import Client
from tests.server.host.test_jackpots import SEED, WAGER, _settled, _top_hand_dealt

WAIT = Replication(replicas=1, timeout_ms=300)


@dataclass
class Pair:
    """A primary and its replica (real ``redis-server`` processes on loopback)."""

    primary: RedisProcess
    replica: RedisProcess
    frozen: bool = False

    def freeze(self) -> None:
        """The replica holds its link and acknowledges nothing (SIGSTOP)."""
        assert self.replica.proc is not None
        os.kill(self.replica.proc.pid, signal.SIGSTOP)
        self.frozen = True

    def thaw(self) -> None:
        if self.frozen:
            assert self.replica.proc is not None
            os.kill(self.replica.proc.pid, signal.SIGCONT)
            self.frozen = False

    def fail_over(self) -> None:
        """The primary dies, and so does the frozen replica, with what the primary sent
        it since it froze unread; started again from its own files, it becomes the
        primary: without those writes, as a replica promoted before it had them."""
        self.primary.kill()
        assert self.frozen
        self.replica.kill()  # SIGKILL ends a stopped process too
        self.frozen = False
        self.replica.start()
        with contextlib.closing(self.replica.client()) as client:
            command(client, "REPLICAOF", "NO", "ONE")
        wait_for(lambda: self.replica.info("replication")["role"] == "master", 10, "promotion")


@pytest.fixture
def pair() -> Iterator[Pair]:
    folder = Path(tempfile.mkdtemp(prefix="pg-jp-"))
    running = Pair(
        RedisProcess(folder / "primary", dict(PERSISTENT)),
        RedisProcess(folder / "replica", dict(PERSISTENT)),
    )
    try:
        running.primary.start()
        running.replica.directives["replicaof"] = f"127.0.0.1 {running.primary.port}"
        running.replica.start()
        wait_for(
            lambda: running.replica.info("replication").get("master_link_status") == "up",
            20,
            "the replica to sync",
        )
        yield running
    finally:
        running.thaw()
        for process in (running.replica, running.primary):
            with contextlib.suppress(Exception):
                process.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest_asyncio.fixture
async def clients(pair: Pair) -> AsyncIterator[Callable[[RedisProcess], redis.asyncio.Redis]]:
    """Clients of the pair's processes (closed after the test)."""
    made: list[redis.asyncio.Redis] = []

    def client(process: RedisProcess) -> redis.asyncio.Redis:
        made.append(redis.asyncio.Redis(port=process.port, socket_timeout=5))
        return made[-1]

    try:
        yield client
    finally:
        for one in made:
            await one.aclose()


Clients = Callable[[RedisProcess], redis.asyncio.Redis]


@pytest.mark.asyncio
async def test_a_call_no_replica_acknowledged_is_not_answered(pair: Pair, clients: Clients) -> None:
    store = JackpotStore(clients(pair.primary), replication=WAIT)
    pair.freeze()
    with pytest.raises(StoreUnavailable):
        await store.contribute(
            "shared",
            seed=SEED,
            contribution_bps=5000,
            table_id="t1",
            round_no=1,
            seat=0,
            player="ann",
            wager=WAGER,
        )
    pair.thaw()
    # Its retry, once the replica answers: the contribution the primary holds, once.
    again = await store.contribute(
        "shared",
        seed=SEED,
        contribution_bps=5000,
        table_id="t1",
        round_no=1,
        seat=0,
        player="ann",
        wager=WAGER,
    )
    assert (again.applied, again.chips, again.meter) == (False, WAGER // 2, SEED + WAGER // 2)
    assert (await store.read("shared")).contributed == WAGER // 2


@pytest.mark.asyncio
async def test_calls_a_failover_lost_are_made_on_the_promoted_replica(
    monkeypatch: pytest.MonkeyPatch,
    pair: Pair,
    clients: Clients,
) -> None:
    """The round's calls reach the primary, whose replica never gets them before it is
    promoted: none was answered, so the round still owes them, and the holder's retry
    makes them on the new primary: the meter fed and paid, the account paid, once."""
    state = _settled(monkeypatch)
    holder = TableJackpots("t1", JackpotStore(clients(pair.primary), replication=WAIT))
    pair.freeze()
    with pytest.raises(StoreUnavailable):
        await holder.pay(state)
    assert holder.due(state)
    pair.fail_over()
    promoted = clients(pair.replica)
    assert (await JackpotStore(promoted).read("shared")).started is False  # lost with it
    holder.store = JackpotStore(promoted, replication=WAIT)  # alone now: answered alone
    await holder.pay(state)
    assert not holder.due(state)
    meter = await JackpotStore(promoted).read("shared")
    won = SEED + 2 * WAGER // 2
    assert (meter.meter, meter.contributed, meter.paid, meter.hits) == (SEED, WAGER, won, 1)
    assert await AccountStore(promoted).balance("ann") == won


LONG_SETTLING = FAST_TABLES.replace("settling_ms = 300", "settling_ms = 60000", 1) + (
    f"\n[jackpot.shared]\nseed = {SEED}\ncontribution_bps = 5000\nwager = {WAGER}\n"
    'tables = ["fast"]\n'
)


@pytest.mark.asyncio
async def test_a_table_taken_again_makes_its_settling_rounds_calls_again(
    monkeypatch: pytest.MonkeyPatch,
    start_app: StartApp,
    redis_client: redis.asyncio.Redis,
) -> None:
    """The holder made the round's calls, then lost the table (here: stopped) while
    Redis lost them (a replica promoted without them: here, the jackpot's keys
    removed). Taking the table back, in the same round's settling phase, it makes them
    again; the account, which kept its payment, is not paid twice."""
    assert "settling_ms = 60000" in LONG_SETTLING
    _top_hand_dealt(monkeypatch)
    app = await start_app(tables=LONG_SETTLING)
    host = app.hosts["fast"]
    store = JackpotStore(redis_client)
    player = await Client.hello(url(app), label="p")
    try:
        await player.ok(Join, table_id="fast", buy_in=500, seat=0)
        await player.ok(
            Bet, table_id="fast", amount=10, wagers=(Wager(kind="progressive", amount=WAGER),)
        )

        async def paid() -> bool:
            return (await store.read("shared")).hits == 1

        await until(paid, 15, "the round's calls")
        state = host.state
        assert state is not None
        assert state.phase is Phase.SETTLING
        assert host.applier.jackpots.paid_round == state.round_no
        (winner,) = [r.player for r in state.results]
        balance = await AccountStore(redis_client).balance(winner)
        await host.stop()
        lost = [k async for k in redis_client.scan_iter(match="*jackpot:{shared}*")]
        assert lost
        await redis_client.delete(*lost)
        host.start()
        assert await host.wait_ready(10)
        assert host.state is not None
        assert (host.state.phase, host.state.round_no) == (Phase.SETTLING, state.round_no)
        meter = await store.read("shared")
        assert (meter.contributed, meter.hits, meter.paid) == (WAGER // 2, 1, SEED + WAGER // 2)
        assert await AccountStore(redis_client).balance(winner) == balance
    finally:
        await player.close()


@pytest.mark.asyncio
async def test_a_retry_on_another_connection_waits_for_the_first_calls_writes(
    pair: Pair, clients: Clients
) -> None:
    """A call not answered (its replica frozen), retried from another connection (another
    node, a new pool): the retry is answered from the call's marker, and still waits
    until a replica holds the call, not only what its own connection wrote."""

    async def contribute() -> Contribution:
        store = JackpotStore(clients(pair.primary), replication=WAIT)  # a new connection
        return await store.contribute(
            "shared",
            seed=SEED,
            contribution_bps=5000,
            table_id="t1",
            round_no=1,
            seat=0,
            player="ann",
            wager=WAGER,
        )

    pair.freeze()
    with pytest.raises(StoreUnavailable):
        await contribute()
    with pytest.raises(StoreUnavailable):
        await contribute()
    pair.thaw()
    again = await contribute()
    assert (again.applied, again.chips) == (False, WAGER // 2)
