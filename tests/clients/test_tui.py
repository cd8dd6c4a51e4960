"""The full-screen table, driven as a person would with Textual's pilot."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from textual.pilot import Pilot

from clients import handrank
from clients.autoplay import play_rounds
from clients.core import Client
from clients.tui import HELP, HelpScreen, HistoryScreen, LobbyScreen, PaigowApp, TableScreen
from protocol.codec import decode_server, encode
from protocol.messages import OkReply, SeedReveal, Snapshot
from protocol.structs import TableInfo
from protocol.vectors import SERVER_TO_CLIENT, load_vectors
from server.app import App
from tests.clients.helpers import screen_text, url_of

GOLDEN = Path(__file__).parent / "golden"
SIZE = (80, 24)


@pytest.mark.asyncio
async def test_join_bet_set_and_see_the_result(app: App) -> None:
    tui = PaigowApp(Client(url_of(app), name="Pat"))
    async with tui.run_test(size=SIZE) as pilot:
        await pilot.pause()
        while not (isinstance(tui.screen, LobbyScreen) and tui.screen.summaries):
            await pilot.pause(0.05)
        assert "fast" in screen_text(tui)
        await pilot.press("j")  # the first table, "fast"; the buy-in prompt opens
        await pilot.pause()
        await pilot.press("enter")  # accept the default buy-in
        while not isinstance(tui.screen, TableScreen):
            await pilot.pause(0.05)
        table = tui.screen
        while table.info is None:
            await pilot.pause(0.05)
        await pilot.press("2", "3", "enter")  # chips 10 + 25, then bet 35
        model = table.model
        while not (model.phase == "setting" and model.your_cards):
            await pilot.pause(0.05)
        assert table.pending_bet == 0
        assert model.my_seat is not None
        assert model.my_seat.bet == 35
        a, b = handrank.legal_lows(model.your_cards)[0]
        for card in (a, b):
            await pilot.click(f"#card-{model.your_cards.index(card) + 1}")
        assert set(table.selected) == {a, b}
        preview = str(table.preview_text())
        assert "high" in preview
        assert "FOUL" not in preview
        await pilot.press("enter")
        while model.verification is None:
            await pilot.pause(0.05)
        await pilot.pause(0.1)
        text = screen_text(tui)
        result = model.my_result
        assert result is not None
        assert result.outcome.upper() in text
        assert "✓ verified" in text
        assert table.choice is not None
        assert table.choice.high_name in text
        await pilot.press("question_mark")
        assert isinstance(tui.screen, HelpScreen)
        await pilot.press("escape")
        assert tui.screen is table


def _vector(name: str) -> object:
    for v in load_vectors("messages"):
        if v["direction"] == SERVER_TO_CLIENT and v["name"] == name:
            return decode_server(bytes.fromhex(v["hex"]))
    raise KeyError(name)


def _mask(text: str) -> str:
    """Hide what changes from run to run: the countdown."""
    return re.sub(r"\b\d+\.\ds\b", "#.#s", text)


@pytest.mark.asyncio
async def test_table_screen_matches_the_golden() -> None:
    """The worked example of PROTOCOL.md (fixed seed, cards, results) drawn at 80x24."""
    client = Client("ws://127.0.0.1:9/")
    tui = PaigowApp(client, connect=False)
    snapshot = _vector("snapshot_settling")
    seed = _vector("seed")
    info = _vector("ok_table_info")
    assert isinstance(snapshot, Snapshot)
    assert isinstance(seed, SeedReveal)
    assert isinstance(info, OkReply)
    assert isinstance(info.result, TableInfo)
    async with tui.run_test(size=SIZE) as pilot:
        tui.infos[snapshot.table_id] = info.result
        await tui.push_screen(TableScreen(snapshot.table_id))
        # Far past deadlines: the countdown reads 0.0s whatever the date.
        client.feed(encode(replace(snapshot, deadline_ms=0)))
        client.feed(encode(replace(seed, seq=snapshot.seq + 1)))
        await pilot.pause(0.3)
        text = _mask(screen_text(tui))
    golden = GOLDEN / "table_80x24.txt"
    if os.environ.get("PAIGOW_UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


async def _sit_at(pilot: Pilot[int], tui: PaigowApp, table_id: str) -> TableScreen:
    """From the lobby, move to ``table_id``, join with the default buy-in, await its screen."""
    while not (isinstance(tui.screen, LobbyScreen) and tui.screen.summaries):
        await pilot.pause(0.05)
    lobby = tui.screen
    row = [t.table_id for t in lobby.summaries].index(table_id)
    await pilot.press(*["down"] * row, "j")
    await pilot.pause()
    await pilot.press("enter")  # accept the default buy-in
    while not isinstance(tui.screen, TableScreen):
        await pilot.pause(0.05)
    return tui.screen


async def _until(pilot: Pilot[int], predicate: Callable[[], bool], within: float = 10) -> None:
    async with asyncio.timeout(within):
        while not predicate():
            await pilot.pause(0.05)


def _my_seat_line(text: str, name: str) -> str:
    [line] = [line for line in text.splitlines() if line.startswith("▶") and name in line]
    return line


@pytest.mark.asyncio
async def test_sit_out_key(app: App) -> None:
    """``p`` sits the round out (the seat reads ``out``); a refusal is shown, not raised."""
    tui = PaigowApp(Client(url_of(app), name="Sid"))
    async with tui.run_test(size=SIZE) as pilot:
        table = await _sit_at(pilot, tui, "slow")
        model = table.model
        await _until(pilot, lambda: model.my_seat is not None)
        assert model.my_seat is not None
        assert model.my_seat.status == "playing"
        assert " out " not in _my_seat_line(screen_text(tui), "Sid")
        await pilot.press("p")
        await _until(
            pilot, lambda: model.my_seat is not None and model.my_seat.status == "sitting_out"
        )
        await pilot.pause(0.1)
        text = screen_text(tui)
        assert " out " in _my_seat_line(text, "Sid")
        assert "sitting this round out" in text
        await pilot.press("question_mark")  # the key is listed in the help
        assert "p      sit this round out" in screen_text(tui)
        await pilot.press("escape")
        # Without a seat the server refuses, and the refusal reads like any other error.
        await pilot.press("l")
        await _until(pilot, lambda: model.your_seat is None)
        await pilot.press("p")
        await _until(pilot, lambda: "you need a seat at this table" in screen_text(tui))


def _history_rounds(text: str) -> list[int]:
    """The round numbers of the history records on screen, top to bottom."""
    return [int(n) for n in re.findall(r"^#(\d+) fast ", text, flags=re.MULTILINE)]


@pytest.mark.asyncio
async def test_history_loads_older_pages(app: App) -> None:
    """Three rounds, two per page: ``m`` adds the older page; every round once, in order."""
    tui = PaigowApp(Client(url_of(app), name="Hal"), history_page_size=2)
    async with tui.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: tui.client.connected and isinstance(tui.screen, LobbyScreen))
        stats = await play_rounds(tui.client, "fast", bet=10, rounds=3)
        played = sorted(stats.played, reverse=True)
        assert len(played) == 3
        await pilot.press("h")
        assert isinstance(tui.screen, HistoryScreen)
        history = tui.screen
        await _until(pilot, lambda: history.shown == 2 and not history.loading)
        await pilot.pause(0.1)
        text = screen_text(tui)
        assert _history_rounds(text) == played[:2]
        assert "m: older rounds" in text
        assert "m Older rounds" in text
        await pilot.press("m")
        await _until(pilot, lambda: history.complete and not history.loading)
        await pilot.pause(0.1)
        text = screen_text(tui)
        assert _history_rounds(text) == played
        assert "all 3 rounds" in text
        # One numbering on a record: the seat heading it is the one "you" played.
        assert re.search(r"^#\d+ fast seat (\d): .*\n.*\n    you, seat \1:", text, re.MULTILINE)
        assert "Older rounds" not in text  # nothing left to load: the key is hidden
        await pilot.press("m")  # nothing older: no request, nothing added
        await pilot.pause(0.2)
        assert _history_rounds(screen_text(tui)) == played


def _account_line(text: str) -> str:
    [line] = [line for line in text.splitlines() if line.startswith(" Account ")]
    return line.strip()


@pytest.mark.asyncio
async def test_lobby_shows_the_account_balance(app: App, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guest's starting balance, then the buy-in, rebuy and cash out taken into account."""
    # No timed refresh during the test: what the lobby shows comes from the moves themselves.
    monkeypatch.setattr(LobbyScreen, "REFRESH_S", 3600.0)
    start = app.settings.guest_balance
    tui = PaigowApp(Client(url_of(app), name="Lou"))
    async with tui.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: tui.balances is not None)
        await pilot.pause(0.1)
        assert _account_line(screen_text(tui)) == f"Account {start} chips"
        table = await _sit_at(pilot, tui, "fast")  # the default buy-in: 200
        buy_in = 200
        # Read before the lobby is back on screen (which refreshes it): the join did it.
        assert tui.balances is not None
        assert tui.balances.account == start - buy_in
        await pilot.press("u", "3", "0", "0", "enter")  # rebuy 300
        await _until(
            pilot, lambda: tui.balances is not None and tui.balances.account == start - 500
        )
        await pilot.press("o", "1", "5", "0", "enter")  # cash out 150
        await _until(
            pilot, lambda: tui.balances is not None and tui.balances.account == start - 350
        )
        await pilot.press("escape")
        assert isinstance(tui.screen, LobbyScreen)
        await pilot.pause(0.2)
        expected = f"Account {start - 350} chips   at the tables 350: fast 350"
        assert _account_line(screen_text(tui)) == expected
        assert table.model.my_seat is not None
        assert table.model.my_seat.balance == 350
        await pilot.press("w")  # back to the table (watching it), and leave the seat
        await _until(pilot, lambda: isinstance(tui.screen, TableScreen))
        await pilot.press("l")
        await _until(pilot, lambda: tui.balances is not None and tui.balances.account == start)
        await pilot.press("escape")
        await pilot.pause(0.2)
        assert _account_line(screen_text(tui)) == f"Account {start} chips"


def test_help_lines_fit_the_dialog_at_80_columns() -> None:
    """The help dialog leaves 72 columns of text at 80x24: a longer line wraps mid-phrase."""
    plain = re.sub(r"\[/?b\]", "", HELP)
    assert max(len(line) for line in plain.splitlines()) <= 72
