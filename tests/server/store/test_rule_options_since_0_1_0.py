"""Rule options added since release 0.1.0 are stored only when a table sets them: a
table at the defaults is stored as 0.1.0 stores it, and 0.1.0's reader reads it; one
that sets them is refused by that reader (docs/RULES.md, "Commission"), which an
operator must know before setting them during a rolling upgrade."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import msgpack
import pytest
import redis.asyncio

from bench.procs.topology import LocalCluster
from server.rules.options import CommissionFree, CommissionRounding, RuleOptions
from server.store import announcement
from server.store.catalog.catalog import TableCatalog
from server.store.nodes.formats import TABLE_CONFIG_FIELDS
from server.store.nodes.shared import ClusterStore
from server.store.tables.parts import (
    CONFIG_PART,
    config_from_plain,
    config_to_plain,
    from_parts,
    to_parts,
)
from server.table.state import TableConfig, new_table

PLAIN = TableConfig(table_id="jade", name="Jade")
UP = replace(PLAIN, rules=RuleOptions(commission_rounding=CommissionRounding.UP))
WHOLE = replace(PLAIN, min_bet=20, rules=RuleOptions(commission_rounding=CommissionRounding.WHOLE))
EZ = replace(PLAIN, rules=RuleOptions(commission_free=CommissionFree.EZ))
NINE_LOW = replace(PLAIN, rules=RuleOptions(commission_free=CommissionFree.NINE_LOW))


@dataclass(frozen=True)
class RuleOptionsOf010:
    """Release 0.1.0's rule options, as its reader builds them: ``RuleOptions(**rules)``
    of the stored map (server/store/tables/parts.py, ``_config``, at v0.1.0)."""

    wheel: Any
    foul: Any
    commission_pct: Any
    house_way: Any
    bonus_pay_table: Any


def read_by_0_1_0(config_map: dict[str, Any]) -> RuleOptionsOf010:
    return RuleOptionsOf010(**config_map["rules"])


def test_a_table_at_the_default_rounding_is_stored_as_0_1_0_stores_it() -> None:
    stored = config_to_plain(PLAIN)
    assert set(stored["rules"]) == {
        "wheel",
        "foul",
        "commission_pct",
        "house_way",
        "bonus_pay_table",
    }
    read_by_0_1_0(stored)  # 0.1.0 reads it
    assert config_from_plain(stored) == PLAIN


@pytest.mark.parametrize("config", [UP, WHOLE], ids=["up", "whole"])
def test_a_table_that_sets_the_rounding_stores_it_and_reads_it_back(config: TableConfig) -> None:
    parts = to_parts(new_table(config), None)
    stored = msgpack.unpackb(parts[CONFIG_PART])
    assert stored["rules"]["commission_rounding"] == config.rules.commission_rounding.value
    assert from_parts(parts).config == config
    assert config_from_plain(config_to_plain(config)) == config
    # What a 0.1.0 node does with it: its reader refuses the map, so that node can
    # neither take the table over nor read the catalog that holds it.
    with pytest.raises(TypeError, match="commission_rounding"):
        read_by_0_1_0(stored)


@pytest.mark.parametrize("config", [EZ, NINE_LOW], ids=["ez", "nine_low"])
def test_a_commission_free_table_stores_it_and_0_1_0_refuses_it(config: TableConfig) -> None:
    parts = to_parts(new_table(config), None)
    stored = msgpack.unpackb(parts[CONFIG_PART])
    assert stored["rules"]["commission_free"] == config.rules.commission_free.value
    assert "commission_rounding" not in stored["rules"]  # still at its default
    assert from_parts(parts).config == config
    assert config_from_plain(config_to_plain(config)) == config
    with pytest.raises(TypeError, match="commission_free"):
        read_by_0_1_0(stored)


@pytest.mark.asyncio
async def test_the_catalog_keeps_the_rounding(
    redis_client: redis.asyncio.Redis, redis_cluster: LocalCluster | None
) -> None:
    catalog = TableCatalog(redis_client)
    assert await catalog.seed([PLAIN, replace(UP, table_id="lotus")])
    lotus = (await catalog.read()).tables["lotus"].config
    assert lotus.rules.commission_rounding is CommissionRounding.UP
    if redis_cluster is not None:
        # On a Redis Cluster no node registers (each runs alone), so no newer format is
        # switched on there, and a change away from a default waits for that.
        return
    # A change away from the default needs every live node to read it: one of today's.
    nodes = ClusterStore(redis_client)
    await nodes.beat("today#1", 60_000, announcement("today"))
    assert await nodes.switch_formats(frozenset({TABLE_CONFIG_FIELDS})) == {TABLE_CONFIG_FIELDS}
    await catalog.change(replace(WHOLE, max_bet=400))
    read = (await catalog.read()).tables
    assert read["jade"].config == replace(WHOLE, max_bet=400)
    assert read["lotus"].config.rules.commission_rounding is CommissionRounding.UP
    # A commission-free table is such a change too.
    await catalog.change(replace(NINE_LOW, table_id="lotus"))
    lotus = (await catalog.read()).tables["lotus"].config
    assert lotus.rules.commission_free is CommissionFree.NINE_LOW
