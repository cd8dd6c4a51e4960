"""The replay buffer of a table's events, and the events as published."""

from __future__ import annotations

import pytest
import redis.asyncio

from server.store.errors import StoreError
from server.store.replay import decode_published
from server.store.tables import TableStore
from tests.server.store.helpers import T, bet, lease, next_commit


@pytest.mark.asyncio
async def test_replay_buffer_and_events_since(store: TableStore) -> None:
    token = await lease(store)
    assert await store.events_since(T, 0) == []
    # Two events per commit, 8 in all; the buffer keeps 5.
    for version, seq in enumerate(range(1, 9, 2)):
        result = await next_commit(
            store, token, after=version, events=[(seq, b"e%d" % seq), (seq + 1, b"e%d" % (seq + 1))]
        )
        assert result.ok
    stored = await store.load(T)
    assert stored is not None
    assert stored.last_seq == 8
    assert await store.events_since(T, 8) == []
    assert await store.events_since(T, 6) == [(7, b"e7"), (8, b"e8")]
    assert await store.events_since(T, 3) == [(n, b"e%d" % n) for n in range(4, 9)]
    assert await store.events_since(T, 2) is None  # event 3 is gone: snapshot
    assert await store.events_since(T, 9) is None  # not a seq of this table
    assert await store.events_since(T, -1) is None


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
