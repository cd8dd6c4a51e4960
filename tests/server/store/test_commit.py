"""The commit against a real Redis (or Redis Cluster): fencing, versions, retries,
parts, applied keys, balances and races."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable

import pytest
import redis.asyncio

from server.store.archiving.records import LedgerRow, ledger_players
from server.store.chips.records import LOG, ClientRequest, Delivery, Incoming, pack_logs, read_logs
from server.store.client.replies import stream_entries
from server.store.errors import StoreError
from server.store.keys import APPLIED_TTL_MS, APPLIED_WINDOW, REQUEST_TTL_MS, Keys
from server.store.players.accounts import AccountStore
from server.store.tables.commit import new_commit_id
from server.store.tables.commit_args import (
    CommitResult,
    CommitStatus,
    Write,
    plan_transfers,
    read_reply,
    script_args,
    script_keys,
)
from server.store.tables.store import TableStore
from tests.helpers import until
from tests.server.store.helpers import (
    T,
    bet,
    buy_in,
    cash_out,
    expired,
    lease,
    ledger_len,
    next_commit,
)


@pytest.mark.asyncio
async def test_stale_owner_commit_is_refused(store: TableStore) -> None:
    old = await store.leases.acquire(T, "node-a", 50)
    assert old is not None
    assert (await next_commit(store, old, state={"h": b"s1"})).ok
    # node-a stalls until its lease expires; node-b takes over.
    await until(lambda: expired(store), what="the lease to expire")
    new = await store.leases.acquire(T, "node-b", 10_000)
    assert new == old + 1
    result = await next_commit(store, old, after=1, state={"h": b"old"})
    assert result.status is CommitStatus.STALE_LEASE
    assert result.stale
    assert result.lease_token == new
    assert (await next_commit(store, new, after=1, state={"h": b"new"})).ok
    stored = await store.load(T)
    assert stored is not None
    assert (stored.version, stored.parts, stored.token) == (2, {"h": b"new"}, new)


@pytest.mark.asyncio
async def test_the_fence_spares_a_read_of_the_lease_and_is_kept_until_the_table_is_taken(
    store: TableStore, redis_client: redis.asyncio.Redis, redis_cluster: object
) -> None:
    """A commit by the table's last taker reads no lease (the table hash's fence is its
    token); one whose lease ran out while nobody took the table is stored (nobody
    else wrote); once another takes it, or it was given up, the old token is refused."""
    token = await store.leases.acquire(T, "node-a", 50)
    assert token is not None
    assert await redis_client.hget(store.keys.table_state(T), "f") == str(token).encode()
    assert (await next_commit(store, token)).ok
    before = 0 if redis_cluster else await get_calls(redis_client)
    assert (await next_commit(store, token, after=1)).ok
    if not redis_cluster:  # the lease key's reads, counted on one server
        assert await get_calls(redis_client) == before
    await until(lambda: expired(store), what="the lease to expire")
    assert (await next_commit(store, token, after=2)).ok  # nobody took it: still fenced
    new = await store.leases.acquire(T, "node-b", 10_000)
    assert new == token + 1
    refused = await next_commit(store, token, after=3)
    assert (refused.status, refused.lease_token) == (CommitStatus.STALE_LEASE, new)
    assert await store.leases.release(T, "node-b", new)
    assert (await next_commit(store, new, after=3)).status is CommitStatus.STALE_LEASE


async def get_calls(client: redis.asyncio.Redis) -> int:
    """How many GET commands Redis has run (INFO commandstats, scripts' included)."""
    stats = await client.info("commandstats")
    return int(stats.get("cmdstat_get", {}).get("calls", 0))


@pytest.mark.asyncio
async def test_commit_without_lease_is_refused(store: TableStore) -> None:
    result = await next_commit(store, 1)
    assert result.status is CommitStatus.STALE_LEASE
    assert result.lease_token is None
    assert await store.load(T) is None


@pytest.mark.asyncio
async def test_version_check(store: TableStore) -> None:
    token = await lease(store)
    assert await store.load(T) is None
    assert (await next_commit(store, token, state={"h": b"a"})).ok
    result = await store.commits.write(
        Write(T, token=token, expected_version=0, new_version=2, parts={"h": b"b"})
    )
    assert result.status is CommitStatus.STALE_VERSION
    assert result.stored_version == 1
    stored = await store.load(T)
    assert stored is not None
    assert (stored.version, stored.parts) == (1, {"h": b"a"})
    with pytest.raises(ValueError, match="above"):
        await store.commits.write(
            Write(T, token=token, expected_version=1, new_version=1, parts={"h": b"c"})
        )


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
async def test_a_commit_writes_its_parts_over_the_stored_ones(
    store: TableStore, redis_client: redis.asyncio.Redis
) -> None:
    token = await lease(store)
    first = {"h": b"h1", "c": b"config", "p0": b"ann", "p1": b"bob"}
    assert (await next_commit(store, token, state=first)).ok
    assert (await next_commit(store, token, after=1, state={"h": b"h2", "p1": b"bob2"})).ok
    stored = await store.load(T)
    assert stored is not None
    assert stored.version == 2
    assert stored.parts == {"h": b"h2", "c": b"config", "p0": b"ann", "p1": b"bob2"}
    assert stored.whole is None
    # Namespaced fields beside the store's own: a part named like one of them is safe.
    fields = set(await redis_client.hkeys(store.keys.table_state(T)))
    assert fields == {b"v", b"seq", b"tok", b"cid", b"f", b"s.h", b"s.c", b"s.p0", b"s.p1"}
    clash = {"v": b"x", "seq": b"y", "tok": b"z", "cid": b"c", "s": b"w"}
    assert (await next_commit(store, token, after=2, state=clash)).ok
    stored = await store.load(T)
    assert stored is not None
    assert (stored.version, stored.token, stored.whole) == (3, token, None)
    assert stored.parts == {"h": b"h2", "c": b"config", "p0": b"ann", "p1": b"bob2", **clash}
    with pytest.raises(ValueError, match="at least one part"):
        await next_commit(store, token, after=3, state={})
    with pytest.raises(ValueError, match="with a name"):
        await next_commit(store, token, after=3, state={"": b"x"})


@pytest.mark.asyncio
async def test_a_duplicate_is_the_same_version_token_and_commit(
    store: TableStore, accounts: AccountStore
) -> None:
    """Only a retry of the very commit stored is told DUPLICATE (its entries were applied
    then); another commit of that version is not, even with the same parts."""
    await accounts.credit("ann", 100, "c1")
    token = await lease(store)
    entries = [buy_in("k", "ann", 10)]
    assert (await next_commit(store, token, state={"h": b"h1", "p0": b"x"})).ok
    parts = {"h": b"h2", "p1": b"y"}
    first = await next_commit(store, token, after=1, state=parts, entries=entries, commit_id="a")
    assert first.ok
    retry = await next_commit(store, token, after=1, state=parts, entries=entries, commit_id="a")
    assert retry.status is CommitStatus.DUPLICATE
    assert retry.accounts == {"ann": 90}
    # Another commit of the same version, whatever its parts (fewer, equal, other), is
    # not a retry: its entries, request and parts would be lost if it were told so.
    for other in ({"p1": b"y"}, parts, {"h": b"h2", "p1": b"z"}):
        for commit_id in ("b", None):
            result = await next_commit(
                store, token, after=1, state=other, entries=entries, commit_id=commit_id
            )
            assert result.status is CommitStatus.STALE_VERSION
    # The same commit id from the next owner is its own commit, not a retry of this one.
    assert await store.leases.release(T, "n", token)
    later = await lease(store)
    result = await next_commit(store, later, after=1, state=parts, entries=entries, commit_id="a")
    assert result.status is CommitStatus.STALE_VERSION
    stored = await store.load(T)
    assert stored is not None
    assert (stored.version, stored.token) == (2, token)
    assert stored.parts == {"h": b"h2", "p0": b"x", "p1": b"y"}
    assert await accounts.balance("ann") == 90


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


@pytest.mark.asyncio
async def test_a_commit_returns_the_balances_it_leaves(
    store: TableStore, accounts: AccountStore
) -> None:
    """The balances come from inside the commit, so a reply built from them is never
    stale: a credit that lands before a retry shows in the DUPLICATE's balances."""
    await accounts.credit("ann", 1000, "c-ann")
    await accounts.credit("bob", 50, "c-bob")
    token = await lease(store)
    entries = [buy_in("k1", "ann", 300), cash_out("k2", "bob", 20), bet("k3", "cid", 5)]
    first = await next_commit(store, token, state={"h": b"s1"}, entries=entries, commit_id="c1")
    assert first.status is CommitStatus.OK
    assert first.accounts == {"ann": 700, "bob": 70}  # cid's bet touches no account
    await accounts.credit("ann", 5, "c-ann-2")
    again = await next_commit(store, token, state={"h": b"s1"}, entries=entries, commit_id="c1")
    assert again.status is CommitStatus.DUPLICATE
    assert again.accounts == {"ann": 705, "bob": 70}
    # An entry already applied moves nothing, but its account's balance is still told.
    later = await next_commit(store, token, after=1, state={"h": b"s2"}, entries=entries[:1])
    assert (later.applied, later.skipped) == (0, 1)
    assert later.accounts == {"ann": 705}
    assert await accounts.balance("ann") == 705


@pytest.mark.asyncio
async def test_insufficient_balance_writes_nothing(
    store: TableStore, accounts: AccountStore, redis_client: redis.asyncio.Redis
) -> None:
    await accounts.credit("ann", 100, "c-ann")
    await accounts.credit("bob", 100, "c-bob")
    token = await lease(store)
    alone = await next_commit(store, token, entries=[buy_in("b", "bob", 101)])
    assert alone.status is CommitStatus.INSUFFICIENT
    assert (alone.player, alone.balance, alone.needed) == ("bob", 100, 101)
    assert await ledger_len(redis_client) == 2  # the two credits only
    result = await next_commit(
        store,
        token,
        entries=[buy_in("a", "ann", 60), buy_in("b", "bob", 101)],
        events=[(1, b"e1")],
        logs=[("ann", b"log")],
    )
    assert result.status is CommitStatus.INSUFFICIENT
    assert (result.player, result.balance, result.needed) == ("bob", 100, 101)
    assert await store.load(T) is None
    assert await accounts.balance("ann") == 100
    # Each account reserves its chips on its own: ann's, reserved before bob's was
    # refused, went back (the reservation and its refund are in her ledger).
    assert await redis_client.xlen(store.keys.table_ledger(T)) == 0
    assert await redis_client.xlen(store.keys.account_ledger("ann")) == 3
    assert await store.replay.events_since(T, 0) == []
    assert (await store.history.page("ann")).items == []
    assert not await store.transfers.pending(T)
    # Nothing was marked applied: the same keys go through once affordable.
    ok = await next_commit(store, token, entries=[buy_in("a", "ann", 60), buy_in("b", "bob", 100)])
    assert ok.applied == 2
    assert ok.accounts == {"ann": 40, "bob": 0}


@pytest.mark.asyncio
async def test_each_account_pays_on_its_own_and_a_cash_out_creates_the_account(
    store: TableStore, accounts: AccountStore
) -> None:
    """Chips from an account are reserved before the commit, chips to it delivered
    after: a commit paying an account does not fund that account's buy-in."""
    await accounts.credit("ann", 10, "c1")
    token = await lease(store)
    both = [cash_out("x", "ann", 50), buy_in("y", "ann", 60), cash_out("z", "cid", 7)]
    refused = await next_commit(store, token, entries=both)
    assert refused.status is CommitStatus.INSUFFICIENT
    assert (refused.player, refused.balance, refused.needed) == ("ann", 10, 60)
    result = await next_commit(store, token, entries=[cash_out("x", "ann", 50), both[2]])
    assert result.status is CommitStatus.OK
    assert result.accounts == {"ann": 60, "cid": 7}
    assert await accounts.balance("ann") == 60
    assert await accounts.balance("cid") == 7
    assert ("cid", 7) in await accounts.list_accounts()


@pytest.mark.asyncio
async def test_racing_commits_for_the_same_chips(
    new_client: Callable[[], redis.asyncio.Redis], accounts: AccountStore
) -> None:
    """Two tables (two owners, two connections) buy in with the same account at once."""
    await accounts.credit("ann", 100, "c1")
    clients = [new_client(), new_client()]
    try:
        stores = [TableStore(c) for c in clients]
        tokens = [await s.leases.acquire(f"t{i}", f"n{i}", 10_000) for i, s in enumerate(stores)]

        async def buy(i: int) -> CommitStatus:
            token = tokens[i]
            assert token is not None
            entries = [buy_in(f"t{i}:buyin", "ann", 70)]
            result = await next_commit(stores[i], token, table=f"t{i}", entries=entries)
            return result.status

        for _ in range(20):
            outcomes = await asyncio.gather(buy(0), buy(1))
            assert sorted(o.value for o in outcomes) == ["insufficient", "ok"]
            assert await accounts.balance("ann") == 30
            # Reset for the next round of the race.
            for i, s in enumerate(stores):
                await s.drain()
                await s.redis.delete(s.keys.table_state(f"t{i}"))
                await s.redis.delete(s.keys.applied(f"t{i}", 0))
            await s.redis.hset(s.keys.account("ann"), "balance", 100)
    finally:
        for c in clients:
            await c.aclose()


@pytest.mark.asyncio
async def test_racing_commits_same_table_one_wins(
    new_client: Callable[[], redis.asyncio.Redis], store: TableStore
) -> None:
    # ``store`` only to start from a flushed database.
    clients = [new_client(), new_client()]
    try:
        stores = [TableStore(c) for c in clients]
        token = await stores[0].leases.acquire(T, "n", 10_000)
        assert token is not None
        results = await asyncio.gather(
            *(next_commit(s, token, state={"h": bytes([i])}) for i, s in enumerate(stores))
        )
        statuses = sorted(r.status.value for r in results)
        assert statuses == ["ok", "stale_version"]
    finally:
        for c in clients:
            await c.aclose()


@pytest.mark.asyncio
async def test_player_names_are_checked_before_they_become_keys(store: TableStore) -> None:
    token = await lease(store)
    with pytest.raises(ValueError, match="player name"):
        await next_commit(store, token, entries=[buy_in("k", "x:y", 1)])
    with pytest.raises(ValueError, match="player name"):
        await next_commit(store, token, logs=[("{bad}", b"r")])
    assert await store.load(T) is None


def test_the_steps_lay_out_what_the_script_reads() -> None:
    """The commit's keys and arguments in the order of the ``COMMIT`` script's header
    (server/store/lua/tables/commit.lua): every key in the table's slot, 8 arguments per entry
    with its transfer (an id for chips from or to an account, the packed delivery for
    chips to one), 2 for the game logs (one entry, named by the first one's transfer);
    and its reply read back."""
    request = ClientRequest("bob", "s:1", b"fp", b"memo")
    entries = [buy_in("k1", "ann", 5), bet("k2", "ann", 3), cash_out("k3", "bob", 2)]
    logs = [("ann", b"log")]
    w = Write(
        "t",
        token=3,
        expected_version=APPLIED_WINDOW,
        new_version=APPLIED_WINDOW + 1,
        parts={"h": b"H"},
        entries=entries,
        events=[(9, b"e")],
        logs=logs,
        request=request,
    )
    plan = plan_transfers(w, "c")
    ids = [f"t.{APPLIED_WINDOW + 1}.{i}.3.c" for i in range(3)]
    assert plan.incoming == [Incoming(ids[0], "ann", 5, "buy_in", "k1")]
    paid = Delivery(ids[1], "bob", "cash_out", 2, "k3")
    assert plan.out == [paid]
    assert plan.logs == [Delivery(ids[2], "ann", LOG, record=b"log")]
    assert plan.payout == ids[1]  # the requester's chips out
    k = Keys("x:")
    names = script_keys(k, "t", APPLIED_WINDOW + 1, request)
    assert names == [
        k.table_lease("t"),
        k.table_state("t"),
        k.table_events("t"),
        k.applied("t", 1),
        k.applied("t", 0),
        k.applied("t", -1),
        k.table_ledger("t"),
        k.transfers_in("t"),
        k.transfers_out("t"),
        k.logs_out("t"),
        k.table_request("t", "bob", "s:1"),
    ]
    assert all("{t}" in name for name in names)  # one hash tag: one slot
    args = script_args(w, plan, account=None, caps=(5, 6), commit_id="c", now_ms=1_700_000_000_000)
    header = [3, APPLIED_WINDOW, APPLIED_WINDOW + 1, 1, "t", 5, 6, "", APPLIED_TTL_MS]
    header += [3, 1, 1, b"fp", b"memo", REQUEST_TTL_MS, "", ids[1], "c", "", 1]
    header += [1_700_000_000_000, "1"]  # version w + 1: the window's first half
    assert args == [
        *header,
        *("k1", "buy_in", "ann", 5, "account", "table", ids[0], b""),
        *("k2", "bet", "ann", 3, "table", "held", "", b""),
        *("k3", "cash_out", "bob", 2, "table", "account", ids[1], paid.pack()),
        *(9, b"e"),
        *(ids[2], pack_logs(plan.logs)),
        *("s.h", b"H"),
    ]
    assert read_logs(ids[2], pack_logs(plan.logs)) == plan.logs
    assert read_logs(ids[2], plan.logs[0].pack()) == plan.logs  # as kept before
    ok = read_reply("t", [b"OK", 3, 0, ids[0].encode()])
    assert ok == CommitResult(CommitStatus.OK, applied=3, taken=(ids[0],))
    with pytest.raises(StoreError, match="after seq 4"):
        read_reply("t", [b"BAD_SEQ", b"4"])
    with pytest.raises(StoreError, match="not open"):
        read_reply("t", [b"VOIDED", b"x"])


@pytest.mark.asyncio
async def test_a_commits_ledger_entries_are_packed_and_read_as_named_ones(
    store: TableStore, accounts: AccountStore, redis_client: redis.asyncio.Redis
) -> None:
    """A commit writes each ledger entry as one msgpack field; it reads back as the
    same row as an entry of named fields (as earlier versions wrote) would."""
    await accounts.credit("ann", 1000, "c1")
    token = await lease(store)
    entries = [buy_in("t1:r0:ann:buyin", "ann", 300), bet("t1:r1:ann:bet", "ann", 50)]
    assert (await next_commit(store, token, entries=entries)).ok
    stream = store.keys.table_ledger(T)
    written = stream_entries(await redis_client.xrange(stream))
    assert [set(fields) for _, fields in written] == [{"m"}, {"m"}]
    rows = [LedgerRow.from_fields(stream, i, f) for i, f in written]
    assert [(r.key, r.kind, r.player, r.amount, r.source, r.dest, r.table_id) for r in rows] == [
        ("t1:r0:ann:buyin", "buy_in", "ann", 300, "account", "table", T),
        ("t1:r1:ann:bet", "bet", "ann", 50, "table", "held", T),
    ]
    xfer = json.loads(rows[0].extra)["xfer"]
    assert xfer.startswith(f"{T}.1.0.{token}.")
    assert rows[1].extra == ""
    # The same entry written with named fields reads as the same row.
    named = {
        "key": "t1:r0:ann:buyin", "kind": "buy_in", "player": "ann", "amount": "300",
        "source": "account", "dest": "table", "table": T, "xfer": xfer,
    }  # fmt: skip
    as_named = LedgerRow.from_fields(
        stream, written[0][0], {k: v.encode() for k, v in named.items()}
    )
    assert as_named == rows[0]
    # What the archive notes of them, read without rows, is what the rows say, whichever
    # way an entry was written (named fields, or without a player: the house's).
    await redis_client.xadd(stream, {k: v.encode() for k, v in {**named, "player": "bob"}.items()})
    await redis_client.xadd(stream, {"key": b"t1:r2:house", "kind": b"fee", "amount": b"1"})
    reply = await redis_client.xrange(stream)
    every = [LedgerRow.from_fields(stream, i, f) for i, f in stream_entries(reply)]
    assert ledger_players(reply) == ({r.player for r in every}, every[-1].entry_id, 4)
    assert ledger_players(reply) == ({"ann", "bob", ""}, every[-1].entry_id, 4)
    assert ledger_players(await redis_client.xrange(stream, count=1)) == (
        {"ann"},
        every[0].entry_id,
        1,
    )
    assert ledger_players([]) == (set(), None, 0)


def test_commit_ids_are_never_drawn_twice_in_a_process_nor_across_processes() -> None:
    """A commit id is a per-process random prefix and a count: a process never gives
    one twice, and two processes start from different prefixes."""
    ids = [new_commit_id() for _ in range(10_000)]
    assert len(set(ids)) == len(ids)
    draw = [
        sys.executable,
        "-c",
        "from server.store.tables.commit import new_commit_id as n; print(n())",
    ]
    firsts = {subprocess.run(draw, capture_output=True, text=True, check=True).stdout for _ in "ab"}
    assert len(firsts) == 2
