"""Settings added since 0.1.0 (``server/store/tables/parts.py``): at their default they are
not written, so 0.1.0 (which fails on a key it does not know) reads the table; away from
their default the catalog takes them only once every live node reads them (the stored
format ``table-config-fields``). A field of 0.1.0 is made to look newer here, the one
way to have such a field before a release adds one."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import msgpack
import pytest
import redis.asyncio

from server.rules.options import RuleOptions
from server.store import announcement
from server.store.catalog.catalog import CatalogRefusal, CatalogRefused, TableCatalog
from server.store.nodes.formats import TABLE_CONFIG_FIELDS
from server.store.nodes.shared import ClusterStore
from server.store.tables import parts
from server.store.tables.parts import config_fields_beyond, config_from_plain, config_to_plain
from server.table.state import TableConfig

JADE = TableConfig(table_id="jade", name="Jade", max_bet=500)


@pytest.fixture
def newer_fields(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``max_sit_out_rounds`` and the rule option ``commission_pct`` as if added since 0.1.0."""
    monkeypatch.setattr(
        parts, "PREVIOUS_CONFIG_FIELDS", parts.PREVIOUS_CONFIG_FIELDS - {"max_sit_out_rounds"}
    )
    monkeypatch.setattr(
        parts, "PREVIOUS_RULE_FIELDS", parts.PREVIOUS_RULE_FIELDS - {"commission_pct"}
    )
    parts._plain_config.cache_clear()
    yield
    parts._plain_config.cache_clear()


def test_the_settings_of_today_are_written_as_0_1_0_wrote_them() -> None:
    plain = config_to_plain(JADE)
    assert set(plain) == parts.PREVIOUS_CONFIG_FIELDS
    assert set(plain["rules"]) == parts.PREVIOUS_RULE_FIELDS
    assert config_fields_beyond(JADE) == []


def test_a_newer_field_at_its_default_is_not_written(newer_fields: None) -> None:
    plain = config_to_plain(JADE)
    assert "max_sit_out_rounds" not in plain
    assert "commission_pct" not in plain["rules"]
    assert config_from_plain(msgpack.unpackb(msgpack.packb(plain))) == JADE
    assert config_fields_beyond(JADE) == []
    away = replace(JADE, max_sit_out_rounds=3, rules=RuleOptions(commission_pct=4))
    assert config_fields_beyond(away) == ["max_sit_out_rounds", "rules.commission_pct"]
    assert config_from_plain(config_to_plain(away)) == away


@pytest.mark.asyncio
async def test_the_catalog_takes_a_newer_setting_only_once_every_node_reads_it(
    newer_fields: None, redis_client: redis.asyncio.Redis
) -> None:
    catalog = TableCatalog(redis_client)
    nodes = ClusterStore(redis_client)
    await catalog.create(JADE)  # at the default: taken, with a node of 0.1.0 live or not
    await nodes.beat("old#1", 60_000, {"name": "old"})
    await nodes.beat("new#1", 60_000, announcement("0.2.0", {TABLE_CONFIG_FIELDS}))
    assert await nodes.switch_formats(frozenset({TABLE_CONFIG_FIELDS})) == frozenset()
    away = replace(JADE, max_sit_out_rounds=3)
    with pytest.raises(CatalogRefused) as refused:
        await catalog.change(away)
    assert refused.value.reason is CatalogRefusal.NOT_READ
    with pytest.raises(CatalogRefused):
        await catalog.create(replace(away, table_id="lotus"))
    assert (await catalog.read()).tables["jade"].config == JADE
    await nodes.leave("old#1")
    assert await nodes.switch_formats(frozenset({TABLE_CONFIG_FIELDS})) == {TABLE_CONFIG_FIELDS}
    await catalog.change(away)
    assert (await catalog.read()).tables["jade"].config == away
    await nodes.leave("new#1")
