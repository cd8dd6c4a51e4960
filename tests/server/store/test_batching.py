"""Script calls of many tables share pipelines, one in flight at a time (real Redis)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, cast

import pytest
import redis.asyncio
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.store.client.batching import Replication, ScriptBatcher
from server.store.embedded.process import EmbeddedRedis
from tests.server.helpers import counting_gets

ECHO = "return ARGV[1]"
# Busy for a while inside Redis, so that calls pile up while its pipeline is in flight.
SLOW = "local n = 0 for i = 1, tonumber(ARGV[1]) do n = n + 1 end return n"
FAIL = "return redis.error_reply('refused ' .. ARGV[1])"

INCR = "return redis.call('INCR', KEYS[1])"

pytestmark = pytest.mark.asyncio


async def _loaded(client: redis.asyncio.Redis, source: str) -> AsyncScript:
    """``source`` registered and already known to Redis (so no reload pipeline)."""
    script = client.register_script(source)
    await client.script_load(source)
    return script


async def _script_loads(client: redis.asyncio.Redis) -> int:
    stats = await client.info("commandstats")
    # Redis 6 counts SCRIPT as one command; Redis 7 and Valkey count each subcommand.
    found = stats.get("cmdstat_script|load") or stats.get("cmdstat_script", {})
    return int(found.get("calls", 0))


async def test_calls_of_one_loop_pass_share_one_pipeline(
    redis_client: redis.asyncio.Redis,
) -> None:
    batcher = ScriptBatcher(redis_client)
    echo = await _loaded(redis_client, ECHO)
    replies = await asyncio.gather(*(batcher.call(echo, [], [str(i)]) for i in range(20)))
    assert replies == [str(i).encode() for i in range(20)]
    assert batcher.pipelines == 1


async def test_calls_made_while_a_pipeline_is_in_flight_go_together_next(
    redis_client: redis.asyncio.Redis,
) -> None:
    batcher = ScriptBatcher(redis_client)
    slow = await _loaded(redis_client, SLOW)
    echo = await _loaded(redis_client, ECHO)
    # Long (0.4 s measured on a loaded machine): ten loop passes of a loaded machine
    # outlasted three million turns, and the calls are made only while it runs.
    first = batcher.call(slow, [], [30_000_000])
    later: list[asyncio.Future[object]] = []
    for i in range(10):  # up to ten loop passes while the slow script runs
        await asyncio.sleep(0)
        if first.done():
            break
        later.append(batcher.call(echo, [], [str(i)]))
    assert later, "the slow script was over before a second call"
    assert batcher.pipelines == 1  # the others wait for it
    assert await first == 30_000_000
    assert await asyncio.gather(*later) == [str(i).encode() for i in range(len(later))]
    assert batcher.pipelines == 2


async def test_more_pipelines_in_flight_when_asked(redis_client: redis.asyncio.Redis) -> None:
    batcher = ScriptBatcher(redis_client, in_flight=2)
    slow = await _loaded(redis_client, SLOW)
    echo = await _loaded(redis_client, ECHO)
    first = batcher.call(slow, [], [3_000_000])
    await asyncio.sleep(0)
    second = batcher.call(echo, [], ["b"])
    await asyncio.sleep(0)
    third = batcher.call(echo, [], ["c"])
    assert list(await asyncio.gather(first, second, third)) == [3_000_000, b"b", b"c"]
    assert batcher.pipelines == 3
    with pytest.raises(ValueError, match="at least one"):
        ScriptBatcher(redis_client, in_flight=0)


async def test_an_error_belongs_to_its_own_call(redis_client: redis.asyncio.Redis) -> None:
    batcher = ScriptBatcher(redis_client)
    echo = redis_client.register_script(ECHO)
    fail = redis_client.register_script(FAIL)
    results = await asyncio.gather(
        batcher.call(echo, [], ["a"]),
        batcher.call(fail, [], ["b"]),
        batcher.call(echo, [], ["c"]),
        return_exceptions=True,
    )
    assert results[0] == b"a"
    assert isinstance(results[1], ResponseError)
    assert "refused b" in str(results[1])
    assert results[2] == b"c"


async def test_scripts_forgotten_by_redis_are_loaded_again_once_each(
    redis_client: redis.asyncio.Redis,
) -> None:
    batcher = ScriptBatcher(redis_client)
    echo = await _loaded(redis_client, ECHO)
    assert await batcher.call(echo, [], ["x"]) == b"x"
    await redis_client.script_flush()  # what a restarted Redis forgets
    loads = await _script_loads(redis_client)
    sent = batcher.pipelines
    again = await asyncio.gather(*(batcher.call(echo, [], [str(i)]) for i in range(5)))
    assert list(again) == [str(i).encode() for i in range(5)]
    assert await _script_loads(redis_client) == loads + 1  # one SCRIPT LOAD, not five
    assert batcher.pipelines == sent + 2  # the first, then the same calls again


async def test_a_caller_cancelled_while_its_script_is_reloaded_leaves_the_rest_answered(
    redis_client: redis.asyncio.Redis,
) -> None:
    batcher = ScriptBatcher(redis_client)
    incr = redis_client.register_script(INCR)  # not loaded: the first pipeline fails
    dropped = batcher.call(incr, ["dropped"], [])
    kept = batcher.call(incr, ["kept"], [])
    await asyncio.sleep(0)  # the pipeline goes out
    await asyncio.sleep(0)
    dropped.cancel()
    assert await kept == 1
    assert dropped.cancelled()
    assert await redis_client.get("dropped") is None  # not sent again once cancelled


async def test_a_failed_pipeline_fails_its_calls_and_the_next_one_still_goes(
    redis_client: redis.asyncio.Redis,
) -> None:
    broken = redis.asyncio.Redis(
        unix_socket_path="/nonexistent/redis.sock", retry=Retry(NoBackoff(), 0)
    )
    batcher = ScriptBatcher(broken)
    echo = broken.register_script(ECHO)
    calls = [batcher.call(echo, [], [str(i)]) for i in range(3)]
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert all(isinstance(r, OSError | RedisConnectionError) for r in results)
    batcher.client = redis_client  # Redis reachable again: the next calls go through
    assert await batcher.call(echo, [], ["after"]) == b"after"
    await broken.aclose()


async def test_replies_that_come_too_late_are_never_read_as_another_calls(
    redis_server: EmbeddedRedis,
) -> None:
    """A round trip whose replies do not come within the connection's time limit (here
    a WAIT for a replica this Redis does not have, which holds back only this
    connection) fails its calls (redis-py's retries off) and drops the connection: the
    next calls, on the pool's only connection, read their own replies, not the WAIT's."""
    pool = redis.asyncio.BlockingConnectionPool.from_url(
        redis_server.url, max_connections=1, socket_timeout=0.3, retry=Retry(NoBackoff(), 0)
    )
    client = redis.asyncio.Redis(connection_pool=pool)
    batcher = ScriptBatcher(client, replication=Replication(replicas=1, timeout_ms=3_000))
    echo = await _loaded(client, ECHO)
    late = [batcher.call(echo, [], ["late"], durable=True), batcher.call(echo, [], ["too"])]
    results = await asyncio.gather(*late, return_exceptions=True)
    assert all(isinstance(r, RedisTimeoutError) for r in results), results
    assert await batcher.call(echo, [], ["mine"]) == b"mine"
    assert await batcher.call(echo, [], ["and mine"]) == b"and mine"
    await client.aclose()
    await pool.aclose()


async def test_a_call_cancelled_before_its_pipeline_goes_never_runs(
    redis_client: redis.asyncio.Redis,
) -> None:
    batcher = ScriptBatcher(redis_client)
    slow = await _loaded(redis_client, SLOW)
    incr = await _loaded(redis_client, INCR)
    first = batcher.call(slow, [], [3_000_000])
    await asyncio.sleep(0)  # in flight: the next calls wait for it
    dropped = batcher.call(incr, ["dropped"], [])
    kept = batcher.call(incr, ["kept"], [])
    dropped.cancel()
    assert await first == 3_000_000
    assert await kept == 1
    assert dropped.cancelled()
    assert await redis_client.get("dropped") is None
    assert batcher.pipelines == 2


async def test_a_primary_without_replicas_acknowledges_alone_and_stops_waiting(
    redis_server: EmbeddedRedis,
) -> None:
    """With replication asked for, a durable pipeline ends with one WAIT; on a Redis
    with no replica it falls short, the writes count as a lone Redis's, and the next
    pipelines go without a WAIT that could only time out. (One Redis even in the
    cluster run: a cluster's batcher takes no replication, see the next test.)"""
    redis_client = redis_server.client()
    try:
        await redis_client.delete("pg:test:n")
        batcher = ScriptBatcher(redis_client, replication=Replication(1, 100))
        incr = await _loaded(redis_client, INCR)
        results = await asyncio.gather(
            *(batcher.call(incr, ["pg:test:n"], [], durable=True) for _ in range(3))
        )
        assert sorted(results) == [1, 2, 3]
        assert batcher.waits == 1  # one WAIT for the pipeline, not one per call
        assert await batcher.call(incr, ["pg:test:n"], [], durable=True) == 4
        assert batcher.waits == 1  # alone: not asked to wait again
        assert batcher.unreplicated == 0
        # Calls that are not durable never wait.
        plain = ScriptBatcher(redis_client, replication=Replication(1, 100))
        assert await plain.call(incr, ["pg:test:n"], []) == 5
        assert plain.waits == 0
    finally:
        await redis_client.aclose()


async def test_a_cluster_client_takes_no_replication() -> None:
    """A ``WAIT`` covers one connection's writes to one server, and a cluster's pipeline
    writes to several nodes: a batcher on a cluster refuses to wait for replicas (as the
    server refuses ``--redis-replicas`` there) rather than acknowledge writes one
    ``WAIT`` never covered, also when told so after it was made. Unconnected: refused
    before any I/O, in either run."""
    # Typed as the stores take a cluster's client (tests/conftest.py).
    cluster = cast(redis.asyncio.Redis, redis.asyncio.RedisCluster(host="127.0.0.1", port=1))
    with pytest.raises(ValueError, match="one Redis, not a cluster"):
        ScriptBatcher(cluster, replication=Replication(1, 100))
    batcher = ScriptBatcher(cluster)  # without replication, a cluster is fine
    batcher.replication = Replication(1, 100)  # set afterwards: refused at the call
    with pytest.raises(ValueError, match="one Redis, not a cluster"):
        await batcher.call(cluster.register_script(ECHO), [], ["x"], durable=True)


async def test_a_call_made_at_its_turn_goes_in_the_very_next_pipeline(
    redis_client: redis.asyncio.Redis,
) -> None:
    """With nothing in flight a call goes at once (no turn to wait for); with a
    pipeline in flight, the turn comes when its replies are in, and the calls made
    then join the ones made meanwhile in the next pipeline, not in one after it. A
    cancelled turn leaves the others'."""
    batcher = ScriptBatcher(redis_client)
    slow = await _loaded(redis_client, SLOW)
    echo = await _loaded(redis_client, ECHO)
    assert batcher.turn() is None
    first = batcher.call(slow, [], [3_000_000])
    await asyncio.sleep(0)  # the loop's next pass sends it
    assert batcher.pipelines == 1
    assert not first.done()  # its pipeline is in flight (the slow script runs)
    dropped, turn = batcher.turn(), batcher.turn()
    assert dropped is not None
    assert turn is not None
    dropped.cancel()
    meanwhile = batcher.call(echo, [], ["meanwhile"])

    async def at_its_turn() -> object:
        assert turn is not None
        await turn
        assert first.done()  # the turn comes once the pipeline in flight is answered
        return await batcher.call(echo, [], ["at its turn"])

    assert await at_its_turn() == b"at its turn"
    assert await meanwhile == b"meanwhile"
    assert batcher.pipelines == 2  # both in the second pipeline


async def test_a_round_trip_writes_without_wait_for(
    redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a time limit on the connection, redis-py writes through
    ``asyncio.wait_for``: a task per write on Python 3.11, one that may also swallow a
    cancellation (server/tasks.py). The batcher's round trip keeps the limit itself."""
    pool = redis.asyncio.BlockingConnectionPool.from_url(
        redis_server.url, max_connections=1, socket_timeout=5.0
    )
    client = redis.asyncio.Redis(connection_pool=pool)
    try:
        batcher = ScriptBatcher(client)
        echo = await _loaded(client, ECHO)
        assert await batcher.call(echo, [], ["warm"]) == b"warm"  # connected
        waits: list[object] = []
        real = asyncio.wait_for

        async def counted(aw: Any, limit: float | None) -> Any:
            waits.append(aw)
            return await real(aw, limit)

        # redis-py calls it positionally, as asyncio.wait_for(coroutine, seconds).
        monkeypatch.setattr(asyncio, "wait_for", counted)
        assert await client.ping()  # the counting sees redis-py's own commands' writes
        seen = len(waits)
        assert seen > 0
        assert await batcher.call(echo, [], ["one"]) == b"one"
        assert len(waits) == seen
    finally:
        await client.aclose()
        await pool.aclose()


async def _all_free(pool: redis.asyncio.BlockingConnectionPool, n: int) -> None:
    """Takes ``n`` connections from ``pool`` at once (it waits 1 s at most for each:
    ConnectionError if one is still out), then gives them back."""
    conns: list[Any] = []
    try:
        for _ in range(n):
            conns.append(await pool.get_connection())  # type: ignore[no-untyped-call]  # noqa: PERF401 -- each given back even if a later one fails
    finally:
        for conn in conns:
            await pool.release(conn)


@contextlib.asynccontextmanager
async def _pooled(
    url: str, max_connections: int, **options: Any
) -> AsyncIterator[tuple[redis.asyncio.BlockingConnectionPool, ScriptBatcher, AsyncScript]]:
    """A batcher on a client of its own bounded pool (a second's wait for a connection,
    redis-py's retries off), and ECHO loaded: the pool, the batcher, the script."""
    pool = redis.asyncio.BlockingConnectionPool.from_url(
        url, max_connections=max_connections, timeout=1, retry=Retry(NoBackoff(), 0), **options
    )
    client = redis.asyncio.Redis(connection_pool=pool)
    try:
        yield pool, ScriptBatcher(client), await _loaded(client, ECHO)
    finally:
        await client.aclose()
        await pool.aclose()


async def test_a_connection_is_kept_between_round_trips_when_the_pool_has_more(
    redis_server: EmbeddedRedis,
) -> None:
    """Taking a connection from redis-py's pool and giving it back cost 31 µs a round
    trip: the batcher keeps its own, and gives it back when its client changes."""
    other = redis_server.client()
    try:
        async with _pooled(redis_server.url, 3) as (pool, batcher, echo):
            taken = counting_gets(pool)
            for i in range(5):
                assert await batcher.call(echo, [], [str(i)]) == str(i).encode()
            assert len(taken) == 1
            with pytest.raises(RedisConnectionError):  # one is with the batcher
                await _all_free(pool, 3)
            batcher.client = other
            assert await batcher.call(echo, [], ["elsewhere"]) == b"elsewhere"
            await _all_free(pool, 3)  # the kept one went back to its own pool
    finally:
        await other.aclose()


async def test_a_pool_with_no_connection_to_spare_gets_each_one_back(
    redis_server: EmbeddedRedis,
) -> None:
    """With one connection kept, a pool of two (the leases' and the node's heartbeat)
    would have one left for everything else: the batcher keeps none of such a pool."""
    async with _pooled(redis_server.url, 2) as (pool, batcher, echo):
        taken = counting_gets(pool)
        for i in range(3):
            assert await batcher.call(echo, [], [str(i)]) == str(i).encode()
        assert len(taken) == 3
        await _all_free(pool, 2)


async def test_a_kept_connection_that_fails_goes_back_to_the_pool(
    redis_server: EmbeddedRedis,
) -> None:
    """A round trip whose replies are late drops its connection, kept or not: the pool
    has it back (closed), and the next call reads its own reply on a fresh one."""
    async with _pooled(redis_server.url, 3, socket_timeout=0.3) as (pool, batcher, echo):
        assert await batcher.call(echo, [], ["kept"]) == b"kept"
        batcher.replication = Replication(replicas=1, timeout_ms=3_000)  # a WAIT, too long
        with pytest.raises(RedisTimeoutError):
            await batcher.call(echo, [], ["late"], durable=True)
        await _all_free(pool, 3)
        batcher.replication = None
        assert await batcher.call(echo, [], ["mine"]) == b"mine"


async def test_a_kept_connection_redis_closed_is_not_used_again(tmp_path: Path) -> None:
    """A connection Redis closed while the batcher kept it (a restart, a ``CLIENT
    KILL``) is found closed before use, as the pool finds one it hands out: the call
    goes on a fresh one (redis-py's retries off, so a write on the dead one would fail).
    A Redis of its own: the kill closes every connection but the killer's."""
    async with EmbeddedRedis(tmp_path) as own, _pooled(own.url, 3) as (pool, batcher, echo):
        killer = own.client()
        try:
            assert await batcher.call(echo, [], ["kept"]) == b"kept"
            taken = counting_gets(pool)
            assert await killer.client_kill_filter(_type="normal", skipme=True) == 1
            await asyncio.sleep(0.05)  # its end of file reaches the connection
            assert await batcher.call(echo, [], ["after"]) == b"after"
            assert len(taken) == 1  # a fresh one
            await _all_free(pool, 2)  # the dead one went back; the fresh one is kept
        finally:
            await killer.aclose()


async def test_a_time_limit_changed_during_a_round_trip_stays_changed(
    redis_server: EmbeddedRedis,
) -> None:
    """redis-py relaxes a connection's time limit when Redis announces a maintenance
    (its parser hands the notice to a handler, inside ``read_response``, which calls
    ``set_tmp_settings``), and puts the original back when it ends. The round trip,
    which lifts the limit while it reads, keeps either change, not the limit it found.
    (The handler's change is made here where redis-py makes it, before a reply.)"""
    async with _pooled(redis_server.url, 3, socket_timeout=2.0) as (_pool, batcher, echo):
        assert await batcher.call(echo, [], ["kept"]) == b"kept"
        conn = batcher._held[0]
        read = conn.read_response

        async def call_with_a_notice(change: Callable[[], None], arg: str) -> Any:
            async def read_after_the_notice(*args: Any, **kwargs: Any) -> Any:
                change()
                return await read(*args, **kwargs)

            conn.read_response = read_after_the_notice  # type: ignore[method-assign]
            try:
                return await batcher.call(echo, [], [arg])
            finally:
                conn.read_response = read  # type: ignore[method-assign]

        relax = functools.partial(conn.set_tmp_settings, tmp_relaxed_timeout=30.0)
        assert await call_with_a_notice(relax, "relaxed") == b"relaxed"
        assert batcher._held == [conn]
        assert conn.socket_timeout == 30.0
        assert await batcher.call(echo, [], ["after"]) == b"after"
        assert conn.socket_timeout == 30.0  # until the maintenance ends

        def end() -> None:  # what reset_tmp_settings does with the original limit
            conn.socket_timeout = 2.0

        assert await call_with_a_notice(end, "ended") == b"ended"
        assert conn.socket_timeout == 2.0
