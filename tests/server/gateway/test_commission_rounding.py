"""What protocol/PROTOCOL.md promises of a table's commission rounding, over real
sockets: ``table_info`` tells it with the main bet's unit (sections 8 and 14, minor 4),
and a ``whole`` table refuses a main bet off that unit with ``commission_not_whole``,
not retryable (section 10)."""

from __future__ import annotations

import pytest

from protocol.messages import Bet, GetTableInfo, Join
from protocol.structs import TableInfo
from tests.helpers import url
from tests.server.conftest import StartApp
from tests.server.helpers import Client

TABLES = """
[[table]]
id = "whole"
name = "Whole"
min_bet = 20
max_bet = 500
commission_rounding = "whole"

[[table]]
id = "up"
name = "Up"
commission_rounding = "up"

[[table]]
id = "down"
name = "Down"
"""


@pytest.mark.asyncio
async def test_table_info_tells_the_rounding_and_a_whole_table_refuses_other_bets(
    start_app: StartApp,
) -> None:
    app = await start_app(tables=TABLES)
    client = await Client.hello(url(app))
    try:
        infos = {}
        for table_id in ("whole", "up", "down"):
            info = await client.ok(GetTableInfo, table_id=table_id)
            assert isinstance(info, TableInfo)
            infos[table_id] = (info.commission_rounding, info.bet_unit, info.main_bet_unit)
        assert infos == {"whole": ("whole", 5, 20), "up": ("up", 5, 5), "down": ("down", 5, 5)}
        await client.ok(Join, table_id="whole", buy_in=500)
        error = await client.error(Bet, "commission_not_whole", table_id="whole", amount=30)
        assert not error.retryable
        assert "20 or 40" in error.message
        await client.error(Bet, "bet_limits", table_id="whole", amount=10)
        await client.ok(Bet, table_id="whole", amount=40)
    finally:
        await client.close()
