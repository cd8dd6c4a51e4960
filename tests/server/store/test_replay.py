"""The replay buffer of a table's events, and the events as published."""

from __future__ import annotations

import pytest
import redis.asyncio

from server.store.errors import StoreError
from server.store.tables.replay import decode_published
from server.store.tables.store import TableStore
from tests.server.store.helpers import T, bet, lease, next_commit


@pytest.mark.asyncio
async def test_replay_buffer_and_events_since(
    store: TableStore, redis_client: redis.asyncio.Redis
) -> None:
    token = await lease(store)
    assert await store.replay.events_since(T, 0) == []
    # Two events per commit, 12 in all, one stream entry a commit; the buffer keeps 5
    # entries, events 3 to 12.
    for version, seq in enumerate(range(1, 13, 2)):
        result = await next_commit(
            store, token, after=version, events=[(seq, b"e%d" % seq), (seq + 1, b"e%d" % (seq + 1))]
        )
        assert result.ok
    stored = await store.load(T)
    assert stored is not None
    assert stored.last_seq == 12
    assert await redis_client.xlen(store.keys.table_events(T)) == 5
    assert await store.replay.events_since(T, 12) == []
    assert await store.replay.events_since(T, 10) == [(11, b"e11"), (12, b"e12")]
    assert await store.replay.events_since(T, 9) == [(10, b"e10"), (11, b"e11"), (12, b"e12")]
    assert await store.replay.events_since(T, 2) == [(n, b"e%d" % n) for n in range(3, 13)]
    assert await store.replay.events_since(T, 1) is None  # event 2 is gone: snapshot
    assert await store.replay.events_since(T, 13) is None  # not a seq of this table
    assert await store.replay.events_since(T, -1) is None


@pytest.mark.asyncio
async def test_events_stored_one_an_entry_by_earlier_versions_replay(
    store: TableStore, redis_client: redis.asyncio.Redis
) -> None:
    """Earlier versions appended each event as an entry of its own: a stream of both
    kinds replays in order."""
    token = await lease(store)
    assert (await next_commit(store, token, events=[(1, b"a"), (2, b"b")])).ok
    events = store.keys.table_events(T)
    for seq in (3, 4):  # as those versions' commits wrote them
        await redis_client.xadd(events, {"e": b"old%d" % seq}, id=f"{seq}-0")
    await redis_client.hset(store.keys.table_state(T), mapping={"seq": 4, "v": 2})
    assert (await next_commit(store, token, after=2, events=[(5, b"c"), (6, b"d")])).ok
    want = [(1, b"a"), (2, b"b"), (3, b"old3"), (4, b"old4"), (5, b"c"), (6, b"d")]
    for after in range(6):
        assert await store.replay.events_since(T, after) == want[after:]


@pytest.mark.asyncio
async def test_events_must_follow_on(store: TableStore) -> None:
    token = await lease(store)
    with pytest.raises(StoreError, match="after seq 0"):
        await next_commit(store, token, events=[(2, b"x")])
    assert await store.load(T) is None
    with pytest.raises(ValueError, match="follow"):
        await next_commit(store, token, events=[(1, b"x"), (3, b"y")])


@pytest.mark.asyncio
async def test_events_below_the_stream_s_top_are_refused_with_nothing_written(
    store: TableStore, redis_client: redis.asyncio.Redis
) -> None:
    """The table's last seq says 0 but its stream holds event 1 (written behind the
    store's back): the commit's first event cannot be appended, and the commit writes
    nothing at all, though its ledger entry comes before in the arguments."""
    token = await lease(store)
    await redis_client.xadd(store.keys.table_events(T), {"e": b"stray"}, id="1-0")
    with pytest.raises(StoreError, match="after seq 0"):
        await next_commit(store, token, events=[(1, b"x")], entries=[bet("k", "ann", 5)])
    assert await store.load(T) is None
    assert await redis_client.xlen(store.keys.table_ledger(T)) == 0
    assert await redis_client.xlen(store.keys.table_events(T)) == 1


@pytest.mark.asyncio
async def test_events_are_published_after_storing(
    store: TableStore, redis_client: redis.asyncio.Redis
) -> None:
    token = await lease(store)
    channel = store.keys.table_channel(T)
    async with redis_client.pubsub() as pubsub:
        await pubsub.subscribe(channel)
        assert (await pubsub.get_message(timeout=1.0)) is not None  # the subscribe reply
        await next_commit(
            store, token, events=[(1, b"hello"), (2, b"\x00bin")], publish_channel=channel
        )
        got: list[tuple[int, bytes]] = []
        while len(got) < 2:
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            assert message is not None
            got.append(decode_published(message["data"]))
    assert got == [(1, b"hello"), (2, b"\x00bin")]
