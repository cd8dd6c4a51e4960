"""Table leases against a real Redis: exclusive, tokens that grow, renewed together, expiring."""

from __future__ import annotations

import pytest
import redis.asyncio

from bench.procs.topology import LocalCluster
from server.store.client.connection import key_slot
from server.store.tables.store import TableStore
from tests.conftest import evalsha_calls
from tests.helpers import until
from tests.server.store.helpers import T, expired


@pytest.mark.asyncio
async def test_lease_is_exclusive_and_tokens_grow(store: TableStore) -> None:
    first = await store.leases.acquire(T, "node-a", 10_000)
    assert first == 1
    assert await store.leases.acquire(T, "node-b", 10_000) is None
    assert await store.leases.holder(T) == (1, "node-a")
    assert not await store.leases.release(T, "node-b", 1)
    assert await store.leases.release(T, "node-a", 1)
    assert await store.leases.holder(T) is None
    assert await store.leases.acquire(T, "node-b", 10_000) == 2


@pytest.mark.asyncio
async def test_many_leases_are_renewed_in_one_call_each_answered(
    store: TableStore, redis_client: redis.asyncio.Redis, redis_cluster: LocalCluster | None
) -> None:
    tables = [f"t{i}" for i in range(50)]
    tokens = [await store.leases.acquire(t, "node-a", 10_000) for t in tables]
    assert all(token is not None for token in tokens)
    assert await store.leases.renew("t0", "node-a", tokens[0] or 0, 20_000)  # script loaded
    before = await evalsha_calls(redis_client)
    pipelines = store.leases.batch.pipelines
    leases = [(t, token or 0) for t, token in zip(tables, tokens, strict=True)]
    leases.insert(3, ("t9", (tokens[9] or 0) + 1))  # a stale token: refused, the rest unharmed
    results = await store.leases.renew_many("node-a", leases, 20_000)
    assert results == [True] * 3 + [False] + [True] * 47
    # One call; on a cluster one per slot (a script touches one), all in one pipeline
    # (one per node, sent together).
    calls = len({key_slot(store.keys.table_lease(t)) for t in tables}) if redis_cluster else 1
    assert await evalsha_calls(redis_client) - before == calls
    assert store.leases.batch.pipelines - pipelines == 1
    assert 10_000 < await redis_client.pttl(store.keys.table_lease("t7")) <= 20_000
    assert await store.leases.renew_many("node-b", leases[:1], 20_000) == [False]  # not its own


@pytest.mark.asyncio
async def test_lease_renewal_and_expiry(store: TableStore) -> None:
    token = await store.leases.acquire(T, "node-a", 80)
    assert token is not None
    assert await store.leases.renew(T, "node-a", token, 80)
    assert not await store.leases.renew(T, "node-a", token + 1, 80)
    await until(lambda: expired(store), what="the lease to expire")
    assert await store.leases.acquire(T, "node-b", 10_000) == token + 1
    assert not await store.leases.renew(T, "node-a", token, 80)  # expired and taken: gone


@pytest.mark.asyncio
async def test_a_lease_renewed_late_is_ours_while_nobody_took_the_table(
    store: TableStore,
) -> None:
    """A busy process's renewal that comes after its lease ran out keeps the table if
    nobody took it since; never once it was given up, or taken by another."""
    token = await store.leases.acquire(T, "node-a", 50)
    assert token is not None
    await until(lambda: expired(store), what="the lease to expire")
    assert await store.leases.renew(T, "node-a", token, 10_000)
    assert await store.leases.holder(T) == (token, "node-a")
    assert await store.leases.ttl_ms(T) > 5_000
    assert not await store.leases.renew(T, "node-b", token, 10_000)  # not its own
    assert await store.leases.release(T, "node-a", token)
    assert not await store.leases.renew(T, "node-a", token, 10_000)  # given up: not back
    assert await store.leases.holder(T) is None
    again = await store.leases.acquire(T, "node-b", 50)
    assert again == token + 1
    await until(lambda: expired(store), what="the lease to expire")
    assert not await store.leases.renew(T, "node-a", token, 10_000)  # an older taking
    assert await store.leases.renew(T, "node-b", again, 10_000)


@pytest.mark.asyncio
async def test_a_lease_given_up_after_it_ran_out_is_not_taken_back_by_a_late_renewal(
    store: TableStore,
) -> None:
    """Giving up a lease that already ran out still deletes its fence: a renewal that
    arrives after it does not bring the lease back to a process no longer hosting the
    table (the other nodes would wait out a whole lease)."""
    token = await store.leases.acquire(T, "node-a", 50)
    assert token is not None
    await until(lambda: expired(store), what="the lease to expire")
    assert not await store.leases.release(T, "node-a", token)  # no longer there
    assert not await store.leases.renew(T, "node-a", token, 10_000)
    assert await store.leases.holder(T) is None
    assert await store.leases.acquire(T, "node-b", 10_000) == token + 1
