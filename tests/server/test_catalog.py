"""The operations on the tables catalog (server/catalog.py) and the commands that call
them (``paigow-server table ...``): typed errors for bad settings, a taken id, a
missing or closed table, and nothing written then."""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis.asyncio

from server.catalog import (
    BadTableConfig,
    JackpotNotHere,
    NoSuchTable,
    TableExists,
    TableNotOpen,
    change_table,
    close_table,
    create_table,
    list_tables,
    seed_catalog,
)
from server.store import TableCatalog, TableStatus, announcement
from server.store.nodes.formats import SIDE_WAGERS, TABLE_CONFIG_FIELDS
from server.store.nodes.shared import ClusterStore
from server.tables_file import describe_table, load_tables, table_config
from tests.server.processes import run_cli

SPEC = {"id": "pearl", "name": "Pearl", "min_bet": 25, "max_bet": 250, "denominations": [25]}


@pytest.fixture
def catalog(redis_client: redis.asyncio.Redis) -> TableCatalog:
    return TableCatalog(redis_client)


def test_a_table_described_reads_back_as_itself() -> None:
    for config in load_tables(None):
        assert table_config(describe_table(config), "x") == config


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ({"min_bet": 300}, "at most its maximum"),
        ({"betting_ms": 0}, "positive"),
        ({"id": "has space"}, "letters, digits"),
        ({"id": ""}, "1 to 32"),
        ({"id": "x" * 33}, "1 to 32"),
        ({"name": ""}, "name"),
        ({"seats": 7}, "1 to 6 seats"),
        ({"foul": "sometimes"}, "sometimes"),
        ({"bonus_pay_table": "nope"}, "pay table"),
        ({"colour": "red"}, "unknown key"),
        ({"min_bet": "ten"}, "positive"),
    ],
)
async def test_bad_settings_are_refused_and_nothing_written(
    catalog: TableCatalog, spec: dict[str, Any], says: str
) -> None:
    await seed_catalog(catalog, [])
    before = await catalog.read()
    with pytest.raises(BadTableConfig, match=says):
        await create_table(catalog, {**SPEC, **spec})
    assert await catalog.read() == before


@pytest.mark.asyncio
async def test_create_change_close_and_list(catalog: TableCatalog) -> None:
    seeded = await seed_catalog(catalog, load_tables(None))
    built_in = {"jade", "dragon", "lotus", "fortune", "ez", "tiger"}
    assert set(seeded.tables) == built_in
    # Seeded as the file says, side bets included, whatever formats are on: the seed is
    # a store's first write (docs/DESIGN.md, "Wagers"); on a Redis Cluster none is on.
    assert seeded.tables["fortune"].config.side_kinds == ("bonus", "envy")
    assert seeded.tables["ez"].config.side_kinds == ("bonus", "queens_dragon")
    view = await create_table(catalog, SPEC)
    assert (view.table_id, view.status, view.config.max_bet) == ("pearl", TableStatus.OPEN, 250)
    with pytest.raises(TableExists):
        await create_table(catalog, SPEC)
    changed = await change_table(catalog, "pearl", {"max_bet": 500, "foul": "lose"})
    assert changed.config.max_bet == 500
    assert changed.config.min_bet == 25  # the other settings stay
    assert changed.config.rules.foul.value == "lose"
    with pytest.raises(BadTableConfig, match="keeps them"):
        await change_table(catalog, "pearl", {"seats": 4})
    with pytest.raises(BadTableConfig, match="id"):
        await change_table(catalog, "pearl", {"id": "other"})
    with pytest.raises(BadTableConfig, match="at most its maximum"):
        await change_table(catalog, "pearl", {"min_bet": 1000})
    with pytest.raises(NoSuchTable):
        await change_table(catalog, "nope", {"max_bet": 10})
    with pytest.raises(NoSuchTable):
        await close_table(catalog, "nope")
    closing = await close_table(catalog, "pearl")
    assert closing.status is TableStatus.CLOSING
    assert (await close_table(catalog, "pearl")).status is TableStatus.CLOSING
    with pytest.raises(TableNotOpen) as refused:
        await change_table(catalog, "pearl", {"max_bet": 100})
    assert refused.value.status is TableStatus.CLOSING
    await catalog.closed("pearl")
    with pytest.raises(TableNotOpen):
        await close_table(catalog, "pearl")
    with pytest.raises(TableExists):  # a closed table's id is not reused
        await create_table(catalog, SPEC)
    assert [v.table_id for v in await list_tables(catalog)] == sorted(built_in)
    every = await list_tables(catalog, closed=True)
    pearl = next(v for v in every if v.table_id == "pearl")
    assert (pearl.status.value, pearl.as_dict()["max_bet"]) == ("closed", 500)
    assert [v.table_id for v in every] == sorted({*built_in, "pearl"})


@pytest.mark.asyncio
async def test_the_table_commands(redis_url: str, catalog: TableCatalog) -> None:
    """``paigow-server table``: exit 0 with the table shown, 2 for bad settings, 1 for
    a refusal (a taken id, a missing table)."""
    await seed_catalog(catalog, [])
    base = ["--redis-url", redis_url, "table"]
    done = run_cli([*base, "create", "pearl", "Pearl", "max_bet=250", "--json"])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["max_bet"] == 250
    done = run_cli([*base, "create", "pearl", "Again"])
    assert done.returncode == 1
    assert "exists" in done.stderr
    done = run_cli([*base, "change", "pearl", "min_bet=500"])
    assert done.returncode == 2
    assert "at most its maximum" in done.stderr
    done = run_cli([*base, "change", "pearl", "denominations=[5, 25]", "foul=lose"])
    assert done.returncode == 0, done.stderr
    done = run_cli([*base, "close", "nope"])
    assert done.returncode == 1
    done = run_cli([*base, "close", "pearl"])
    assert done.returncode == 0, done.stderr
    done = run_cli([*base, "list", "--json"])
    (listed,) = json.loads(done.stdout)
    assert (listed["id"], listed["status"], listed["denominations"]) == (
        "pearl",
        "closing",
        [5, 25],
    )


@pytest.mark.asyncio
async def test_the_commission_rounding_is_an_option_like_the_others(
    catalog: TableCatalog, redis_client: redis.asyncio.Redis
) -> None:
    # docs/RULES.md, "Commission": a whole table's limits must be bets it takes.
    await seed_catalog(catalog, [])
    # A setting added since 0.1.0, away from its default: taken once every live node
    # reads it (one of today's here).
    nodes = ClusterStore(redis_client)
    await nodes.beat("today#1", 60_000, announcement("today"))
    assert await nodes.switch_formats(frozenset({TABLE_CONFIG_FIELDS})) == {TABLE_CONFIG_FIELDS}
    await create_table(catalog, {**SPEC, "commission_rounding": "up"})
    with pytest.raises(BadTableConfig, match="multiples of 100"):  # chips of 25: 100
        await change_table(catalog, "pearl", {"commission_rounding": "whole"})
    changed = await change_table(
        catalog, "pearl", {"commission_rounding": "whole", "min_bet": 100, "max_bet": 200}
    )
    assert changed.config.main_bet_unit == 100
    (listed,) = [v.as_dict() for v in await list_tables(catalog)]
    assert (listed["commission_rounding"], listed["min_bet"]) == ("whole", 100)
    with pytest.raises(BadTableConfig, match="commission_rounding is one of"):
        await change_table(catalog, "pearl", {"commission_rounding": "nearest"})


@pytest.mark.asyncio
async def test_a_commission_free_table_waits_for_every_node_to_read_it(
    catalog: TableCatalog, redis_client: redis.asyncio.Redis
) -> None:
    # docs/RULES.md, "Commission-free tables": commission_free is a setting added since
    # 0.1.0, so the catalog takes it away from its default only once every live node
    # reads the settings' newer format; at its default it is stored as 0.1.0 stores it.
    await seed_catalog(catalog, [])
    with pytest.raises(BadTableConfig, match="node"):
        await create_table(catalog, {**SPEC, "commission_free": "ez"})
    await create_table(catalog, {**SPEC, "commission_free": "none"})
    nodes = ClusterStore(redis_client)
    await nodes.beat("today#1", 60_000, announcement("today"))
    assert await nodes.switch_formats(frozenset({TABLE_CONFIG_FIELDS})) == {TABLE_CONFIG_FIELDS}
    changed = await change_table(catalog, "pearl", {"commission_free": "nine_low"})
    assert changed.config.rules.commission_free.value == "nine_low"
    (listed,) = [v.as_dict() for v in await list_tables(catalog)]
    assert listed["commission_free"] == "nine_low"
    with pytest.raises(BadTableConfig, match="commission_free is one of"):
        await change_table(catalog, "pearl", {"commission_free": "tiger"})
    with pytest.raises(BadTableConfig, match="commission-free table takes no commission"):
        await change_table(
            catalog, "pearl", {"commission_rounding": "whole", "min_bet": 100, "max_bet": 200}
        )


PROGRESSIVE_SPEC = {
    "side_bets": {"progressive": {"jackpot": "mine", "seed": 5, "contribution_bps": 9000}}
}
"""A table naming a jackpot of its own (docs/RULES.md, "Progressive jackpot": only a
tables file's ``[jackpot.<name>]`` can)."""


@pytest.mark.asyncio
async def test_a_table_of_the_catalog_cannot_name_a_jackpot(
    catalog: TableCatalog, redis_client: redis.asyncio.Redis, redis_url: str
) -> None:
    """With every format on, so that side bets are taken: created or changed through
    the catalog (the command, the API's functions), a table's ``side_bets.progressive``
    is refused with :class:`JackpotNotHere`, nothing written; a change keeping a tables
    file's jackpot as it is, or dropping it, is taken."""
    fortune = table_config(
        {
            "id": "fortune",
            "name": "Fortune",
            "side_bets": {
                "progressive": {
                    "jackpot": "fortune",
                    "seed": 10_000,
                    "contribution_bps": 1000,
                    "wager": 5,
                }
            },
        },
        "fortune",
    )
    await seed_catalog(catalog, [fortune])  # as a tables file's jackpot seeds it
    nodes = ClusterStore(redis_client)
    await nodes.beat("today#1", 60_000, announcement("today"))
    assert await nodes.switch_formats(frozenset({TABLE_CONFIG_FIELDS, SIDE_WAGERS})) == {
        TABLE_CONFIG_FIELDS,
        SIDE_WAGERS,
    }
    rev = await catalog.rev()
    with pytest.raises(JackpotNotHere, match=r"\[jackpot.<name>\]"):
        await create_table(catalog, {**SPEC, **PROGRESSIVE_SPEC})
    with pytest.raises(JackpotNotHere):
        await change_table(catalog, "fortune", PROGRESSIVE_SPEC)  # another jackpot
    seed_raised = {"progressive": {**describe_table(fortune)["side_bets"]["progressive"]}}
    seed_raised["progressive"]["seed"] = 1
    with pytest.raises(JackpotNotHere):
        await change_table(catalog, "fortune", {"side_bets": seed_raised})  # its seed
    assert await catalog.rev() == rev  # nothing written
    assert [v.table_id for v in await list_tables(catalog)] == ["fortune"]
    # The command says so, as for any bad setting (exit 2).
    done = run_cli(
        [
            "--redis-url",
            redis_url,
            "table",
            "create",
            "pearl",
            "Pearl",
            'side_bets={progressive={jackpot="mine", seed=5, contribution_bps=9000}}',
        ]
    )
    assert done.returncode == 2
    assert "[jackpot.<name>]" in done.stderr
    # Other settings change with the tables file's jackpot kept, the other side bets too
    # (a side_bets change that leaves the jackpot out keeps it: the catalog could not
    # give it back); chips its wager cannot be made of are refused.
    kept = await change_table(catalog, "fortune", {"max_bet": 500})
    assert kept.config.side_bets == fortune.side_bets
    envy = await change_table(catalog, "fortune", {"side_bets": {"envy": {}}})
    assert [kind for kind, _ in envy.config.side_bets] == ["envy", "progressive"]
    assert dict(envy.config.side_bets)["progressive"] == dict(fortune.side_bets)["progressive"]
    rev = await catalog.rev()
    with pytest.raises(BadTableConfig, match="wager of 5 is not made of"):
        await change_table(catalog, "fortune", {"denominations": [25, 100], "min_bet": 25})
    assert await catalog.rev() == rev
    # Dropping it is taken when said.
    dropped = await change_table(catalog, "fortune", {"side_bets": {"progressive": False}})
    assert dropped.config.side_bets == ()
    with pytest.raises(JackpotNotHere):  # and it cannot come back this way
        await change_table(catalog, "fortune", {"side_bets": describe_table(fortune)["side_bets"]})
