"""What the screens show fits the terminal: at 80x24 nothing that matters is cut, long
names give way with an ellipsis, the rules page and the guide are whole."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from clients import handrank
from clients.core import Client
from clients.tui import LobbyScreen, PaigowApp, TableScreen, TextScreen
from clients.tui.guide import GUIDE
from protocol.codec import encode
from protocol.messages import OkReply, SeedReveal, Snapshot
from protocol.structs import FoulRule, TableInfo, TableSummary
from server.app import App
from tests.clients.helpers import screen_text
from tests.clients.tui.helpers import SIZE, lobby_listed, sit_at, until_app, vector
from tests.helpers import url

LONG_NAME = "The Imperial Jade Dragon Parlour"  # 32 characters, the most a name has
LONG_HAND = "Two pair, aces and kings, with a queen and a joker"


def _fixtures() -> tuple[Snapshot, SeedReveal, TableInfo]:
    snapshot, seed, info = vector("snapshot_settling"), vector("seed"), vector("ok_table_info")
    assert isinstance(snapshot, Snapshot)
    assert isinstance(seed, SeedReveal)
    assert isinstance(info, OkReply)
    assert isinstance(info.result, TableInfo)
    return snapshot, seed, info.result


async def _table(size: tuple[int, int], snapshot: Snapshot, info: TableInfo, *feed: bytes) -> str:
    """The table screen of ``snapshot`` (and events ``feed``) drawn at ``size``, as text."""
    client = Client("ws://127.0.0.1:9/")
    tui = PaigowApp(client, connect=False)
    async with tui.run_test(size=size) as pilot:
        tui.infos[snapshot.table_id] = info
        await tui.push_screen(TableScreen(snapshot.table_id))
        client.feed(encode(snapshot))
        for frame in feed:
            client.feed(frame)
        await until_app(pilot, lambda: "Dealer" in screen_text(tui))
        await pilot.pause()
        return screen_text(tui)


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(80, 24), (120, 30)])
async def test_long_names_give_way_and_what_matters_stays(size: tuple[int, int]) -> None:
    """A 32-character table name and long hand names: the status line keeps the phase,
    countdown and fairness mark; every seat line ends within the width (cut with "…")."""
    snapshot, seed, info = _fixtures()
    hands = tuple(replace(h, high_name=LONG_HAND) for h in snapshot.hands)
    revealing = replace(snapshot, phase="revealing", results=(), hands=hands, deadline_ms=0)
    later = encode(replace(seed, seq=snapshot.seq + 1))
    text = await _table(size, revealing, replace(info, name=LONG_NAME), later)
    width = size[0]
    lines = text.splitlines()
    status = lines[0]
    assert "REVEALING" in status
    assert "0.0s" in status
    assert "✓ verified" in status
    assert (LONG_NAME in status) == (width >= 120)
    seats = [line for line in lines if line[:3] in ("▶ 1", "  2", "  6")]
    assert len(seats) == 3
    for line in seats:
        assert len(line.rstrip()) <= width
        assert line.rstrip().endswith("…") or LONG_HAND in line


@pytest.mark.asyncio
@pytest.mark.parametrize("foul", ["reject", "lose"])
async def test_the_foul_hint_is_whole_at_80_columns(foul: FoulRule) -> None:
    snapshot, _, info = _fixtures()
    setting = replace(snapshot, phase="setting", results=(), hands=(), your_low=(), deadline_ms=0)
    cards = setting.your_cards
    [low, *_] = [pair for pair in _pairs(cards) if handrank.preview(cards, pair)[2]]
    client = Client("ws://127.0.0.1:9/")
    tui = PaigowApp(client, connect=False)
    async with tui.run_test(size=SIZE) as pilot:
        tui.infos[setting.table_id] = replace(info, foul=foul)
        screen = TableScreen(setting.table_id)
        await tui.push_screen(screen)
        client.feed(encode(setting))
        screen.selected = list(low)
        screen.redraw()
        hint = (
            "FOUL: the low hand outranks the high; here a foul LOSES the bet"
            if foul == "lose"
            else "FOUL: the high hand must outrank the low; pick again"
        )
        await until_app(pilot, lambda: hint in screen_text(tui))


def _pairs(cards: tuple[int, ...]) -> list[tuple[int, int]]:
    return [(a, b) for i, a in enumerate(cards) for b in cards[i + 1 :]]


@pytest.mark.asyncio
async def test_the_rules_page_shows_the_whole_pay_table_at_80x24(app: App) -> None:
    tui = PaigowApp(Client(url(app), name="Ida"))
    async with tui.run_test(size=SIZE) as pilot:
        table = await sit_at(pilot, tui, "fast")
        await until_app(pilot, lambda: table.info is not None)
        assert table.info is not None
        labels = [line.label for line in table.info.paytable]
        assert len(labels) >= 10
        await pilot.press("i")
        await until_app(pilot, lambda: isinstance(tui.screen, TextScreen))
        await until_app(pilot, lambda: all(label in screen_text(tui) for label in labels))
        text = screen_text(tui)
        # The last line, with its pay
        assert re.search(r"│ straight +2 ", text), text
        assert "foul       refused: set again" in text


@pytest.mark.asyncio
async def test_g_opens_how_to_play_and_the_ranking(app: App) -> None:
    """``g``, from the lobby or a table: how to play and the ranking of hands; the page
    scrolls to its end with the keys, and ``g`` again closes it."""
    tui = PaigowApp(Client(url(app), name="Gil"))
    async with tui.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        await until_app(pilot, lambda: "How to play Pai Gow Poker" in screen_text(tui))
        await pilot.press("end")
        await until_app(pilot, lambda: "✓ verified (or ✗ with the reason)" in screen_text(tui))
        assert "five aces        four aces and the joker" in screen_text(tui)
        await pilot.press("g")
        await until_app(pilot, lambda: not isinstance(tui.screen, TextScreen))
        # The lobby's footer lists the key (drawn again once the lobby has the focus back).
        await until_app(pilot, lambda: "g Guide" in screen_text(tui))
        table = await sit_at(pilot, tui, "slow")
        await until_app(pilot, lambda: table.info is not None)
        await pilot.press("g")
        await until_app(pilot, lambda: "How to play Pai Gow Poker" in screen_text(tui))


def test_guide_lines_fit_the_dialog_at_80_columns() -> None:
    plain = GUIDE.replace("[b]", "").replace("[/b]", "")
    assert max(len(line) for line in plain.splitlines()) <= 72


PLAYER_KEYS = ("Bet/Set", "b Bonus", "x Clear", "r Rebet", "s Suggest")


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(80, 24), (120, 30)])
async def test_a_watcher_sees_nothing_of_a_players_keys(app: App, size: tuple[int, int]) -> None:
    """Watching: no chip row, no card tiles, none of a player's keys in the footer, and a
    player's key says how to sit; seated at the same table, all of them are back."""
    tui = PaigowApp(Client(url(app), name="Wes"))
    async with tui.run_test(size=size) as pilot:
        await until_app(pilot, lambda: lobby_listed(tui))
        await pilot.press("w")  # the first table, "fast"
        await until_app(pilot, lambda: isinstance(tui.screen, TableScreen))
        table = tui.screen
        assert isinstance(table, TableScreen)
        await until_app(pilot, lambda: table.info is not None and table.model.synced)
        await until_app(pilot, lambda: "esc Lobby" in screen_text(tui))
        text = screen_text(tui)
        assert "watching: press esc for the lobby" in text
        assert not [key for key in PLAYER_KEYS if key in text]
        assert "[1]" not in text  # the chip row
        assert "╭─ 1" not in text  # the cards
        await pilot.press("3")
        await until_app(pilot, lambda: "you are watching this table" in screen_text(tui))
        assert table.pending_bet == 0
        await pilot.press("escape")
        await sit_at(pilot, tui, "fast")
        seated = tui.screen
        assert isinstance(seated, TableScreen)
        await until_app(pilot, lambda: seated.model.my_seat is not None)
        await until_app(pilot, lambda: all(key in screen_text(tui) for key in PLAYER_KEYS))
        assert "[1] 5" in screen_text(tui)


LOBBY = (
    TableSummary("jade", "Jade (10-500)", "betting", 6, 2, 1, 10, 500, 100, 100, 5000),
    TableSummary("dragon", LONG_NAME, "revealing", 6, 6, 120, 1000, 10000, 250, 500, 20000),
    TableSummary("lotus", "Lotus (5-100)", "settling", 6, 0, 0, 5, 100, 0, 50, 2000),
)


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(80, 24), (120, 30)])
async def test_the_lobby_fits_whatever_the_phase(size: tuple[int, int]) -> None:
    """The longest phase words, a 32-character name and wide limits: every column is on
    screen and whole but the name, which gives way with "…" (the buy-in and bonus were
    cut off at 80 columns once a phase read "betting")."""
    tui = PaigowApp(Client("ws://127.0.0.1:9/"), connect=False)
    async with tui.run_test(size=size) as pilot:
        lobby = tui.screen
        assert isinstance(lobby, LobbyScreen)
        lobby.summaries = list(LOBBY)
        lobby.draw_tables()
        await until_app(pilot, lambda: "Lotus" in screen_text(tui))
        lines = screen_text(tui).splitlines()
        [header] = [line for line in lines if " Name " in line]
        for word in ("Phase", "Seats", "Watch", "Bet", "Bonus", "Buy-in"):
            assert f" {word} " in header + " "
        for t in LOBBY:
            [row] = [line for line in lines if f"{t.players}/{t.seats}" in line]
            assert len(row.rstrip()) <= size[0]
            assert f" {t.phase} " in row
            assert f" {t.min_bet}-{t.max_bet} " in row
            assert row.rstrip().endswith(f" {t.buy_in_min}-{t.buy_in_max}")
        assert (LONG_NAME in "\n".join(lines)) == (size[0] >= 120)
        if size[0] >= 120:
            assert " Table " in header
