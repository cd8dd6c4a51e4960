"""The terminal client shows a progressive jackpot's meter live (protocol minor 7): in
the lobby's Jackpot column, on the table's jackpot line and on its rules page, each
changing as the meter does, with no refresh of the lobby. A text and an SVG picture of
each screen are kept in ``.artifacts/tui/``."""

from __future__ import annotations

import dataclasses
import itertools
import re
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
from protocol.structs import PayLine, SideBetInfo, TableInfo, TableList
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
    lines = text.splitlines()
    assert lines[0].split() == ["JACKPOT", "fortune", "meter", "12,345", "wager", "5", "a", "round"]
    head = next(line for line in lines if line.startswith("pays on your seven cards"))
    assert head.split()[-3:] == ["jackpot", "for", "1"]
    # The jackpot's lines are the bonus's hands, one line each with every bet's pay.
    rows = lines[lines.index(head) + 1 :]
    # The natural's class, which only the jackpot pays here, first: the best hand.
    assert rows[0].split() == ["Natural", "7-card", "SF", "-", "-", "100%"]
    assert any(line.startswith("four of a kind") and line.rstrip().endswith("75") for line in lines)
    assert max(len(line) for line in lines) <= 80
    console = Console(width=80, record=True, color_system=None)
    console.print(info_text(dataclasses.replace(info, jackpot=None), None))
    assert "jackpot" not in console.export_text().lower()


def test_a_progressive_wager_is_listed_once_where_the_jackpot_lists_it() -> None:
    """The progressive is a side bet (minor 6) and the jackpot's pay table (minor 7): its
    lines are the jackpot column's, not a column of their own beside it."""
    info = example("ok_table_info_jackpot")
    assert isinstance(info, TableInfo)
    progressive = SideBetInfo(
        "progressive", "Progressive", 5, 5, (PayLine("four_of_a_kind", "four of a kind", 74),)
    )
    info = dataclasses.replace(info, side_bets=(*info.side_bets, progressive))
    console = Console(width=80, record=True, color_system=None)
    console.print(info_text(info, None))
    text = console.export_text()
    assert "progressive" not in text.lower()
    assert "74" not in text
    four = [line for line in text.splitlines() if line.startswith("four of a kind")]
    assert len(four) == 1
    assert four[0].split()[-1] == "75"
    # A server that lists the wager with no jackpot: its column then shows it.
    console = Console(width=80, record=True, color_system=None)
    console.print(info_text(dataclasses.replace(info, jackpot=None), None))
    assert "progressive to 1" in console.export_text()


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
            await until_app(pilot, lambda: "jackpot for 1" in screen_text(tui))
            # The page's meter is the live one, not the one read as the table opened.
            assert f"JACKPOT grand  meter {meter:,}" in keep(tui, "rules")
            # At 80x24 the whole page is on the first screen: every pay line, once.
            assert "↓ more" not in screen_text(tui)
            assert screen_text(tui).count("four of a kind") == 1
    finally:
        await app.stop()


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_the_shipped_fortune_table_reads_at_80x24(
    server_settings: Settings, redis_client: redis.asyncio.Redis
) -> None:
    """The built-in Fortune table (bonus, Envy and its jackpot) at 80x24: the meter at the
    table, and its rules page whole on the first screen, each pay line once; a page
    longer than the dialog (EZ's, with its Queen's Dragon line) says how to scroll."""
    app = App(dataclasses.replace(server_settings, tables_file=None))  # the shipped tables
    await app.start()
    tui = PaigowApp(Client(url(app), name="Fay"))
    try:
        async with tui.run_test(size=SIZE) as pilot:
            table = await sit_at(pilot, tui, "fortune")
            await until_app(pilot, lambda: table.info is not None)
            await until_app(pilot, lambda: "JACKPOT fortune" in screen_text(tui))
            assert "10,000 chips" in keep(tui, "fortune-table")
            await pilot.press("i")
            await until_app(pilot, lambda: "jackpot for 1" in screen_text(tui))
            text = keep(tui, "fortune-rules")
            assert "JACKPOT fortune  meter 10,000" in text
            assert table.info is not None
            for line in table.info.paytable:  # every hand, once, with each bet's pay
                assert len(re.findall(f"│ {re.escape(line.label)}  ", text)) == 1, line.label
            assert "envy bonus on a bonus bet of 5+" in text
            assert "↓ more" not in text
            assert "progressive" not in text.lower()
        # Another player, from the top of the lobby (sit_at counts rows from there).
        tui = PaigowApp(Client(url(app), name="Ezra"))
        async with tui.run_test(size=SIZE) as pilot:
            table = await sit_at(pilot, tui, "ez")
            await until_app(pilot, lambda: table.info is not None)
            await pilot.press("i")
            await until_app(pilot, lambda: "↓ more" in screen_text(tui))
            await pilot.press("end")
            await until_app(pilot, lambda: "Queen's Dragon 5..50" in screen_text(tui))
            keep(tui, "ez-rules-end")
    finally:
        await app.stop()
