"""The commit against a real Redis (or Redis Cluster): fencing, versions, retries,
parts, racing owners, and the keys and arguments it hands the script."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable

import pytest
import redis.asyncio

from server.store.chips.records import LOG, ClientRequest, Delivery, Incoming, pack_logs, read_logs
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
from tests.server.store.helpers import T, bet, buy_in, cash_out, expired, lease, next_commit


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
