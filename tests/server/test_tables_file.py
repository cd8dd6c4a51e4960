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
from server.store import TableCatalog
from server.tables_file import TablesFileError, parse_tables
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
