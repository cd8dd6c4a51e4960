"""Side bets beyond the bonus bet since release 0.1.0 (docs/DESIGN.md, "Wagers"): a
table with the bonus bet alone is stored as 0.1.0 stores it; one that offers more
stores longer arrays, and the catalog takes it only once the format `side-wagers` is on."""

from __future__ import annotations

from dataclasses import replace

import msgpack
import pytest
import redis.asyncio

from bench.procs.topology import LocalCluster
from server.rules.envy import EnvyOptions
from server.store import CatalogRefusal, CatalogRefused, announcement
from server.store.catalog.catalog import TableCatalog
from server.store.nodes.formats import SIDE_WAGERS, TABLE_CONFIG_FIELDS
from server.store.nodes.shared import ClusterStore
from server.store.tables.parts import (
    CONFIG_PART,
    DEAL_PART,
    PREVIOUS_CONFIG_FIELDS,
    RESULT_FIELDS,
    SEAT_FIELDS,
    config_to_plain,
    from_parts,
    seat_part,
    to_parts,
)
from server.table.state import Seat, SeatResult, TableConfig, WagerResult, new_table

PLAIN = TableConfig(table_id="jade", name="Jade")
FORTUNE = replace(PLAIN, table_id="fortune", side_bets=(("envy", EnvyOptions()),))


def _settled(config: TableConfig, wagers: tuple[WagerResult, ...]) -> dict[str, bytes]:
    seat = Seat(player="p", name="P", balance=900, last_bet=100, last_side=(("bonus", 5),))
    result = SeatResult(0, "p", "lose", "lose", "lose", 100, 0, 0, -55, 900, wagers)
    state = replace(new_table(config), seats=(seat, *(None,) * 5), results=(result,))
    parts = to_parts(state, None)
    assert from_parts(parts) == state
    return parts


def test_the_bonus_bet_alone_is_stored_in_0_1_0_arrays() -> None:
    parts = _settled(PLAIN, (WagerResult("bonus", 5, 0),))
    assert "side_bets" not in config_to_plain(PLAIN)
    seat = msgpack.unpackb(parts[seat_part(0)])
    assert len(seat) == len(SEAT_FIELDS) - 2 == 16  # 0.1.0's seat
    assert seat[SEAT_FIELDS.index("last_bonus")] == 5
    (result,) = msgpack.unpackb(parts[DEAL_PART])[-1]
    assert len(result) == len(RESULT_FIELDS) - 1 == 13  # 0.1.0's result
    assert result[RESULT_FIELDS.index("bonus")] == 5


def test_an_envy_result_grows_the_array_and_the_settings_name_it() -> None:
    envy = WagerResult("envy", 0, 50, "four_of_a_kind")
    parts = _settled(FORTUNE, (WagerResult("bonus", 5, 0), envy))
    (result,) = msgpack.unpackb(parts[DEAL_PART])[-1]
    assert result[-1] == [["envy", 0, "four_of_a_kind", 50]]
    stored = msgpack.unpackb(parts[CONFIG_PART])
    # 0.1.0 builds the settings from every key and refuses one it does not know.
    assert "side_bets" in stored
    assert "side_bets" not in PREVIOUS_CONFIG_FIELDS


@pytest.mark.asyncio
async def test_the_catalog_takes_side_bets_only_once_side_wagers_is_on(
    redis_client: redis.asyncio.Redis, redis_cluster: LocalCluster | None
) -> None:
    if redis_cluster is not None:
        pytest.skip("no node registers on a Redis Cluster: no format is switched on there")
    catalog = TableCatalog(redis_client)
    assert await catalog.seed([PLAIN])
    nodes = ClusterStore(redis_client)
    # A node that reads the newer settings but not the longer arrays: refused.
    await nodes.beat("older#1", 60_000, announcement("older", [TABLE_CONFIG_FIELDS]))
    assert await nodes.switch_formats(frozenset({TABLE_CONFIG_FIELDS})) == {TABLE_CONFIG_FIELDS}
    with pytest.raises(CatalogRefused) as refused:
        await catalog.create(FORTUNE)
    assert refused.value.reason is CatalogRefusal.NOT_READ
    # Every live node reads both: taken.
    await nodes.beat("older#1", 60_000, announcement("today"))
    assert SIDE_WAGERS in await nodes.switch_formats(frozenset({TABLE_CONFIG_FIELDS, SIDE_WAGERS}))
    await catalog.create(FORTUNE)
    assert (await catalog.read()).tables["fortune"].config == FORTUNE


@pytest.mark.asyncio
async def test_the_built_in_tables_are_seeded_with_their_side_bets(
    redis_client: redis.asyncio.Redis,
) -> None:
    """A new store's seed writes the built-in tables as the file has them, side bets
    included, with no format on (on a Redis Cluster none ever is); a table with side
    bets created afterwards is still refused until `side-wagers` is on."""
    from server.tables_file import load_tables

    built_in = load_tables(None)
    catalog = TableCatalog(redis_client)
    assert not await redis_client.smembers(catalog.keys.formats())
    assert await catalog.seed(built_in)
    read = (await catalog.read()).tables
    assert {t.table_id: read[t.table_id].config for t in built_in} == {
        t.table_id: t for t in built_in
    }
    assert read["fortune"].config.side_kinds == ("bonus", "envy")
    assert read["ez"].config.side_kinds == ("bonus", "queens_dragon")
    assert read["tiger"].config.side_kinds == ("bonus", "tiger9")
    with pytest.raises(CatalogRefused) as refused:
        await catalog.create(replace(read["ez"].config, table_id="ez2"))
    assert refused.value.reason is CatalogRefusal.NOT_READ
    # Every seat and result of them stored reads back (the seed's tables are played).
    for table_id in ("fortune", "ez", "tiger"):
        config = read[table_id].config
        kind = config.side_kinds[-1]
        stake = 0 if kind == "envy" else 10
        _settled(config, (WagerResult("bonus", 5, 0, None), WagerResult(kind, stake, 0, None)))
