"""A node following the tables catalog (server/cluster/live.py): a table created is
hosted even when the notice is lost (the revision read every second), and a table the
catalog closed while no node ran is closed by the node that takes it, every chip back
to its player's account."""

from __future__ import annotations

import pytest
import redis.asyncio

from protocol.messages import Bet, Join, ListTables
from server.catalog import close_table, create_table
from server.store import TableCatalog, TableStatus
from server.store.players.accounts import AccountStore
from server.store.tables.parts import stored_state
from server.store.tables.store import TableStore
from tests.helpers import until, url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, audit_report


@pytest.mark.asyncio
async def test_a_table_created_while_the_notice_is_lost_is_hosted_a_second_later(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    app = await start_app()
    live = app.live
    assert live is not None
    await live._listener.stop()  # deaf to notices: only the periodic read is left
    await create_table(TableCatalog(redis_client), {"id": "late", "name": "Late"})
    await until(lambda: app.hosts.get("late") is not None and app.hosts["late"].ready, 5, "late")
    client = await Client.hello(url(app))
    try:
        lobby = await client.ok(ListTables)
        assert "late" in {t.table_id for t in lobby.tables}
        await client.ok(Join, table_id="late", buy_in=500)
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_a_table_closed_while_no_node_ran_is_closed_by_the_next_one(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    """The catalog says ``closing``, the stored table does not (no node stepped the
    close): the node that takes the table closes it, its seats stand up with their
    chips back, and it leaves the lobby."""
    first = await start_app()
    client = await Client.hello(url(first))
    player = client.player
    try:
        await client.ok(Join, table_id="slow", buy_in=500)
    finally:
        await client.close()
    accounts = AccountStore(redis_client)
    before = await accounts.balance(player)
    await first.stop()
    catalog = TableCatalog(redis_client)
    await close_table(catalog, "slow")
    stored = await TableStore(redis_client).load("slow")
    assert stored is not None
    assert not stored_state(stored).closing
    assert stored_state(stored).seat_of(player) is not None

    second = await start_app()

    async def closed() -> bool:
        return (await catalog.read()).tables["slow"].status is TableStatus.CLOSED

    await until(closed, 10, "the table to be closed")
    await until(lambda: "slow" not in second.hosts, 5, "the host to be forgotten")
    assert await accounts.balance(player) == (before or 0) + 500
    client = await Client.hello(url(second))
    try:
        lobby = await client.ok(ListTables)
        assert "slow" not in {t.table_id for t in lobby.tables}
        assert "fast" in {t.table_id for t in lobby.tables}
        await client.error(Join, "no_such_table", table_id="slow", buy_in=500)
    finally:
        await client.close()
    report = await audit_report(redis_client)
    assert report.ok, report.explain()


@pytest.mark.asyncio
async def test_a_closing_table_says_so_in_the_lobby_and_refuses_new_seats(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    """Closed while a round is in play: the lobby marks it closing, a new player is
    refused with ``table_closing``, and once the round is over and the seat stood up,
    it leaves the lobby."""
    app = await start_app()
    seated = await Client.hello(url(app), label="seated")
    late = await Client.hello(url(app), label="late")
    try:
        await seated.ok(Join, table_id="fast", buy_in=500)
        await seated.ok(Bet, table_id="fast", amount=100)  # alone: the cards are dealt
        catalog = TableCatalog(redis_client)
        await close_table(catalog, "fast")

        async def marked() -> bool:
            lobby = await late.ok(ListTables)
            return any(t.table_id == "fast" and t.closing for t in lobby.tables)

        await until(marked, 5, "the lobby to mark the table closing", every=0.2)
        lobby = await late.ok(ListTables)
        assert not next(t for t in lobby.tables if t.table_id == "slow").closing
        await late.error(Join, "table_closing", table_id="fast", buy_in=500)

        async def gone() -> bool:
            lobby = await late.ok(ListTables)
            return all(t.table_id != "fast" for t in lobby.tables)

        await until(gone, 20, "the table to leave the lobby", every=0.2)
        assert (await catalog.read()).tables["fast"].status is TableStatus.CLOSED
    finally:
        await seated.close()
        await late.close()
    report = await audit_report(redis_client)
    assert report.ok, report.explain()


@pytest.mark.asyncio
async def test_a_store_of_an_older_version_gets_its_catalog_from_the_file_once(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    """A store with tables but no catalog (an older version's): the first start seeds
    the catalog from the tables file, and the tables keep their state and seats."""
    first = await start_app()
    client = await Client.hello(url(first))
    player = client.player
    try:
        await client.ok(Join, table_id="slow", buy_in=500)
    finally:
        await client.close()
    await first.stop()
    catalog = TableCatalog(redis_client)
    await redis_client.delete(catalog.keys.catalog())  # as an older version left it
    assert not (await catalog.read()).exists
    second = await start_app()
    read = await catalog.read()
    assert set(read.tables) == {"fast", "slow"}
    host = second.hosts["slow"]
    assert host.state is not None
    assert host.state.seat_of(player) is not None  # the seat and its chips are kept
