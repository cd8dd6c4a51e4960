"""The commit's applied keys against a real Redis (or Redis Cluster): a ledger entry is
applied once, across retries, a commit's own duplicates and window boundaries."""

from __future__ import annotations

import pytest
import redis.asyncio

from server.store.keys import APPLIED_TTL_MS, APPLIED_WINDOW
from server.store.players.accounts import AccountStore
from server.store.tables.commit_args import CommitStatus, Write
from server.store.tables.store import TableStore
from tests.server.store.helpers import T, bet, buy_in, lease, ledger_len, next_commit


@pytest.mark.asyncio
async def test_retried_commit_pays_once(
    store: TableStore, accounts: AccountStore, redis_client: redis.asyncio.Redis
) -> None:
    await accounts.credit("ann", 1000, "c1")
    token = await lease(store)
    entries = [buy_in("t1:r0:ann:buyin", "ann", 300), bet("t1:r1:ann:bet", "ann", 50)]

    async def attempt() -> CommitStatus:
        result = await next_commit(
            store, token, state={"h": b"s1"}, entries=entries, commit_id="c1"
        )
        return result.status

    assert await attempt() is CommitStatus.OK
    assert await attempt() is CommitStatus.DUPLICATE  # the reply was lost; retry
    assert await accounts.balance("ann") == 700
    # The credit, the buy-in's two halves (the account's, the table's) and the bet.
    assert await ledger_len(redis_client) == 4

    # The same keys in a later commit (a state machine replaying them) are skipped.
    later = await next_commit(store, token, after=1, state={"h": b"s2"}, entries=entries)
    assert later.status is CommitStatus.OK
    assert (later.applied, later.skipped) == (0, 2)
    assert await accounts.balance("ann") == 700
    assert await ledger_len(redis_client) == 4


@pytest.mark.asyncio
async def test_applied_keys_survive_a_window_boundary(
    store: TableStore, accounts: AccountStore
) -> None:
    await accounts.credit("ann", 100, "c1")
    token = await lease(store)
    v = APPLIED_WINDOW - 1
    assert (
        await store.commits.write(
            Write(T, token=token, expected_version=0, new_version=v, parts={"h": b"a"})
        )
    ).ok
    first = await next_commit(
        store, token, after=v, state={"h": b"b"}, entries=[buy_in("k", "ann", 10)]
    )
    assert first.applied == 1
    again = await store.commits.write(
        Write(
            T,
            token=token,
            expected_version=v + 1,
            new_version=2 * APPLIED_WINDOW,
            parts={"h": b"c"},
            entries=[buy_in("k", "ann", 10)],
        )
    )
    assert (again.applied, again.skipped) == (0, 1)
    assert await accounts.balance("ann") == 90


@pytest.mark.asyncio
async def test_an_entry_is_refused_again_for_at_least_half_a_window(
    store: TableStore, redis_client: redis.asyncio.Redis
) -> None:
    """The previous bucket is read in a window's first half only: an entry applied by a
    window's last version is still refused half a window later (the least it is kept)."""
    token = await lease(store)
    v = 2 * APPLIED_WINDOW - 2
    assert (
        await store.commits.write(
            Write(T, token=token, expected_version=0, new_version=v, parts={"h": b"a"})
        )
    ).ok
    assert (await next_commit(store, token, after=v, entries=[bet("k", "ann", 1)])).applied == 1
    later = v + 1 + APPLIED_WINDOW // 2 - 1  # the last version of window 2's first half
    assert (
        await store.commits.write(
            Write(T, token=token, expected_version=v + 1, new_version=later, parts={"h": b"b"})
        )
    ).ok
    again = await next_commit(store, token, after=later, entries=[bet("k", "ann", 1)])
    assert (again.applied, again.skipped) == (0, 1)
    assert await redis_client.hkeys(store.keys.applied(T, 1)) == [b"k"]


@pytest.mark.asyncio
async def test_the_bucket_two_windows_back_goes_when_a_window_opens(
    store: TableStore, redis_client: redis.asyncio.Redis
) -> None:
    """The commit of a window's first version deletes the applied bucket two windows
    back (never consulted again); the commits within a window leave it (and write
    nothing for it)."""
    token = await lease(store)
    v = 2 * APPLIED_WINDOW - 2
    assert (
        await store.commits.write(
            Write(T, token=token, expected_version=0, new_version=v, parts={"h": b"a"})
        )
    ).ok
    old = store.keys.applied(T, 0)
    await redis_client.hset(old, "k0", "1-0")
    assert (await next_commit(store, token, after=v, entries=[bet("k1", "ann", 1)])).ok
    assert await redis_client.exists(old) == 1  # version 2w - 1: still window 1
    assert (await next_commit(store, token, after=v + 1, entries=[bet("k2", "ann", 1)])).ok
    assert await redis_client.exists(old) == 0  # version 2w opened window 2
    assert await redis_client.hkeys(store.keys.applied(T, 1)) == [b"k1"]
    assert await redis_client.hkeys(store.keys.applied(T, 2)) == [b"k2"]
    assert 0 < await redis_client.pttl(store.keys.applied(T, 2)) <= APPLIED_TTL_MS


@pytest.mark.asyncio
async def test_a_bucket_gets_its_time_to_live_once_a_window(
    store: TableStore, redis_client: redis.asyncio.Redis
) -> None:
    """The first entry of a window sets its bucket's time to live; the next commits do
    not set it again (one PEXPIRE a window), unless half of it has gone by."""
    token = await lease(store)
    assert (await next_commit(store, token, entries=[bet("k1", "ann", 1)])).ok
    bucket = store.keys.applied(T, 0)
    assert 0 < await redis_client.pttl(bucket) <= APPLIED_TTL_MS
    await redis_client.pexpire(bucket, 60_000)  # as if set long ago
    assert (await next_commit(store, token, after=1, entries=[bet("k2", "ann", 1)])).ok
    assert await redis_client.pttl(bucket) <= 60_000  # not set again
    assert await redis_client.hkeys(bucket) == [b"k1", b"k2"]
    # Half the time to live gone by since it was set: set again.
    await redis_client.hset(store.keys.table_state(T), "ab", f"0:{1}")
    assert (await next_commit(store, token, after=2, entries=[bet("k3", "ann", 1)])).ok
    assert 60_000 < await redis_client.pttl(bucket) <= APPLIED_TTL_MS


@pytest.mark.asyncio
async def test_duplicate_key_within_one_commit_is_applied_once(
    store: TableStore, accounts: AccountStore
) -> None:
    await accounts.credit("ann", 100, "c1")
    token = await lease(store)
    result = await next_commit(
        store, token, state={"h": b"a"}, entries=[buy_in("k", "ann", 10), buy_in("k", "ann", 10)]
    )
    assert (result.applied, result.skipped) == (1, 1)
    assert await accounts.balance("ann") == 90
