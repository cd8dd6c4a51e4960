"""The terminal table stakes every staked side bet the table offers
(`table_info.side_bets`): `b` moves the chips on from the main bet to the bonus and to
each side bet, `+`/`-` step the bet by the table's unit (the main bet's
`main_bet_unit`, a side bet's `bet_unit`), a stake past a side bet's limit is refused
in words, the bet goes out with its `wagers`, and the seat's result counts them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio

from clients.core import Client
from clients.tui import PaigowApp
from server.app import App
from server.config import Settings
from tests.clients.helpers import screen_text
from tests.clients.tui.helpers import SIZE, press_alone, sit_at, until_app
from tests.helpers import url

# Chips of 5 and 25 under the `whole` rounding: main bets step by 20, side bets by 5.
TABLES = """
[[table]]
id = "dealer"
name = "Dealer bets"
min_bet = 20
max_bet = 400
denominations = [5, 25]
commission_rounding = "whole"
bonus_min = 5
bonus_max = 50
min_buy_in = 100
max_buy_in = 5000
betting_ms = 20000
dealing_ms = 200
setting_ms = 30000
revealing_ms = 300
settling_ms = 5000

[table.side_bets.queens_dragon]
min = 5
max = 50

[table.side_bets.tiger9]
min = 5
max = 25
"""


@pytest_asyncio.fixture
async def dealer_app(
    server_settings: Settings, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    """A server whose one table offers the Queen's Dragon and the Tiger 9."""
    tables = tmp_path / "dealer.toml"
    tables.write_text(TABLES)
    server = App(replace(server_settings, tables_file=tables))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.mark.asyncio
async def test_side_bets_are_staked_stepped_and_placed(dealer_app: App) -> None:
    tui = PaigowApp(Client(url(dealer_app), name="Dee"))
    async with tui.run_test(size=SIZE) as pilot:
        table = await sit_at(pilot, tui, "dealer")
        model = table.model
        await until_app(pilot, lambda: table.info is not None and model.my_seat is not None)
        await until_app(pilot, lambda: model.phase in ("idle", "betting"))
        # The main bet steps by 20, from nothing and from a chip of 5.
        await pilot.press("plus", "plus")
        assert table.pending_bet == 40
        await pilot.press("1", "plus")
        assert table.pending_bet == 60
        await pilot.press("minus")
        assert table.pending_bet == 40
        # b: the bonus, then the Queen's Dragon, then the Tiger 9, then the main bet.
        await pilot.press("b")
        assert table.target == "bonus"
        await pilot.press("b")
        assert table.target == "queens_dragon"
        await until_app(pilot, lambda: "chips go on the Queen's Dragon (5-50)" in screen_text(tui))
        await pilot.press("1", "plus")  # a chip of 5, a step of 5
        await pilot.press("b")
        assert table.target == "tiger9"
        await pilot.press("2", "1")  # 25, then 30: past its 25
        await until_app(
            pilot, lambda: "the most you can put on the Tiger 9 here is 25" in screen_text(tui)
        )
        await pilot.press("minus", "minus")
        assert (table.pending_bet, table.pending_side) == (40, {"queens_dragon": 10, "tiger9": 15})
        row = str(table.chips_text())
        assert " Queen's D…  10" in row, row
        assert " Tiger 9  15" in row, row
        await pilot.press("b")
        assert table.target == "amount"
        await pilot.press("enter")
        await until_app(
            pilot,
            lambda: (
                model.my_seat is not None
                and sorted((w.kind, w.amount) for w in model.my_seat.wagers)
                == [("queens_dragon", 10), ("tiger9", 15)]
            ),
        )
        assert model.my_seat is not None
        assert model.my_seat.bet == 40
        assert table.pending_side == {}
        await until_app(
            pilot, lambda: "bet 40 + Queen's Dragon 10 + Tiger 9 15 placed" in screen_text(tui)
        )
        played = model.round
        await until_app(pilot, lambda: model.phase == "setting" and bool(model.your_cards), 20)
        await press_alone(pilot, "w")  # a key that changes the seat acts only alone
        await until_app(pilot, lambda: model.results.get(model.your_seat or 0) is not None, 30)
        result = model.results[model.your_seat or 0]
        assert result is not None
        stakes = {w.kind: (w.stake, w.payout) for w in result.wagers}
        assert stakes["queens_dragon"] in ((10, 0), (10, 510))
        assert stakes["tiger9"] in ((15, 0), (15, 15 * 31))
        assert model.round == played
