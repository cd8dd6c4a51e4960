"""What protocol/PROTOCOL.md promises of the gateway, over real sockets: the number of
tables a session may watch, what ``table_info`` tells, what a refused ``join`` sends,
and which error wins when two apply (section 10)."""

from __future__ import annotations

import pytest

from protocol import limits as L
from protocol.codec import encode
from protocol.messages import (
    ErrorReply,
    GetTableInfo,
    Join,
    Leave,
    OkReply,
    Ping,
    Pong,
    Rebuy,
    Snapshot,
    Watch,
)
from protocol.structs import TableInfo
from tests.helpers import url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, close_all

MANY = "".join(
    f'[[table]]\nid = "t{i}"\nname = "Table {i}"\n' for i in range(L.MAX_TABLES_PER_SESSION + 1)
)
TENS = """
[[table]]
id = "tens"
name = "Tens"
denominations = [10, 25]
bonus_min = 10
bonus_max = 50
"""


@pytest.mark.asyncio
async def test_more_tables_than_a_session_may_watch_is_too_large(start_app: StartApp) -> None:
    # Sections 6 (`watch`, `join`) and 12: "tables watched or seated per session: 16".
    app = await start_app(tables=MANY)
    client = await Client.hello(url(app))
    try:
        for i in range(L.MAX_TABLES_PER_SESSION):
            await client.ok(Watch, table_id=f"t{i}")
        last = f"t{L.MAX_TABLES_PER_SESSION}"
        await client.error(Watch, "too_large", table_id=last)
        await client.error(Join, "too_large", table_id=last, buy_in=100)
        await client.ok(Watch, table_id="t0")  # one already watched is no more
        # The table before the limit (section 10, "When two errors apply").
        await client.error(Watch, "no_such_table", table_id="nope")
        assert not client.table(last)
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_table_info_tells_the_bonus_minimum_and_the_unit_of_the_chips(
    start_app: StartApp,
) -> None:
    app = await start_app(tables=TENS)
    client = await Client.hello(url(app))
    try:
        info = await client.ok(GetTableInfo, table_id="tens")
        assert isinstance(info, TableInfo)
        # The greatest common divisor of the chips, here smaller than the smallest chip.
        assert (info.denominations, info.bet_unit) == ((10, 25), 5)
        assert (info.min_bonus, info.max_bonus) == (10, 50)
        await client.error(Join, "bet_limits", table_id="tens", buy_in=103)
        await client.ok(Join, table_id="tens", buy_in=105)
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_a_refused_join_sends_the_snapshot_then_the_error_then_nothing(
    start_app: StartApp,
) -> None:
    app = await start_app(guest_balance=1000)
    alice = await Client.hello(url(app), label="a")
    bob = await Client.hello(url(app), label="b")
    try:
        await alice.ok(Join, table_id="slow", buy_in=100, seat=0)
        before = len(bob.messages)
        await bob.error(Join, "seat_taken", table_id="slow", buy_in=100, seat=0)
        snapshot, error = bob.messages[before:]
        assert isinstance(snapshot, Snapshot)
        assert snapshot.table_id == "slow"
        assert isinstance(error, ErrorReply)
        await alice.ok(Leave, table_id="slow")  # its `seat` event went out at once
        # A pong bob asks for now follows that event on his connection, had he been
        # sent it: he was not.
        assert isinstance(await bob.call(Ping), Pong)
        assert [type(m) for m in bob.messages[before + 2 :]] == [Pong]
    finally:
        await close_all([alice, bob])


@pytest.mark.asyncio
async def test_a_money_request_s_rid_is_checked_before_the_seat(start_app: StartApp) -> None:
    # Section 10, "When two errors apply": a reused rid is refused before anything else
    # about the request (here, not being seated any more) is looked at.
    app = await start_app()
    client = await Client.hello(url(app))
    try:
        await client.ok(Join, table_id="slow", buy_in=100)
        await client.send(encode(Leave(rid="money-1", table_id="slow")))
        await client.wait(lambda: client.replies.get("money-1"))
        await client.send(encode(Rebuy(rid="money-1", table_id="slow", amount=100)))
        await client.wait(lambda: len(client.replies.get("money-1", [])) == 2)
        left, reused = client.replies["money-1"]
        assert isinstance(left, OkReply)
        assert isinstance(reused, ErrorReply)
        assert reused.code == "rid_reused"
        await client.error(Rebuy, "not_seated", table_id="slow", amount=100)
    finally:
        await client.close()
