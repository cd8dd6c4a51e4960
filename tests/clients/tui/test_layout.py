"""What the screens show fits the terminal: at 80x24 nothing that matters is cut, long
names give way with an ellipsis, the rules page and the guide are whole."""

from __future__ import annotations

from dataclasses import replace

import pytest

from clients import handrank
from clients.core import Client
from clients.tui import PaigowApp, TableScreen, TextScreen
from clients.tui.guide import GUIDE
from protocol.codec import encode
from protocol.messages import OkReply, SeedReveal, Snapshot
from protocol.structs import FoulRule, TableInfo
from server.app import App
from tests.clients.helpers import screen_text
from tests.clients.tui.helpers import SIZE, sit_at, until_app, vector
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
        assert "straight                            2" in text  # the last line, with its pay
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
