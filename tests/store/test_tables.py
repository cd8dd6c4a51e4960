"""Table store against a real Redis: leases, commits, idempotency, races, events, logs."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

import pytest
import redis.asyncio

from server.store.accounts import AccountStore
from server.store.embedded import EmbeddedRedis
from server.store.keys import APPLIED_WINDOW, REQUEST_TTL_MS, Keys
from server.store.tables import (
    ClientRequest,
    CommitResult,
    CommitStatus,
    RequestRecord,
    StoreError,
    TableStore,
    decode_published,
)
from server.table.ledger import Kind, LedgerEntry, Pot
from tests.conftest import evalsha_calls
from tests.server.helpers import until

T = "t1"
PARTS = {"h": b"s"}  # a state in one part: the store does not read them


def buy_in(key: str, player: str, amount: int) -> LedgerEntry:
    return LedgerEntry(key, Kind.BUY_IN, player, amount, Pot.ACCOUNT, Pot.TABLE)


def cash_out(key: str, player: str, amount: int) -> LedgerEntry:
    return LedgerEntry(key, Kind.CASH_OUT, player, amount, Pot.TABLE, Pot.ACCOUNT)


def bet(key: str, player: str, amount: int) -> LedgerEntry:
    return LedgerEntry(key, Kind.BET, player, amount, Pot.TABLE, Pot.HELD)


async def lease(store: TableStore) -> int:
    """The lease of table ``T`` for owner ``n``: its fencing token."""
    token = await store.acquire_lease(T, "n", 10_000)
    assert token is not None
    return token


async def next_commit(
    store: TableStore,
    token: int,
    *,
    after: int = 0,
    state: Mapping[str, bytes] = PARTS,
    entries: Sequence[LedgerEntry] = (),
    events: Sequence[tuple[int, bytes]] = (),
    logs: Sequence[tuple[str, bytes]] = (),
    publish_channel: str | None = None,
    request: ClientRequest | None = None,
    table: str = T,
    commit_id: str | None = None,
) -> CommitResult:
    """``table``'s commit of version ``after + 1`` over ``after`` (0: its first commit)
    under lease ``token``; the rest as :meth:`TableStore.commit` takes it."""
    return await store.commit(
        table,
        token=token,
        expected_version=after,
        new_version=after + 1,
        state=state,
        entries=entries,
        events=events,
        logs=logs,
        publish_channel=publish_channel,
        request=request,
        commit_id=commit_id,
    )


async def expired(store: TableStore) -> bool:
    """Whether table ``T`` has no lease (it expired)."""
    return await store.lease_holder(T) is None


@pytest.fixture
def store(redis_client: redis.asyncio.Redis) -> TableStore:
    return TableStore(redis_client, events_cap=5, log_cap=4)


@pytest.fixture
def accounts(redis_client: redis.asyncio.Redis) -> AccountStore:
    return AccountStore(redis_client)


async def ledger_len(client: redis.asyncio.Redis) -> int:
    return int(await client.xlen(Keys().ledger_stream()))


# --- leases --------------------------------------------------------------------


@pytest.mark.asyncio
async def test_lease_is_exclusive_and_tokens_grow(store: TableStore) -> None:
    first = await store.acquire_lease(T, "node-a", 10_000)
    assert first == 1
    assert await store.acquire_lease(T, "node-b", 10_000) is None
    assert await store.lease_holder(T) == (1, "node-a")
    assert not await store.release_lease(T, "node-b", 1)
    assert await store.release_lease(T, "node-a", 1)
    assert await store.lease_holder(T) is None
    assert await store.acquire_lease(T, "node-b", 10_000) == 2


@pytest.mark.asyncio
async def test_many_leases_are_renewed_in_one_call_each_answered(
    store: TableStore, redis_client: redis.asyncio.Redis
) -> None:
    tables = [f"t{i}" for i in range(50)]
    tokens = [await store.acquire_lease(t, "node-a", 10_000) for t in tables]
    assert all(token is not None for token in tokens)
    assert await store.renew_lease("t0", "node-a", tokens[0] or 0, 20_000)  # script loaded
    before = await evalsha_calls(redis_client)
    leases = [(t, token or 0) for t, token in zip(tables, tokens, strict=True)]
    leases.insert(3, ("t9", (tokens[9] or 0) + 1))  # a stale token: refused, the rest unharmed
    results = await store.renew_leases("node-a", leases, 20_000)
    assert results == [True] * 3 + [False] + [True] * 47
    assert await evalsha_calls(redis_client) - before == 1
    assert 10_000 < await redis_client.pttl(store.keys.table_lease("t7")) <= 20_000
    assert await store.renew_leases("node-b", leases[:1], 20_000) == [False]  # not its own


@pytest.mark.asyncio
async def test_lease_renewal_and_expiry(store: TableStore) -> None:
    token = await store.acquire_lease(T, "node-a", 80)
    assert token is not None
    assert await store.renew_lease(T, "node-a", token, 80)
    assert not await store.renew_lease(T, "node-a", token + 1, 80)
    await until(lambda: expired(store), what="the lease to expire")
    assert not await store.renew_lease(T, "node-a", token, 80)  # expired: gone
    assert await store.acquire_lease(T, "node-b", 10_000) == token + 1


@pytest.mark.asyncio
async def test_stale_owner_commit_is_refused(store: TableStore) -> None:
    old = await store.acquire_lease(T, "node-a", 50)
    assert old is not None
    assert (await next_commit(store, old, state={"h": b"s1"})).ok
    # node-a stalls until its lease expires; node-b takes over.
    await until(lambda: expired(store), what="the lease to expire")
    new = await store.acquire_lease(T, "node-b", 10_000)
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
async def test_commit_without_lease_is_refused(store: TableStore) -> None:
    result = await next_commit(store, 1)
    assert result.status is CommitStatus.STALE_LEASE
    assert result.lease_token is None
    assert await store.load(T) is None


# --- versions and idempotency --------------------------------------------------


@pytest.mark.asyncio
async def test_version_check(store: TableStore) -> None:
    token = await lease(store)
    assert await store.load(T) is None
    assert (await next_commit(store, token, state={"h": b"a"})).ok
    result = await store.commit(
        T, token=token, expected_version=0, new_version=2, state={"h": b"b"}
    )
    assert result.status is CommitStatus.STALE_VERSION
    assert result.stored_version == 1
    stored = await store.load(T)
    assert stored is not None
    assert (stored.version, stored.parts) == (1, {"h": b"a"})
    with pytest.raises(ValueError, match="above"):
        await store.commit(T, token=token, expected_version=1, new_version=1, state={"h": b"c"})


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
    assert await ledger_len(redis_client) == 3  # the credit and the two entries

    # The same keys in a later commit (a state machine replaying them) are skipped.
    later = await next_commit(store, token, after=1, state={"h": b"s2"}, entries=entries)
    assert later.status is CommitStatus.OK
    assert (later.applied, later.skipped) == (0, 2)
    assert await accounts.balance("ann") == 700
    assert await ledger_len(redis_client) == 3


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
    assert fields == {b"v", b"seq", b"tok", b"cid", b"s.h", b"s.c", b"s.p0", b"s.p1"}
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
    assert await store.release_lease(T, "n", token)
    later = await lease(store)
    result = await next_commit(store, later, after=1, state=parts, entries=entries, commit_id="a")
    assert result.status is CommitStatus.STALE_VERSION
    stored = await store.load(T)
    assert stored is not None
    assert (stored.version, stored.token) == (2, token)
    assert stored.parts == {"h": b"h2", "p0": b"x", "p1": b"y"}
    assert await accounts.balance("ann") == 90


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


@pytest.mark.asyncio
async def test_applied_keys_survive_a_window_boundary(
    store: TableStore, accounts: AccountStore
) -> None:
    await accounts.credit("ann", 100, "c1")
    token = await lease(store)
    v = APPLIED_WINDOW - 1
    assert (
        await store.commit(T, token=token, expected_version=0, new_version=v, state={"h": b"a"})
    ).ok
    first = await next_commit(
        store, token, after=v, state={"h": b"b"}, entries=[buy_in("k", "ann", 10)]
    )
    assert first.applied == 1
    again = await store.commit(
        T,
        token=token,
        expected_version=v + 1,
        new_version=2 * APPLIED_WINDOW,
        state={"h": b"c"},
        entries=[buy_in("k", "ann", 10)],
    )
    assert (again.applied, again.skipped) == (0, 1)
    assert await accounts.balance("ann") == 90


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


# --- balances --------------------------------------------------------------------


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
    assert await ledger_len(redis_client) == 2  # the two credits only
    assert await store.events_since(T, 0) == []
    assert (await store.history("ann")).items == []
    # Nothing was marked applied: the same keys go through once affordable.
    ok = await next_commit(store, token, entries=[buy_in("a", "ann", 60), buy_in("b", "bob", 100)])
    assert ok.applied == 2


@pytest.mark.asyncio
async def test_net_change_counts_and_cash_out_creates_account(
    store: TableStore, accounts: AccountStore
) -> None:
    await accounts.credit("ann", 10, "c1")
    token = await lease(store)
    result = await next_commit(
        store,
        token,
        entries=[cash_out("x", "ann", 50), buy_in("y", "ann", 60), cash_out("z", "cid", 7)],
    )
    assert result.status is CommitStatus.OK
    assert await accounts.balance("ann") == 0
    assert await accounts.balance("cid") == 7
    assert ("cid", 7) in await accounts.list_accounts()


@pytest.mark.asyncio
async def test_racing_commits_for_the_same_chips(
    redis_server: EmbeddedRedis, accounts: AccountStore
) -> None:
    """Two tables (two owners, two connections) buy in with the same account at once."""
    await accounts.credit("ann", 100, "c1")
    clients = [redis_server.client(), redis_server.client()]
    try:
        stores = [TableStore(c) for c in clients]
        tokens = [await s.acquire_lease(f"t{i}", f"n{i}", 10_000) for i, s in enumerate(stores)]

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
                await s.redis.delete(s.keys.table_state(f"t{i}"))
                await s.redis.delete(s.keys.applied(f"t{i}", 0))
            await s.redis.hset(s.keys.account("ann"), "balance", 100)
    finally:
        for c in clients:
            await c.aclose()


@pytest.mark.asyncio
async def test_racing_commits_same_table_one_wins(
    redis_server: EmbeddedRedis, store: TableStore
) -> None:
    # ``store`` only to start from a flushed database.
    clients = [redis_server.client(), redis_server.client()]
    try:
        stores = [TableStore(c) for c in clients]
        token = await stores[0].acquire_lease(T, "n", 10_000)
        assert token is not None
        results = await asyncio.gather(
            *(next_commit(s, token, state={"h": bytes([i])}) for i, s in enumerate(stores))
        )
        statuses = sorted(r.status.value for r in results)
        assert statuses == ["ok", "stale_version"]
    finally:
        for c in clients:
            await c.aclose()


# --- client requests -------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_recorded_request_is_refused_and_changes_nothing(
    store: TableStore, accounts: AccountStore, redis_client: redis.asyncio.Redis
) -> None:
    await accounts.credit("ann", 1000, "c-ann")
    token = await lease(store)
    rebuy = ClientRequest("ann", "r1", b"rebuy 300", b"memo-1")
    first = await next_commit(
        store,
        token,
        state={"h": b"s1"},
        entries=[buy_in("t1:v1:ann:rebuy", "ann", 300)],
        events=[(1, b"e1")],
        request=rebuy,
    )
    assert first.status is CommitStatus.OK
    assert first.accounts == {"ann": 700}
    record = await store.request("ann", "r1")
    assert record == RequestRecord(b"rebuy 300", b"memo-1", 700, T, 1)
    assert 0 < await redis_client.pttl(Keys().request("ann", "r1")) <= REQUEST_TTL_MS
    await accounts.credit("ann", 50, "c-ann-2")  # the record keeps the balance of then
    ledger = await ledger_len(redis_client)

    # The same player and rid again, in the table's next change: new entry keys (one
    # the account could not even afford), events and a log. Nothing of it is written.
    again = await next_commit(
        store,
        token,
        after=1,
        state={"h": b"s2"},
        entries=[buy_in("t1:v2:ann:rebuy", "ann", 800)],
        events=[(2, b"e2")],
        logs=[("ann", b"log")],
        request=ClientRequest("ann", "r1", b"rebuy 800", b"memo-2"),
    )
    assert again.status is CommitStatus.REPEATED
    assert again.request == record
    assert not again.ok
    assert not again.stale
    stored = await store.load(T)
    assert stored is not None
    assert (stored.version, stored.parts, stored.last_seq) == (1, {"h": b"s1"}, 1)
    assert await accounts.balance("ann") == 750
    assert await ledger_len(redis_client) == ledger
    assert await store.events_since(T, 1) == []
    assert (await store.history("ann")).items == []
    assert await store.request("ann", "r1") == record

    # The same rid of another player, and another rid of the same player, are new.
    await accounts.credit("bob", 100, "c-bob")
    bob = await next_commit(
        store,
        token,
        after=1,
        state={"h": b"s2"},
        entries=[buy_in("t1:v2:bob:rebuy", "bob", 100)],
        request=ClientRequest("bob", "r1", b"rebuy 100"),
    )
    assert bob.status is CommitStatus.OK
    assert bob.accounts == {"bob": 0}
    ann = await next_commit(
        store,
        token,
        after=2,
        state={"h": b"s3"},
        entries=[cash_out("t1:v3:ann:cash_out", "ann", 20)],
        request=ClientRequest("ann", "r2", b"cash_out 20"),
    )
    assert ann.status is CommitStatus.OK
    assert ann.accounts == {"ann": 770}


@pytest.mark.asyncio
async def test_a_refused_commit_records_no_request(
    store: TableStore, accounts: AccountStore
) -> None:
    await accounts.credit("ann", 100, "c-ann")
    token = await lease(store)
    request = ClientRequest("ann", "r1", b"join 200", b"")

    async def attempt(amount: int, expected: int = 0) -> CommitStatus:
        result = await next_commit(
            store,
            token,
            after=expected,
            entries=[buy_in(f"k{amount}", "ann", amount)],
            request=request,
        )
        return result.status

    assert await attempt(200) is CommitStatus.INSUFFICIENT
    assert await attempt(50, expected=3) is CommitStatus.STALE_VERSION
    assert await store.request("ann", "r1") is None
    assert await attempt(50) is CommitStatus.OK  # so the request may still apply
    assert await accounts.balance("ann") == 50
    record = await store.request("ann", "r1")
    assert record is not None
    assert (record.account, record.memo, record.version) == (50, b"", 1)


@pytest.mark.asyncio
async def test_a_request_without_money_still_reports_the_requesters_balance(
    store: TableStore, accounts: AccountStore
) -> None:
    """A leave during a round moves nothing yet; its reply still states the account."""
    await accounts.credit("ann", 40, "c-ann")
    token = await lease(store)
    result = await next_commit(store, token, request=ClientRequest("ann", "leave-1", b"leave"))
    assert result.status is CommitStatus.OK
    assert result.accounts == {"ann": 40}
    with pytest.raises(ValueError, match="fingerprint"):
        await next_commit(
            store, token, after=1, state={"h": b"t"}, request=ClientRequest("ann", "x", b"")
        )


# --- events --------------------------------------------------------------------


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


# --- game logs -----------------------------------------------------------------


@pytest.mark.asyncio
async def test_game_logs_are_capped_and_paged(store: TableStore) -> None:
    token = await lease(store)
    for version in range(1, 7):  # six rounds; the cap is 4
        logs = [("ann", b"round%d" % version), ("bob", b"b%d" % version)]
        await next_commit(store, token, after=version - 1, logs=logs)
    page = await store.history("ann", None, 2)
    assert page.items == [(6, b"round6"), (5, b"round5")]
    assert page.next_cursor == 5
    # A new round between two pages does not shift the next page (it trims round 3).
    await next_commit(store, token, after=6, logs=[("ann", b"round7")])
    rest = await store.history("ann", page.next_cursor, 2)
    assert rest.items == [(4, b"round4")]
    assert rest.next_cursor is None
    assert (await store.history("ann", 1, 3)).items == []
    assert (await store.history("nobody")).items == []
    exact = await store.history("bob", None, 4)
    assert [o for o, _ in exact.items] == [6, 5, 4, 3]
    assert exact.next_cursor is None


@pytest.mark.asyncio
async def test_player_names_are_checked_before_they_become_keys(store: TableStore) -> None:
    token = await lease(store)
    with pytest.raises(ValueError, match="player name"):
        await next_commit(store, token, entries=[buy_in("k", "x:y", 1)])
    with pytest.raises(ValueError, match="player name"):
        await next_commit(store, token, logs=[("{bad}", b"r")])
    assert await store.load(T) is None
