"""The table screen as a new player meets it: building a bet, the house way's suggestion,
fouls, sitting out, coming back to a seat, rebuying; driven with Textual's pilot against
a real in-process server."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from itertools import combinations
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio
from textual.widgets import RichLog

from clients import handrank
from clients.core import Client
from clients.tui import AmountScreen, LobbyScreen, PaigowApp, TableScreen
from clients.tui.dialogs import ConfirmScreen
from server.app import App
from server.config import Settings
from tests.clients.helpers import screen_text
from tests.clients.tui.helpers import SIZE, lobby_listed, press_alone, sit_at, until_app
from tests.helpers import url

FOUL_LOSES = """
[[table]]
id = "lose"
name = "Fouls lose"
min_bet = 10
max_bet = 500
denominations = [5, 10, 25, 100]
min_buy_in = 100
max_buy_in = 5000
foul = "lose"
betting_ms = 20000
dealing_ms = 200
setting_ms = 30000
revealing_ms = 300
settling_ms = 5000
"""
# settling_ms: the result is on screen until the next round opens, for the settling
# time; long enough to be read on a loaded machine (300 ms went by unseen).


@pytest_asyncio.fixture
async def foul_app(
    server_settings: Settings, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    """A server whose one table loses a fouled split's bet."""
    tables = tmp_path / "lose.toml"
    tables.write_text(FOUL_LOSES)
    server = App(replace(server_settings, tables_file=tables))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def _words(tui: PaigowApp) -> str:
    """The screen's words, one space between each, without the boxes' borders (a
    dialog's text wraps anywhere)."""
    return " ".join(re.sub("[│┃]", " ", screen_text(tui)).split())


def _log(screen: TableScreen) -> str:
    """Every line of a table screen's log, scrolled out of sight or not."""
    log = screen.query_one("#log", RichLog)
    return "\n".join(strip.text.rstrip() for strip in log.lines)


def _next_betting(table: TableScreen, played: int) -> Callable[[], bool]:
    """Whether betting of a round after ``played`` is open at ``table``."""
    return lambda: table.model.phase == "betting" and table.model.round > played


def _seat_line(tui: PaigowApp, name: str) -> str:
    [line] = [line for line in screen_text(tui).splitlines() if line.startswith("▶")]
    assert name in line
    return line


@pytest.mark.asyncio
async def test_the_suggestion_shows_no_split_of_an_earlier_round(app: App) -> None:
    """After ``s`` in round 2, the preview is the suggestion, never round 1's "SET"."""
    tui = PaigowApp(Client(url(app), name="Sue"))
    async with tui.run_test(size=SIZE) as pilot:
        table = await sit_at(pilot, tui, "slow")
        model = table.model
        await until_app(pilot, lambda: table.info is not None and model.my_seat is not None)
        await pilot.press("3", "enter")  # bet 25: the only player, betting closes
        await until_app(pilot, lambda: model.phase == "setting" and bool(model.your_cards))
        first = model.round
        await press_alone(pilot, "w")  # the house way sets round 1's hand
        await until_app(pilot, lambda: " SET " in str(table.preview_text()))
        await until_app(pilot, lambda: model.phase == "betting" and model.round > first, 20)
        await pilot.press("3", "enter")
        await until_app(pilot, lambda: model.phase == "setting" and bool(model.your_cards), 20)
        assert " SET " not in str(table.preview_text())
        await pilot.press("s")
        await until_app(pilot, lambda: "house way: " in screen_text(tui))
        await until_app(pilot, lambda: len(table.selected) == 2)
        preview = str(table.preview_text())
        assert " SET " not in preview
        assert "enter to set" in preview


@pytest.mark.asyncio
async def test_building_a_bet_says_what_it_does(app: App) -> None:
    """Chips past what you hold are refused with a word; Enter with nothing, or with only
    a bonus, says why nothing was placed; a bet of every chip held asks first; the bonus
    toggle ends with the bet placed."""
    tui = PaigowApp(Client(url(app), name="Bea"))
    async with tui.run_test(size=SIZE) as pilot:
        table = await sit_at(pilot, tui, "slow")  # the default buy-in: 200
        model = table.model
        await until_app(pilot, lambda: table.info is not None and model.my_seat is not None)
        assert "[1] 5  [2] 10  [3] 25  [4] 100  [5] 500" in screen_text(tui)  # this table's
        assert "chip keys at this table: 1=5  2=10  3=25  4=100  5=500" in _log(table)
        await pilot.press("enter")
        await until_app(
            pilot, lambda: "build a bet first with the chip keys 1-5" in screen_text(tui)
        )
        await pilot.press("b", "1", "enter")
        await until_app(pilot, lambda: "the bonus bet goes with a main bet" in screen_text(tui))
        await press_alone(pilot, "x")
        await pilot.press("b", "5")  # 500, more than the 200 held
        await until_app(pilot, lambda: "you hold 200 here" in screen_text(tui))
        assert table.pending_bet == 0
        await pilot.press("4", "b", "4")  # 100 on the bet, 100 on the bonus: every chip
        assert (table.pending_bet, table.pending_bonus, table.bonus_mode) == (100, 100, True)
        await pilot.press("enter")
        await until_app(pilot, lambda: "Bet 200: every chip you hold at this table?" in _words(tui))
        await pilot.press("n")  # not placed, still built
        await until_app(pilot, lambda: isinstance(tui.screen, TableScreen))
        assert model.my_seat is not None
        assert model.my_seat.bet == 0
        assert table.pending_bet == 100
        await pilot.press("enter")
        await until_app(pilot, lambda: isinstance(tui.screen, ConfirmScreen))
        await pilot.press("y")
        await until_app(pilot, lambda: model.my_seat is not None and model.my_seat.bet == 100)
        assert model.my_seat.bonus == 100
        assert not table.bonus_mode  # the next chips go to the main bet
        assert str(table.chips_text()).endswith(" bet  0  bonus  0   balance 0")


@pytest.mark.asyncio
async def test_a_foul_where_fouls_lose_asks_first_and_the_result_says_foul(foul_app: App) -> None:
    tui = PaigowApp(Client(url(foul_app), name="Fay"))
    async with tui.run_test(size=SIZE) as pilot:
        table = await sit_at(pilot, tui, "lose")
        model = table.model
        await until_app(pilot, lambda: table.info is not None and model.my_seat is not None)
        for _ in range(3):  # a hand with no fouling split is rare: the next round then
            await pilot.press("3", "enter")  # bet 25
            await until_app(pilot, lambda: model.phase == "setting" and bool(model.your_cards))
            cards = model.your_cards
            fouls = [low for low in combinations(cards, 2) if handrank.preview(cards, low)[2]]
            if fouls:
                break
            await press_alone(pilot, "w")
            await until_app(pilot, _next_betting(table, model.round), within=20)
        else:
            pytest.fail("three hands without a fouling split")
        for card in fouls[0]:
            await pilot.press(str(model.your_cards.index(card) + 1))
        await until_app(pilot, lambda: "here a foul LOSES the bet" in screen_text(tui))
        await pilot.press("enter")
        await until_app(pilot, lambda: "a foul loses the bet. Set it anyway?" in _words(tui))
        await pilot.press("y")
        await until_app(pilot, lambda: model.my_result is not None)
        await until_app(pilot, lambda: "LOSE foul" in screen_text(tui))
        assert re.search(
            r"^seat \d: LOSE \(a foul\) bet 25 lost: net -25", _log(table), re.MULTILINE
        )
        assert "FOUL: the low hand outranked the high hand" in screen_text(tui)


@pytest.mark.asyncio
async def test_betting_again_ends_sitting_out(app: App) -> None:
    """``p`` marks the seat ``out``; a bet in the same betting phase takes the mark off."""
    tui = PaigowApp(Client(url(app), name="Sid"))
    async with tui.run_test(size=SIZE) as pilot, Client(url(app), name="Other") as other:
        await other.join("slow", 500)  # a second player who does not bet: betting stays open
        table = await sit_at(pilot, tui, "slow")
        model = table.model
        await until_app(pilot, lambda: table.info is not None and model.my_seat is not None)
        await press_alone(pilot, "p")
        await until_app(pilot, lambda: " out " in _seat_line(tui, "Sid"))
        await pilot.press("3", "enter")
        await until_app(pilot, lambda: model.my_seat is not None and model.my_seat.bet == 25)
        await until_app(pilot, lambda: " out " not in _seat_line(tui, "Sid"))
        assert model.my_seat is not None
        assert model.my_seat.status == "playing"
        assert model.phase == "betting"


@pytest.mark.asyncio
async def test_joining_a_table_where_you_sit_goes_back_to_the_seat(app: App) -> None:
    """Join on a table where the player still sits: no buy-in asked, none taken."""
    tui = PaigowApp(Client(url(app), name="Ray"))
    async with tui.run_test(size=SIZE) as pilot:
        table = await sit_at(pilot, tui, "slow")
        await until_app(pilot, lambda: table.model.my_seat is not None)
        await pilot.press("escape")
        await until_app(pilot, lambda: lobby_listed(tui) and tui.balances is not None)
        assert tui.balances is not None
        account = tui.balances.account
        lobby = tui.screen
        assert isinstance(lobby, LobbyScreen)
        row = [t.table_id for t in lobby.summaries].index("slow")
        await pilot.press(*["down"] * row, "j")
        await until_app(pilot, lambda: isinstance(tui.screen, TableScreen))
        assert not any(isinstance(s, AmountScreen) for s in tui.screen_stack)
        await until_app(pilot, lambda: "you still sit at Slow with 200 chips" in screen_text(tui))
        await tui.refresh_balance()
        assert tui.balances.account == account


@pytest.mark.asyncio
async def test_the_rebuy_prompt_shows_the_range(app: App) -> None:
    tui = PaigowApp(Client(url(app), name="Rob"))
    async with tui.run_test(size=SIZE) as pilot:
        table = await sit_at(pilot, tui, "slow")  # 200 of the account's 10,000: 9,800 left
        await until_app(pilot, lambda: table.model.my_seat is not None and tui.balances is not None)
        await press_alone(pilot, "u")
        await until_app(pilot, lambda: isinstance(tui.screen, AmountScreen))
        await until_app(pilot, lambda: "1..9800" in _words(tui))
        text = _words(tui)
        assert "you hold 200 here" in text
        assert "the table's most is 10000" in text
