"""The browser shows a progressive jackpot's meter live (protocol minor 7): under the
table's name in the lobby, in the table's header and on its rules page, each changing
as the meter does (the lobby's own refresh stopped: the change came as a ``jackpot``
message). axe finds nothing serious on those screens, desktop and phone; screenshots
of both are kept in ``.artifacts/web/screenshots/``."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio
from playwright.async_api import Browser

from server.app import App
from server.config import Settings
from server.store.jackpot.meters import JackpotStore
from tests.server.processes import free_port
from tests.web import axe
from tests.web.conftest import WEB_TABLES
from tests.web.helpers import ARTIFACTS, DESKTOP, PHONE, Player

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(180)]

SHOTS = ARTIFACTS / "screenshots"
JACKPOT = """
[jackpot.grand]
seed = 1000
contribution_bps = 10000
wager = 5
tables = ["web"]
"""
_ROUNDS = itertools.count(1)


@pytest_asyncio.fixture
async def jackpot_app(
    server_settings: Settings, redis_client: redis.asyncio.Redis, tmp_path: Path
) -> AsyncIterator[App]:
    """A server with the web tables, "web" offering the jackpot ``grand``.

    It needs ``redis_client`` so that the database is flushed before the server starts
    (as ``app`` in tests/conftest.py): a test listing both, this fixture first, flushed
    the running server's leases away. Its next commit (the join) was then refused as
    stale, ``unavailable``, until the table was taken again: the page rightly had no
    seat and kept its bet panel hidden."""
    tables = tmp_path / "web-jackpot.toml"
    tables.write_text(WEB_TABLES + JACKPOT)
    app = App(dataclasses.replace(server_settings, tables_file=tables, port=free_port()))
    await app.start()
    try:
        yield app
    finally:
        await app.stop()


async def contribute(store: JackpotStore, chips: int) -> int:
    done = await store.contribute(
        "grand",
        seed=1000,
        contribution_bps=10_000,
        table_id="web",
        round_no=next(_ROUNDS),
        seat=0,
        player="ann",
        wager=chips,
    )
    return done.meter


@pytest.mark.parametrize("size", ["desktop", "phone"])
async def test_the_meter_is_live_in_the_lobby_and_at_the_table(
    browser: Browser, jackpot_app: App, redis_client: redis.asyncio.Redis, size: str
) -> None:
    store = JackpotStore(redis_client)
    player = await Player.open(
        browser, jackpot_app, "Jack", DESKTOP if size == "desktop" else PHONE
    )
    page = player.page
    meter = page.locator("tr[data-table='web'] .jackpot")
    await meter.wait_for()
    assert await meter.text_content() in {"1,000", "…"}
    # In a Jackpot column of its own: the name's cell holds the name alone.
    assert await page.locator("#lobby-jackpot").is_visible()
    assert await page.locator("tr[data-table='web'] th.name").text_content() == "Web"
    assert await page.locator("tr[data-table='lose'] .jackpot").count() == 0
    assert await page.locator("tr[data-table='lose'] td[data-label='Jackpot']").text_content() == (
        "none"
    )
    await player.until("app.meters.get('grand') === 1000", what="the meter watched")
    # From here the lobby is not read again: what changes came as `jackpot` messages.
    await player.js("clearInterval(app.lobby.timer);")
    after = await contribute(store, 234)
    await player.until(
        "document.querySelector(\"tr[data-table='web'] .jackpot\").textContent === arg",
        f"{after:,}",
        "the lobby's meter",
    )
    violations = {"lobby": await axe.check(page)}
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / f"{size}-jackpot-lobby.png"), animations="disabled")

    await player.sit("web", buy_in=1000)
    head = page.locator("#jackpot")
    await head.wait_for()
    assert await head.text_content() == f"Jackpot {after:,}"
    after = await contribute(store, 1000)
    await player.until(
        "document.getElementById('jackpot').textContent === arg",
        f"Jackpot {after:,}",
        "the table's meter",
    )
    violations["table"] = await axe.check(page)
    await page.screenshot(path=str(SHOTS / f"{size}-jackpot-table.png"), animations="disabled")

    await page.click("button[data-open='rules-dialog']")
    await page.wait_for_selector("#rules-jackpot")
    assert await page.locator("#rules-jackpot").text_content() == f"{after:,}"
    body = await page.locator("#rules-body").text_content() or ""
    assert "Progressive jackpot" in body
    assert "100% of the meter" in body
    assert "75 for 1" in body
    # The progressive wager's lines are the jackpot's, once: not again as a side bet's.
    heads = await page.locator("#rules-body h3").all_text_contents()
    assert "Progressive" not in heads, heads
    assert "74 to 1" not in body
    after = await contribute(store, 1)
    await player.until(
        "document.getElementById('rules-jackpot').textContent === arg",
        f"{after:,}",
        "the rules page's meter",
    )
    violations["rules"] = await axe.check(page)
    for screen, found in violations.items():
        assert axe.blocking(found) == [], (screen, axe.blocking(found))
    assert player.errors == []
    await player.close()


async def test_a_table_without_a_jackpot_shows_none(browser: Browser, jackpot_app: App) -> None:
    player = await Player.open(browser, jackpot_app, "Plain")
    page = player.page
    await page.click("tr[data-table='lose'] button:not(.primary)")
    await player.until("app.model && app.model.ready && app.info('lose')", what="the table")
    assert await page.locator("#jackpot").is_hidden()
    await player.close()
