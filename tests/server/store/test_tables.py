"""A table as stored: the state of a table stored whole, before parts, until its first
commit in parts replaces it."""

from __future__ import annotations

import pytest
import redis.asyncio

from server.store.tables.store import TableStore
from tests.server.store.helpers import T, lease, next_commit


@pytest.mark.asyncio
async def test_a_table_stored_whole_loads_and_its_first_commit_in_parts_replaces_it(
    store: TableStore, redis_client: redis.asyncio.Redis
) -> None:
    """Before parts, the hash held the whole state in ``s``, written as here."""
    key = store.keys.table_state(T)
    await redis_client.hset(key, mapping={"v": 7, "s": b"whole", "seq": 12, "tok": 3})
    stored = await store.load(T)
    assert stored is not None
    assert (stored.version, stored.parts, stored.whole) == (7, {}, b"whole")
    assert (stored.last_seq, stored.token) == (12, 3)
    token = await lease(store)
    every = {"h": b"h8", "c": b"c", "p0": b"p"}
    assert (await next_commit(store, token, after=7, state=every)).ok
    stored = await store.load(T)
    assert stored is not None
    assert (stored.version, stored.parts, stored.whole) == (8, every, None)
    assert not await redis_client.hexists(key, "s")
