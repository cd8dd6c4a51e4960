"""The tables catalog in Redis: seeded once, each change checked by its script before
it writes, its revision grown and the change published; read back whole."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
import redis.asyncio

from server.rules.options import RuleOptions
from server.rules.splits import FoulPolicy
from server.store.catalog.catalog import (
    CatalogRefusal,
    CatalogRefused,
    TableCatalog,
    TableStatus,
)
from server.table.state import TableConfig

JADE = TableConfig(table_id="jade", name="Jade", max_bet=500)
LOTUS = TableConfig(
    table_id="lotus", name="Lotus", denominations=(5, 25), rules=RuleOptions(foul=FoulPolicy.LOSE)
)


@pytest.fixture
def catalog(redis_client: redis.asyncio.Redis) -> TableCatalog:
    return TableCatalog(redis_client)


@pytest.mark.asyncio
async def test_a_missing_catalog_is_seeded_once(catalog: TableCatalog) -> None:
    empty = await catalog.read()
    assert (empty.rev, dict(empty.tables), empty.exists) == (0, {}, False)
    assert await catalog.seed([JADE, LOTUS])
    read = await catalog.read()
    assert read.rev == 1
    assert {t: (e.config, e.status) for t, e in read.tables.items()} == {
        "jade": (JADE, TableStatus.OPEN),
        "lotus": (LOTUS, TableStatus.OPEN),
    }
    # A second seed (another node's start, or a changed file) writes nothing.
    assert not await catalog.seed([replace(JADE, max_bet=900)])
    assert await catalog.read() == read


@pytest.mark.asyncio
async def test_a_table_is_created_changed_closing_then_closed(catalog: TableCatalog) -> None:
    await catalog.seed([JADE])
    assert await catalog.create(LOTUS) == 2
    raised = replace(LOTUS, max_bet=2000)
    assert await catalog.change(raised) == 3
    assert (await catalog.read()).tables["lotus"].config == raised
    assert await catalog.close("lotus") == 4
    assert await catalog.close("lotus") == 4  # already closing: nothing written
    read = await catalog.read()
    assert read.tables["lotus"].status is TableStatus.CLOSING
    assert "lotus" in read.hosted()  # hosted until its holder closed it
    assert await catalog.closed("lotus") == 5
    assert await catalog.closed("lotus") == 5
    read = await catalog.read()
    assert read.tables["lotus"].status is TableStatus.CLOSED
    assert set(read.hosted()) == {"jade"}
    assert await catalog.rev() == 5


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("call", "reason"),
    [
        ("create jade", CatalogRefusal.EXISTS),
        ("create gone", CatalogRefusal.EXISTS),  # a closed table's id is never reused
        ("change nope", CatalogRefusal.MISSING),
        ("close nope", CatalogRefusal.MISSING),
        ("closed nope", CatalogRefusal.MISSING),
        ("change shut", CatalogRefusal.CLOSING),
        ("change gone", CatalogRefusal.CLOSED),
        ("close gone", CatalogRefusal.CLOSED),
        ("closed jade", CatalogRefusal.OPEN),
    ],
)
async def test_refused_changes_write_nothing(
    catalog: TableCatalog, call: str, reason: CatalogRefusal
) -> None:
    await catalog.seed([JADE, replace(JADE, table_id="shut"), replace(JADE, table_id="gone")])
    await catalog.close("shut")
    await catalog.close("gone")
    await catalog.closed("gone")
    before = await catalog.read()
    op, table_id = call.split()
    config = replace(JADE, table_id=table_id, max_bet=700)
    calls = {
        "create": lambda: catalog.create(config),
        "change": lambda: catalog.change(config),
        "close": lambda: catalog.close(table_id),
        "closed": lambda: catalog.closed(table_id),
    }
    with pytest.raises(CatalogRefused) as refused:
        await calls[op]()
    assert refused.value.reason is reason
    assert await catalog.read() == before


@pytest.mark.asyncio
async def test_every_change_is_published_with_its_table(catalog: TableCatalog) -> None:
    heard: list[str] = []
    changed = asyncio.Event()

    def hear(table_id: str) -> None:
        heard.append(table_id)
        changed.set()

    listener = catalog.notices(hear)
    listener.start()
    try:
        # Subscribed once a publication is heard: publish until one is.
        async with asyncio.timeout(10):
            while not heard:
                await catalog.redis.publish(catalog.keys.catalog_channel(), "probe")
                await asyncio.sleep(0.02)
        heard.clear()
        await catalog.seed([JADE])
        await catalog.create(LOTUS)
        await catalog.change(replace(LOTUS, max_bet=100))
        await catalog.close("lotus")
        await catalog.closed("lotus")
        async with asyncio.timeout(10):
            while len(heard) < 5:
                changed.clear()
                await changed.wait()
        assert heard == ["", "lotus", "lotus", "lotus", "lotus"]
    finally:
        await listener.stop()
