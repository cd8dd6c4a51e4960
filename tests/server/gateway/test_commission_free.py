"""What protocol/PROTOCOL.md promises of a commission-free table, over real sockets:
``table_info`` tells its ``commission_free`` rule and a ``commission_pct`` of 0, so a
client of an earlier minor shows no commission (sections 8 and 14, minor 5)."""

from __future__ import annotations

import pytest

from protocol.messages import GetTableInfo
from protocol.structs import TableInfo
from tests.helpers import url
from tests.server.conftest import StartApp
from tests.server.helpers import Client

TABLES = """
[[table]]
id = "ez"
name = "EZ"
commission_free = "ez"

[[table]]
id = "tiger"
name = "Tiger"
commission_free = "nine_low"
commission_pct = 5

[[table]]
id = "plain"
name = "Plain"
"""


@pytest.mark.asyncio
async def test_table_info_tells_the_commission_free_rule(start_app: StartApp) -> None:
    app = await start_app(tables=TABLES)
    client = await Client.hello(url(app))
    try:
        infos = {}
        for table_id in ("ez", "tiger", "plain"):
            info = await client.ok(GetTableInfo, table_id=table_id)
            assert isinstance(info, TableInfo)
            infos[table_id] = (info.commission_free, info.commission_pct)
        assert infos == {"ez": ("ez", 0), "tiger": ("nine_low", 0), "plain": ("none", 5)}
    finally:
        await client.close()
