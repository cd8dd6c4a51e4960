"""The tables file: it seeds the catalog once, whose changes apply between rounds; a bad
file is refused."""

from __future__ import annotations

import time

import pytest
import redis.asyncio

from protocol.messages import Bet, Clear, GetTableInfo, Join
from server.auth import tokens
from server.catalog import change_table
from server.config import Settings
from server.rules.options import CommissionFree
from server.rules.settlement import commission
from server.store import TableCatalog
from server.tables_file import (
    TablesFileError,
    describe_table,
    load_tables,
    parse_tables,
    table_config,
)
from tests.conftest import FAST_TABLES
from tests.helpers import url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, close_all


@pytest.mark.asyncio
async def test_a_table_changed_in_the_catalog_applies_between_rounds(
    start_app: StartApp, server_settings: Settings, redis_client: redis.asyncio.Redis
) -> None:
    secret = server_settings.token_secret
    assert secret is not None
    token = tokens.issue(secret.encode(), "alice", 600, int(time.time()))
    first = await start_app()
    assert first.stores is not None
    await first.stores.accounts.credit("alice", 1000, "test-credit")
    other = await Client.hello(url(first))  # seated without a bet: betting stays open
    client = await Client.hello(url(first), token=token)
    try:
        await other.ok(Join, table_id="slow", buy_in=500)
        await client.ok(Join, table_id="slow", buy_in=500)
        await client.ok(Bet, table_id="slow", amount=10)
    finally:
        await close_all([client, other])
    await first.stop()
    # The file seeded the catalog at the first start: changed now, it changes nothing.
    slow = 'id = "slow"\nname = "Slow"'
    ignored = await start_app(tables=FAST_TABLES.replace(slow, slow + "\nmin_bet = 70"))
    assert ignored.hosts["slow"].config.min_bet == 10
    await ignored.stop()
    # The catalog is the truth: changed while no server runs, it applies at the start.
    await change_table(TableCatalog(redis_client), "slow", {"min_bet": 50})
    second = await start_app()
    host = second.hosts["slow"]
    assert host.state is not None
    # A bet is held: the bet already placed keeps the limits it was placed under.
    assert host.state.config.min_bet == 10
    client = await Client.hello(url(second), token=token)
    try:
        info = await client.ok(GetTableInfo, table_id="slow")
        assert info.min_bet == 50
        await client.ok(Clear, table_id="slow")
        await client.error(Bet, "bet_limits", table_id="slow", amount=10)
        assert host.state.config.min_bet == 50
        await client.ok(Bet, table_id="slow", amount=50)
    finally:
        await client.close()


def test_a_tables_file_with_an_unknown_pay_table_is_refused() -> None:
    with pytest.raises(TablesFileError, match="pay table"):
        parse_tables('[[table]]\nid = "t"\nname = "T"\nbonus_pay_table = "Standard"\n')


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ('"sideways"', "commission_rounding is one of 'down', 'up', 'whole'"),
        ("1", "commission_rounding is one of"),
        (
            '"whole"',
            "with commission_rounding = 'whole' at 5%, min_bet and max_bet are multiples of 20",
        ),
    ],
)
def test_a_bad_commission_rounding_is_refused_naming_the_table(value: str, error: str) -> None:
    with pytest.raises(TablesFileError, match=f"table 1 \\(t\\): {error}"):
        parse_tables(f'[[table]]\nid = "t"\nname = "T"\ncommission_rounding = {value}\n')


def test_every_built_in_table_collects_a_commission_on_its_minimum_bet() -> None:
    # docs/RULES.md, "Commission": rounded down, a bet under 20 at 5 % would pay none.
    tables = {t.table_id: t for t in load_tables(None)}
    for config in tables.values():
        rules = config.rules
        assert config.min_bet % config.main_bet_unit == 0
        if rules.commission_free is not CommissionFree.NONE:
            continue  # no commission at any bet
        assert commission(config.min_bet, rules.commission_pct, rules.commission_rounding) > 0
    rounding = {
        t: c.rules.commission_rounding.value
        for t, c in tables.items()
        if c.rules.commission_free is CommissionFree.NONE
    }
    assert rounding == {"jade": "up", "dragon": "down", "lotus": "whole", "fortune": "up"}
    assert tables["ez"].rules.commission_free is CommissionFree.EZ
    assert tables["tiger"].rules.commission_free is CommissionFree.NINE_LOW


def test_the_built_in_fortune_and_ez_tables_offer_their_side_bets() -> None:
    tables = {t.table_id: t for t in load_tables(None)}
    assert tables["fortune"].side_kinds == ("bonus", "envy")
    envy = tables["fortune"].side_options("envy")
    assert (envy.min_bonus, dict(envy.pays)["four_of_a_kind"]) == (5, 5)
    assert tables["fortune"].rules.bonus_pay_table == "jackpot-5000"
    assert tables["ez"].side_kinds == ("bonus", "queens_dragon")
    assert tables["ez"].limits("queens_dragon") == (5, 50)
    assert tables["ez"].side_options("queens_dragon").odds == 50
    assert tables["tiger"].side_kinds == ("bonus", "tiger9")
    assert tables["tiger"].side_options("tiger9").odds == 30
    for plain in ("jade", "dragon", "lotus"):
        assert tables[plain].side_bets == ()


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ('"tiger"', "commission_free is one of 'none', 'ez', 'nine_low', not 'tiger'"),
        ("true", "commission_free is one of"),
        ('"ez"\ncommission_rounding = "whole"\nmin_bet = 20', "a commission-free table takes no"),
    ],
)
def test_a_bad_commission_free_is_refused_naming_the_table(value: str, error: str) -> None:
    with pytest.raises(TablesFileError, match=f"table 1 \\(t\\): {error}"):
        parse_tables(f'[[table]]\nid = "t"\nname = "T"\ncommission_free = {value}\n')


def test_a_commission_free_table_reads_and_describes_itself() -> None:
    (config,) = parse_tables('[[table]]\nid = "t"\nname = "T"\ncommission_free = "nine_low"\n')
    assert config.rules.commission_free is CommissionFree.NINE_LOW
    assert describe_table(config)["commission_free"] == "nine_low"
    assert (
        describe_table(parse_tables('[[table]]\nid = "u"\nname = "U"\n')[0])["commission_free"]
        == "none"
    )


def test_side_bets_are_offered_with_their_options_and_read_back() -> None:
    (t,) = parse_tables(
        '[[table]]\nid = "f"\nname = "Fortune"\n'
        '[table.side_bets.envy]\nmin_bonus = 10\npays = [["four_of_a_kind", 40]]\n'
    )
    assert t.side_kinds == ("bonus", "envy")
    assert t.limits("envy") == (10, 0)
    assert table_config(describe_table(t), "again") == t
    for bad, says in (
        ("[table.side_bets.tiger]\n", "not a side bet"),
        ("[table.side_bets.envy]\nmin_bonus = 0\n", "at least 1"),
        ("[table.side_bets.envy]\nbogus = 1\n", "no such option"),
        ('[table.side_bets.envy]\npays = [["pair", 5]]\n', "not a bonus class"),
        ("[table.side_bets.bonus]\n", "not a side bet a table adds"),
    ):
        with pytest.raises(TablesFileError, match=says):
            parse_tables('[[table]]\nid = "f"\nname = "F"\n' + bad)
