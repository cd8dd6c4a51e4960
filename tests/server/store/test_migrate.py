"""A Redis of the first key layout, moved to this one at the server's start.

The first layout is written here as its scripts wrote it (no hash tags, one ledger,
the money totals of the product, request records by player): every chip, request,
credit key and game log is found again under the new names, the audit replays the
split ledgers, and a server hosts the table as it was.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

import pytest
import redis.asyncio

from bench.procs.topology import LocalCluster
from protocol.messages import Watch
from server.config import Settings
from server.store.client.replies import stream_entries
from server.store.keys import LAYOUT, FirstLayout, Keys
from server.store.migrate import layout, migrate
from server.store.players.accounts import AccountStore
from server.store.tables.parts import stored_state, to_parts
from server.store.tables.store import TableStore
from server.table import events as ev
from server.table.machine import step
from server.table.state import new_table
from server.tables_file import load_tables
from tests.helpers import url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, audit_report

OLD = FirstLayout()
NEW = Keys()


async def credit(client: redis.asyncio.Redis, player: str, amount: int, key: str) -> str:
    """An operator's credit (or a guest's, keyed ``guest:<player>``) as the first layout's
    ``CREDIT`` wrote it."""
    entry_id = await client.xadd(
        OLD.ledger(),
        {
            "key": key,
            "kind": "credit",
            "player": player,
            "amount": amount,
            "source": "outside",
            "dest": "account",
            "table": "",
        },
    )
    await client.hincrby(OLD.account(player), "balance", amount)
    await client.sadd(NEW.accounts(), player)
    await client.hincrby(OLD.money(), "in", amount)
    await client.hincrby(OLD.money(), "entries", 1)
    if not key.startswith("guest:"):
        await client.hset(OLD.credits(), key, entry_id)
    return str(entry_id)


async def old_store(client: redis.asyncio.Redis, settings: Settings) -> None:
    """alice (an operator's 1000) seated at "slow" with 300 by request ``s:1``, bob a
    guest with 500, and alice's game log of an earlier round."""
    await credit(client, "alice", 1000, "op:1")
    await credit(client, "bob", 500, "guest:bob")
    config = next(c for c in load_tables(settings.tables_file) if c.table_id == "slow")
    t = step(new_table(config), ev.SitDown("alice", "A", 2, 300, secrets.token_bytes(32)), 1)
    (entry,) = t.entries
    entry_id = await client.xadd(
        OLD.ledger(),
        {
            "key": entry.key,
            "kind": entry.kind.value,
            "player": "alice",
            "amount": entry.amount,
            "source": "account",
            "dest": "table",
            "table": "slow",
        },
    )
    await client.hincrby(OLD.account("alice"), "balance", -300)
    await client.hincrby(OLD.money(), "entries", 1)
    table, fence, _, events = OLD.table_keys("slow")
    fields = {"v": t.state.version, "seq": t.state.seq, "tok": 1, "cid": "c1"}
    fields |= {f"s.{name}": part for name, part in to_parts(t.state, None).items()}
    await client.hset(table, mapping=fields)  # type: ignore[arg-type]
    await client.set(fence, 1)
    await client.xadd(events, {"e": b"event"}, id=f"{t.state.seq}-0")
    await client.hset(f"{table}:applied:0", entry.key, entry_id)
    await client.sadd(NEW.tables(), "slow")
    digest = hashlib.sha256(b"s:1").hexdigest()
    request = f"{OLD.request_pattern()[:-1]}alice:{digest}"
    await client.hset(request, mapping={"f": b"fp", "m": b"memo", "a": 700, "t": "slow", "v": 1})
    await client.pexpire(request, 3_600_000)
    await client.lpush(f"{OLD.log_pattern()[:-1]}alice", (1).to_bytes(8, "big") + b"round 1")


@pytest.fixture
def single(redis_cluster: LocalCluster | None) -> None:
    if redis_cluster is not None:
        pytest.skip("the first layout ran on one Redis only (its scripts crossed slots)")


@pytest.mark.asyncio
@pytest.mark.usefixtures("single")
async def test_the_first_layout_is_moved_and_a_server_hosts_it(
    start_app: StartApp, redis_client: redis.asyncio.Redis, server_settings: Settings
) -> None:
    await old_store(redis_client, server_settings)
    assert await layout(redis_client) == "1"
    done = await migrate(redis_client)
    assert done is not None
    assert (done.tables, done.accounts, done.ledger_entries, done.requests, done.logs) == (
        1,
        2,
        3,
        1,
        1,
    )
    assert await layout(redis_client) == LAYOUT
    assert await migrate(redis_client) is None  # once
    assert not await redis_client.exists(
        OLD.ledger(), OLD.money(), OLD.credits(), OLD.account("alice"), OLD.table_keys("slow")[0]
    )
    report = await audit_report(redis_client)
    assert report.ok, report.explain()
    assert report.ledger_complete  # the ledger split by owner replays every balance
    assert (report.credited, report.accounts_total, report.tables_total) == (1500, 1200, 300)

    accounts = AccountStore(redis_client)
    assert await accounts.balance("alice") == 700
    assert not (await accounts.credit("alice", 1000, "op:1")).applied  # its key moved
    tables = TableStore(redis_client)
    record = await tables.requests.record("slow", "alice", "s:1")
    assert record is not None
    assert (record.fingerprint, record.memo, record.account) == (b"fp", b"memo", 700)
    assert await tables.transfers.claimed("alice", "s:1") == (b"fp", "slow")
    assert (await tables.history.page("alice")).items == [(1, b"round 1")]

    app = await start_app()  # finds the layout done
    host = app.hosts["slow"]
    assert host.state is not None
    seat = host.state.seats[2]
    assert seat is not None
    assert (seat.player, seat.balance) == ("alice", 300)
    stored = await tables.load("slow")
    assert stored is not None
    assert stored_state(stored).seat_of("alice") == 2
    watcher = await Client.hello(url(app))
    try:
        await watcher.ok(Watch, table_id="slow")
    finally:
        await watcher.close()
    report = await audit_report(redis_client)
    assert report.ok, report.explain()


@pytest.mark.asyncio
@pytest.mark.usefixtures("single")
async def test_a_trimmed_first_ledger_keeps_its_credits_apart(
    redis_client: redis.asyncio.Redis, server_settings: Settings
) -> None:
    await old_store(redis_client, server_settings)
    await redis_client.xtrim(OLD.ledger(), maxlen=1, approximate=False)  # the buy-in only
    done = await migrate(redis_client)
    assert done is not None
    assert done.notes
    report = await audit_report(redis_client)
    assert report.ok, report.explain()
    assert report.credited == 1500  # in the totals the migration kept apart
    assert not report.ledger_complete
    # The credit key whose entry was trimmed stays known: it is not applied again.
    assert not (await AccountStore(redis_client).credit("alice", 1000, "op:1")).applied
    assert await AccountStore(redis_client).balance("alice") == 700


@pytest.mark.asyncio
@pytest.mark.usefixtures("single")
async def test_a_migration_stopped_half_way_finishes_once(
    redis_client: redis.asyncio.Redis, server_settings: Settings
) -> None:
    await old_store(redis_client, server_settings)
    # A migration that died after copying alice's first entry and renaming her account.
    ((first_id, first),) = stream_entries(await redis_client.xrange(OLD.ledger(), count=1))
    copy: dict[Any, Any] = dict(first)
    await redis_client.xadd(NEW.account_ledger("alice"), copy, id=first_id)
    await redis_client.rename(OLD.account("alice"), NEW.account("alice"))
    await migrate(redis_client)
    assert await redis_client.xlen(NEW.account_ledger("alice")) == 2  # credit, buy-in
    report = await audit_report(redis_client)
    assert report.ok, report.explain()
    assert report.ledger_complete
