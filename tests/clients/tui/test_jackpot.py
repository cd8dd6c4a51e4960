"""The terminal client shows a progressive jackpot's meter live (protocol minor 7): in
the lobby's Jackpot column, on the table's jackpot line and on its rules page, each
changing as the meter does, with no refresh of the lobby. A text and an SVG picture of
each screen are kept in ``.artifacts/tui/``."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest
import redis.asyncio
from rich.console import Console

from clients.core import Client
from clients.tui import LobbyScreen, PaigowApp, TableScreen
from clients.tui.dialogs import info_text
from clients.tui.lobby import lobby_rows
from protocol.examples import examples
from protocol.messages import OkReply
from protocol.structs import TableInfo, TableList
from server.app import App
from server.config import Settings
from server.store.jackpot.meters import JackpotStore
from tests.clients.helpers import screen_text
from tests.clients.tui.helpers import SIZE, lobby_listed, sit_at, until_app
from tests.helpers import url
from tests.server.processes import ROOT

SHOTS = ROOT / ".artifacts" / "tui"
JACKPOT = """
[jackpot.grand]
seed = 1000
contribution_bps = 10000
wager = 5
tables = ["fast"]
"""
_ROUNDS = itertools.count(1)


def example(name: str) -> object:
    found = dict(examples())[name]
    assert isinstance(found, OkReply)
    return found.result


async def contribute(store: JackpotStore, chips: int) -> int:
    done = await store.contribute(
        "grand",
        seed=1000,
        contribution_bps=10_000,
        table_id="fast",
        round_no=next(_ROUNDS),
        seat=0,
        player="ann",
        wager=chips,
    )
    return done.meter


def keep(tui: PaigowApp, name: str) -> str:
    """The screen as text, kept beside an SVG of it; the text."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    text = screen_text(tui)
    (SHOTS / f"{name}.txt").write_text(text, encoding="utf-8")
    tui.save_screenshot(f"{name}.svg", str(SHOTS))
    return text


def test_the_lobby_has_a_jackpot_column_only_where_a_table_offers_one() -> None:
    listed = example("ok_tables_jackpot")
    assert isinstance(listed, TableList)
    columns, rows = lobby_rows(listed.tables, 80, {"fortune": 12_345})
    assert columns[-1][0] == "Jackpot"
    assert rows[0][-1] == "12,345"
    plain = example("ok_tables")
    assert isinstance(plain, TableList)
    columns, _ = lobby_rows(plain.tables, 80, {})
    assert "Jackpot" not in [h for h, _ in columns]
    wide = [*plain.tables, *listed.tables]
    columns, rows = lobby_rows(wide, 80, {"fortune": 12_345})
    assert [r[-1] for r in rows] == ["-", "-", "12,345"]
    assert sum(w + 2 for _, w in columns) <= 80


def test_the_rules_page_shows_the_jackpot_and_its_pay_table() -> None:
    info = example("ok_table_info_jackpot")
    assert isinstance(info, TableInfo)
    console = Console(width=80, record=True, color_system=None)
    console.print(info_text(info, None))
    text = console.export_text()
    assert "jackpot    fortune, wager 5" in text
    assert "meter 12,345" in text
    assert "jackpot pays (% of meter, or to 1)" in text
    assert "Natural 7-card SF" in text
    assert "100%" in text
    lines = text.splitlines()
    assert any("Four of a kind" in line and line.rstrip().endswith("75") for line in lines)
    assert max(len(line) for line in text.splitlines()) <= 80
    console = Console(width=80, record=True, color_system=None)
    console.print(info_text(dataclasses.replace(info, jackpot=None), None))
    assert "jackpot" not in console.export_text()


@pytest.mark.asyncio
async def test_the_meter_changes_live_in_the_lobby_and_at_the_table(
    server_settings: Settings,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tables = tmp_path / "jackpot-tables.toml"
    assert server_settings.tables_file is not None
    tables.write_text(server_settings.tables_file.read_text() + JACKPOT)
    app = App(dataclasses.replace(server_settings, tables_file=tables))
    await app.start()
    # The lobby reads its list once: what changes after it came by a `jackpot` message.
    monkeypatch.setattr(LobbyScreen, "REFRESH_S", 3600.0)
    store = JackpotStore(redis_client)
    tui = PaigowApp(Client(url(app), name="Pat"))
    try:
        async with tui.run_test(size=SIZE) as pilot:
            await until_app(pilot, lambda: lobby_listed(tui))
            await until_app(pilot, lambda: "grand" in tui.client.jackpots)
            assert "Jackpot" in screen_text(tui)
            meter = await contribute(store, 234)
            assert meter == 1234
            await until_app(pilot, lambda: "1,234" in screen_text(tui))
            keep(tui, "lobby")

            table = await sit_at(pilot, tui, "fast")
            assert isinstance(table, TableScreen)
            await until_app(pilot, lambda: "JACKPOT grand" in screen_text(tui))
            assert "1,234 chips" in screen_text(tui)
            meter = await contribute(store, 1000)
            await until_app(pilot, lambda: f"{meter:,} chips" in screen_text(tui))
            text = keep(tui, "table")
            assert "progressive wager 5" in text

            await pilot.press("i")
            await until_app(pilot, lambda: "jackpot pays" in screen_text(tui))
            # The page's meter is the live one, not the one read as the table opened.
            assert f"meter {meter:,}" in keep(tui, "rules")
    finally:
        await app.stop()
