"""The full-screen table, driven as a person would with Textual's pilot."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from clients import handrank
from clients.autoplay import play_rounds
from clients.core import Client
from clients.tui import (
    HELP,
    AmountScreen,
    HelpScreen,
    HistoryScreen,
    LobbyScreen,
    PaigowApp,
    TableScreen,
)
from protocol.codec import encode
from protocol.messages import OkReply, SeedReveal, Snapshot
from protocol.structs import TableInfo
from server.app import App
from tests.clients.helpers import screen_text
from tests.clients.tui.helpers import (
    SIZE,
    lobby_listed,
    press_alone,
    sit_at,
    until_app,
    vector,
)
from tests.helpers import url

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.asyncio
async def test_join_bet_set_and_see_the_result(app: App) -> None:
    tui = PaigowApp(Client(url(app), name="Pat"))
    async with tui.run_test(size=SIZE) as pilot:
        await until_app(pilot, lambda: lobby_listed(tui))
        assert "fast" in screen_text(tui)
        await pilot.press("j")  # the first table, "fast"; the buy-in prompt opens
        await until_app(pilot, lambda: isinstance(tui.screen, AmountScreen))
        await pilot.press("enter")  # accept the default buy-in
        await until_app(pilot, lambda: isinstance(tui.screen, TableScreen))
        table = tui.screen
        assert isinstance(table, TableScreen)
        await until_app(pilot, lambda: table.info is not None)
        await pilot.press("2", "3", "enter")  # chips 10 + 25, then bet 35
        model = table.model
        await until_app(pilot, lambda: model.phase == "setting" and bool(model.your_cards))
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
        await until_app(pilot, lambda: model.verification is not None)
        await until_app(pilot, lambda: "✓ verified" in screen_text(tui))
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
        assert tui.screen_stack[-1] is table  # tui.screen, which mypy still takes for help


def _mask(text: str) -> str:
    """Hide what changes from run to run: the countdown."""
    return re.sub(r"\b\d+\.\ds\b", "#.#s", text)


@pytest.mark.asyncio
async def test_table_screen_matches_the_golden() -> None:
    """The worked example of protocol/PROTOCOL.md, section 13 (fixed seed, cards, results),
    drawn at 80x24."""
    client = Client("ws://127.0.0.1:9/")
    tui = PaigowApp(client, connect=False)
    snapshot = vector("snapshot_settling")
    seed = vector("seed")
    info = vector("ok_table_info")
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
        # The seed's check is the last line the feed adds; then what is still to draw.
        await until_app(pilot, lambda: "round 42: verified ✓" in screen_text(tui))
        await pilot.pause()
        text = _mask(screen_text(tui))
    golden = GOLDEN / "table_80x24.txt"
    if os.environ.get("PAIGOW_UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


@pytest.mark.asyncio
async def test_events_for_a_table_screen_without_widgets_only_update_the_model() -> None:
    """Before its compose and while the app shuts down, a table screen has no widgets;
    events still arrive for it (one such crashed the client at exit): they update the
    model, and their log lines show once it is drawn."""
    client = Client("ws://127.0.0.1:9/")
    tui = PaigowApp(client, connect=False)
    snapshot = vector("snapshot_settling")
    assert isinstance(snapshot, Snapshot)
    async with tui.run_test(size=SIZE) as pilot:
        screen = TableScreen(snapshot.table_id)  # not pushed: not composed yet
        assert not screen.drawn()
        screen.log_line("round 2: betting")
        screen.redraw()
        screen.tick()
        await tui.push_screen(screen)  # its log line was kept for its drawing
        await until_app(pilot, lambda: "round 2: betting" in screen_text(tui))


@pytest.mark.asyncio
async def test_news_for_a_lobby_without_widgets_is_kept_for_its_drawing(app: App) -> None:
    """Before its compose and while the app shuts down, the lobby has no widgets;
    the table list, balances and the connection's news still arrive (a balance read as
    the app shut down crashed the client at exit; a list read before the compose waited
    for the next refresh, a line said then was lost). All of it shows once it is drawn:
    here it all comes first, whatever the machine's speed."""
    client = Client(url(app), name="Early")
    tui = PaigowApp(client, connect=False)
    async with tui.run_test(size=SIZE) as pilot:
        await client.connect()
        lobby = LobbyScreen()  # not pushed: not composed yet
        assert not lobby.drawn()
        await lobby._refresh()  # the list and the balance, read as on connecting
        assert lobby.summaries
        assert tui.balances is not None
        lobby.update_status()
        lobby.log_line("news before the lobby was drawn")
        assert lobby.selected() is None
        await tui.push_screen(lobby)  # returns once mounted, long before a refresh is due
        assert lobby_listed(tui)
        await until_app(pilot, lambda: "news before the lobby was drawn" in screen_text(tui))
        text = screen_text(tui)
        assert f"Account {tui.balances.account} chips" in text
        assert "connected" in text
        assert lobby.selected() == lobby.summaries[0]
        await client.close()


@pytest.mark.asyncio
async def test_notes_said_as_the_app_starts_show_in_the_lobby() -> None:
    """The app says its notes (a claimed account's) as it pushes the lobby, before the
    lobby's widgets exist: they show in its log once they do."""
    notes = ["first note from the start", "second note from the start"]
    tui = PaigowApp(Client("ws://127.0.0.1:9/"), connect=False, notes=notes)
    async with tui.run_test(size=SIZE) as pilot:
        await until_app(pilot, lambda: notes[1] in screen_text(tui))
        text = screen_text(tui)
        assert text.index(notes[0]) < text.index(notes[1])


def _my_seat_line(text: str, name: str) -> str:
    [line] = [line for line in text.splitlines() if line.startswith("▶") and name in line]
    return line


@pytest.mark.asyncio
async def test_sit_out_key(app: App) -> None:
    """``p`` sits the round out (the seat reads ``out``); a refusal is shown, not raised."""
    tui = PaigowApp(Client(url(app), name="Sid"))
    async with tui.run_test(size=SIZE) as pilot:
        table = await sit_at(pilot, tui, "slow")
        model = table.model
        await until_app(pilot, lambda: model.my_seat is not None)
        assert model.my_seat is not None
        assert model.my_seat.status == "playing"
        assert " out " not in _my_seat_line(screen_text(tui), "Sid")
        await press_alone(pilot, "p")
        await until_app(
            pilot, lambda: model.my_seat is not None and model.my_seat.status == "sitting_out"
        )
        await until_app(pilot, lambda: "sitting this round out" in screen_text(tui))
        text = screen_text(tui)
        assert " out " in _my_seat_line(text, "Sid")
        assert "sitting this round out" in text
        await pilot.press("question_mark")  # the key is listed in the help
        assert "p      sit this round out" in screen_text(tui)
        await pilot.press("escape")
        # Without a seat the key is not a watcher's: it says how to sit, and sends nothing.
        await press_alone(pilot, "l")
        await until_app(pilot, lambda: model.your_seat is None)
        await press_alone(pilot, "p")
        await until_app(pilot, lambda: "you are watching this table" in screen_text(tui))


def _history_rounds(text: str) -> list[int]:
    """The round numbers of the history records on screen, top to bottom."""
    return [int(n) for n in re.findall(r"^#(\d+) fast ", text, flags=re.MULTILINE)]


@pytest.mark.asyncio
async def test_history_loads_older_pages(app: App) -> None:
    """Three rounds, two per page: ``m`` adds the older page; every round once, in order."""
    tui = PaigowApp(Client(url(app), name="Hal"), history_page_size=2)
    async with tui.run_test(size=SIZE) as pilot:
        await until_app(pilot, lambda: tui.client.connected and isinstance(tui.screen, LobbyScreen))
        stats = await play_rounds(tui.client, "fast", bet=10, rounds=3)
        played = sorted(stats.played, reverse=True)
        assert len(played) == 3
        await pilot.press("h")
        assert isinstance(tui.screen, HistoryScreen)
        history = tui.screen
        await until_app(pilot, lambda: history.shown == 2 and not history.loading)
        # The status line is set after the page's records are written.
        await until_app(pilot, lambda: "m: older rounds" in screen_text(tui))
        text = screen_text(tui)
        assert _history_rounds(text) == played[:2]
        assert "m: older rounds" in text
        assert "m Older rounds" in text
        await pilot.press("m")
        await until_app(pilot, lambda: history.complete and not history.loading)
        await until_app(pilot, lambda: "all 3 rounds" in screen_text(tui))
        text = screen_text(tui)
        assert _history_rounds(text) == played
        assert "all 3 rounds" in text
        # One numbering on a record: the seat heading it is the one "you" played.
        assert re.search(r"^#\d+ fast seat (\d): .*\n.*\n    you, seat \1:", text, re.MULTILINE)
        assert "Older rounds" not in text  # nothing left to load: the key is hidden
        await pilot.press("m")  # nothing older: no request, nothing added
        assert not history.loading  # a request would be in flight from the key on
        assert history.shown == 3
        assert _history_rounds(screen_text(tui)) == played


def _account_line(tui: PaigowApp) -> str:
    """The lobby's account line on screen ("" when there is not exactly one)."""
    lines = [line for line in screen_text(tui).splitlines() if line.startswith(" Account ")]
    return lines[0].strip() if len(lines) == 1 else ""


@pytest.mark.asyncio
async def test_lobby_shows_the_account_balance(app: App, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guest's starting balance, then the buy-in, rebuy and cash out taken into account."""
    # No timed refresh during the test: what the lobby shows comes from the moves themselves.
    monkeypatch.setattr(LobbyScreen, "REFRESH_S", 3600.0)
    start = app.settings.guest_balance
    tui = PaigowApp(Client(url(app), name="Lou"))
    async with tui.run_test(size=SIZE) as pilot:
        await until_app(pilot, lambda: _account_line(tui) == f"Account {start} chips")
        table = await sit_at(pilot, tui, "fast")  # the default buy-in: 200
        buy_in = 200
        # Read before the lobby is back on screen (which refreshes it): the join did it.
        assert tui.balances is not None
        assert tui.balances.account == start - buy_in
        await press_alone(pilot, "u")
        await until_app(pilot, lambda: isinstance(tui.screen, AmountScreen))
        await pilot.press("3", "0", "0", "enter")  # rebuy 300
        await until_app(
            pilot, lambda: tui.balances is not None and tui.balances.account == start - 500
        )
        await press_alone(pilot, "o")
        await until_app(pilot, lambda: isinstance(tui.screen, AmountScreen))
        await pilot.press("1", "5", "0", "enter")  # cash out 150
        await until_app(
            pilot, lambda: tui.balances is not None and tui.balances.account == start - 350
        )
        await pilot.press("escape")
        assert isinstance(tui.screen, LobbyScreen)
        expected = f"Account {start - 350} chips   at the tables 350: fast 350"
        await until_app(pilot, lambda: _account_line(tui) == expected)
        assert table.model.my_seat is not None
        assert table.model.my_seat.balance == 350
        await pilot.press("w")  # back to the table (watching it), and leave the seat
        await until_app(pilot, lambda: isinstance(tui.screen, TableScreen))
        await press_alone(pilot, "l")
        await until_app(pilot, lambda: tui.balances is not None and tui.balances.account == start)
        await pilot.press("escape")
        await until_app(pilot, lambda: _account_line(tui) == f"Account {start} chips")


def test_help_lines_fit_the_dialog_at_80_columns() -> None:
    """The help dialog leaves 72 columns of text at 80x24: a longer line wraps mid-phrase."""
    plain = re.sub(r"\[/?b\]", "", HELP)
    assert max(len(line) for line in plain.splitlines()) <= 72
