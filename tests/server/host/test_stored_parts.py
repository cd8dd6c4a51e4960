"""A table host stores only the parts of its state a change touched, upgrading a
table stored whole or in the parts of an older format when it takes it over."""

from __future__ import annotations

import msgpack
import pytest
import redis.asyncio

from protocol.messages import Bet, Join
from server.app import App
from server.catalog import change_table
from server.store import TableCatalog
from server.store.tables.parts import (
    CONFIG_PART,
    DEAL_PART,
    HEADER_PART,
    PENDING_CONFIG_PART,
    seat_part,
    stored_state,
)
from server.store.tables.store import TableStore
from tests.helpers import until, url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, RecordedParts, audit_report
from tests.server.table.helpers import legacy_blob, legacy_parts

EVERY_PART = {
    HEADER_PART,
    DEAL_PART,
    CONFIG_PART,
    PENDING_CONFIG_PART,
    *(seat_part(i) for i in range(6)),
}


async def seated_away(app: App, seat: int) -> str:
    """A player sits at ``slow`` in ``seat`` (opening its betting) and goes away."""
    client = await Client.hello(url(app))
    try:
        await client.ok(Join, table_id="slow", buy_in=500, seat=seat)
    finally:
        await client.close()
    host = app.hosts["slow"]

    def away() -> bool:
        state = host.state
        seated = state.seats[seat] if state is not None else None
        return seated is not None and not seated.connected

    # Stored before the server stops: the next owner has nothing to tell the table.
    await until(away, what="the seat away")
    return client.player


async def table_fields(redis_client: redis.asyncio.Redis) -> set[bytes | str]:
    return set(await redis_client.hkeys(TableStore(redis_client).keys.table_state("slow")))


@pytest.mark.asyncio
async def test_a_table_stored_whole_is_taken_over_and_stored_in_parts(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    """Servers before parts stored a table's state whole, in field ``s``: such a table
    is read, its first commit writes every part and deletes ``s``, and the commits after
    it write only what changed."""
    first = await start_app()
    ann = await seated_away(first, 2)
    await first.stop()
    # Rewrite the table as those servers left it (v, seq and tok are as they were).
    tables = TableStore(redis_client)
    stored = await tables.load("slow")
    assert stored is not None
    state = stored_state(stored)
    key = tables.keys.table_state("slow")
    newer = [
        f
        for f in await table_fields(redis_client)
        if b"." in f or f in (b"cid", b"n", b"xn", b"f", b"ab")
    ]
    await redis_client.hdel(key, *newer)
    await redis_client.hset(key, "s", legacy_blob(state))
    assert await table_fields(redis_client) == {b"v", b"seq", b"tok", b"s"}
    report = await audit_report(redis_client)  # reads a table stored whole too
    assert report.ok, report.explain()
    assert report.tables_total == 500

    second = await start_app()
    host = second.hosts["slow"]
    # Read as it was stored. Taken over from another process in its betting phase, the
    # table started that phase again (TakeOver): that first change wrote every part and
    # deleted the whole value.
    taken = host.state
    assert taken is not None
    assert (taken.seats, taken.round_no, taken.commitment) == (
        state.seats,
        state.round_no,
        state.commitment,
    )
    assert taken.version == state.version + 1
    fields = await table_fields(redis_client)
    assert b"s" not in fields
    assert {f"s.{name}".encode() for name in EVERY_PART} <= fields
    recorded = RecordedParts(host.store)
    bob = await Client.hello(url(second))
    try:
        await bob.ok(Join, table_id="slow", buy_in=300, seat=4)
        assert recorded.written == [{HEADER_PART, seat_part(4)}]
        assert await table_fields(redis_client) == {
            b"v",
            b"seq",
            b"tok",
            b"cid",
            b"n",  # ledger entries since (the buy-in)
            b"xn",  # transfers since (the buy-in's)
            b"f",  # the fence: the second server's token
            b"ab",  # the applied bucket whose time to live is set (the buy-in's)
            *(f"s.{name}".encode() for name in EVERY_PART),
        }
        await bob.ok(Bet, table_id="slow", amount=100)
        assert recorded.written[1:] == [{HEADER_PART, seat_part(4)}]
        stored = await tables.load("slow")
        assert stored is not None
        assert stored.whole is None
        assert stored_state(stored) == host.state
        assert host.state is not None
        seat = host.state.seats[2]
        assert seat is not None
        assert (seat.player, seat.balance) == (ann, 500)
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await bob.close()


@pytest.mark.asyncio
async def test_a_table_stored_in_format_2_parts_is_taken_over_and_stored_anew(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    """The servers before format 3 stored each record of the parts as a map keyed by
    field name: such a table is read after an upgrade, its first commit writes every
    part in format 3, and the commits after it write only what changed."""
    first = await start_app()
    ann = await seated_away(first, 2)
    await first.stop()
    # Rewrite the parts as those servers wrote them (the other fields are as they were).
    tables = TableStore(redis_client)
    stored = await tables.load("slow")
    assert stored is not None
    state = stored_state(stored)
    key = tables.keys.table_state("slow")
    old = legacy_parts(state)
    await redis_client.hdel(key, *[f for f in await table_fields(redis_client) if b"." in f])
    await redis_client.hset(key, mapping={f"s.{name}": part for name, part in old.items()})
    stored = await tables.load("slow")
    assert stored is not None
    assert stored.parts == old
    assert stored_state(stored) == state
    report = await audit_report(redis_client)  # reads format 2 too
    assert report.ok, report.explain()

    second = await start_app()
    host = second.hosts["slow"]
    # Taken over in its betting phase, the table started that phase again (TakeOver):
    # that first change wrote every part, in format 3.
    taken = host.state
    assert taken is not None
    assert (taken.seats, taken.round_no) == (state.seats, state.round_no)
    assert taken.version == state.version + 1
    stored = await tables.load("slow")
    assert stored is not None
    assert set(stored.parts) == EVERY_PART
    assert msgpack.unpackb(stored.parts[HEADER_PART])[0] == 3
    assert all(msgpack.unpackb(stored.parts[seat_part(i)]) is None for i in (0, 1, 3, 4, 5))
    assert msgpack.unpackb(stored.parts[seat_part(2)])[0] == ann  # an array, not a map
    assert stored_state(stored) == host.state
    recorded = RecordedParts(host.store)
    bob = await Client.hello(url(second))
    try:
        await bob.ok(Join, table_id="slow", buy_in=300, seat=4)
        await bob.ok(Bet, table_id="slow", amount=100)
        assert recorded.written == [{HEADER_PART, seat_part(4)}] * 2
        stored = await tables.load("slow")
        assert stored is not None
        assert stored_state(stored) == host.state
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await bob.close()


@pytest.mark.asyncio
async def test_settings_applied_on_taking_a_table_over_are_stored_with_its_next_change(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    """The host applies settings changed in the catalog while no node ran to the state
    it loaded, between rounds,
    before storing anything: the parts of its next change are counted from the state
    stored, so the new settings are among them. Here that change is the takeover's own
    (the table was in its betting phase, which starts again), before any request."""
    first = await start_app()
    await seated_away(first, 0)
    await first.stop()
    before = await TableStore(redis_client).load("slow")
    assert before is not None
    assert stored_state(before).config.max_bet == 1000
    await change_table(TableCatalog(redis_client), "slow", {"max_bet": 2000})
    second = await start_app()
    host = second.hosts["slow"]
    assert host.state is not None
    assert host.state.config.max_bet == 2000
    taken = await TableStore(redis_client).load("slow")
    assert taken is not None
    assert taken.version == before.version + 1
    assert stored_state(taken) == host.state  # the settings stored with that change
    recorded = RecordedParts(host.store)
    bob = await Client.hello(url(second))
    try:
        await bob.ok(Join, table_id="slow", buy_in=300, seat=1)
        assert recorded.written == [{HEADER_PART, seat_part(1)}]
        stored = await TableStore(redis_client).load("slow")
        assert stored is not None
        assert stored_state(stored) == host.state
        assert stored_state(stored).config.max_bet == 2000
    finally:
        await bob.close()
