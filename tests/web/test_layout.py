"""The table on a desktop and on a phone: screenshots kept as artifacts, the main
elements visible, nothing moved by the deal; the page's weight and time to the table.

Artifacts go to ``.artifacts/web/`` at the repository's root (git-ignored): the two
screenshots, and ``metrics.json`` with the load weight and the time to the table.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from playwright.async_api import Browser

from clients.bots import run_bot
from server.app import App
from tests.web.helpers import ARTIFACTS, DESKTOP, PHONE, Player

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]

# What a player must see at the table, whatever the screen.
MAIN = [
    "#table-title", "#phase", "#countdown", "#dealer-hand", "#seats", "#your-cards",
    "#your-low", "#preview", "#set-hand", "#house-way", "#chips", "#place-bet",
    "#table-balance", "#account", "#conn",
]  # fmt: skip
BOXES = """() => Object.fromEntries(['#seats', '#you', '#betting', '#money', '#dealer-hand']
  .map((s) => { const r = document.querySelector(s).getBoundingClientRect();
                return [s, [r.x, r.y + scrollY, r.width, r.height]]; }))"""
WATCH_SHIFTS = """() => { window.shifts = [];
  const where = (s) => `${s.node?.id || s.node?.className || s.node?.nodeName}: `
    + `${JSON.stringify(s.previousRect)} -> ${JSON.stringify(s.currentRect)}`;
  new PerformanceObserver((list) => window.shifts.push(...list.getEntries().map((e) => ({
    value: e.value, what: e.sources.map(where) }))))
    .observe({ type: 'layout-shift' }); }"""


async def test_screenshots_on_a_desktop_and_a_phone(browser: Browser, web_app: App) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    desk = await Player.open(browser, web_app, "Desk", DESKTOP)
    phone = await Player.open(browser, web_app, "Phone", PHONE)
    for player in (desk, phone):
        await player.sit("web")
    ws_url = f"ws://127.0.0.1:{web_app.port}/"
    bot = asyncio.create_task(run_bot(ws_url, "web", name="bot", rounds=1, bet=10))
    await asyncio.gather(desk.bet(25), phone.bet(25))
    before = {}
    for player in (desk, phone):
        # A phone puts the bet panel first while betting is open (by design, with the
        # phase): the places are measured once betting has closed.
        await player.until("!['idle', 'betting'].includes(app.model.phase)", what="the deal")
        before[player.name] = await player.page.evaluate(BOXES)
        await player.page.evaluate(WATCH_SHIFTS)

    async def two_cards_low(player: Player) -> None:
        await player.cards()
        # Nothing moved when the cards came (the places were there already).
        assert await player.page.evaluate(BOXES) == before[player.name]
        shifts = await player.page.evaluate("window.shifts")
        assert sum(s["value"] for s in shifts) < 0.01, shifts
        for _ in range(2):  # two cards into the low hand: the preview shows
            await player.page.click("#your-cards button.card >> nth=0")
        await player.until("document.querySelectorAll('#your-low button.card').length === 2")

    # Both pages at once: one after the other, a loaded machine spent the setting phase
    # on the first, and the second found the round over.
    await asyncio.gather(two_cards_low(desk), two_cards_low(phone))
    shots: dict[str, Any] = {}
    for player in (desk, phone):
        size = player.page.viewport_size
        assert size is not None
        path = ARTIFACTS / f"table-{size['width']}x{size['height']}.png"
        await player.page.evaluate("window.scrollTo(0, 0)")
        await player.page.screenshot(path=str(path))
        await player.page.screenshot(path=str(path.with_suffix(".full.png")), full_page=True)
        shots[player.name] = str(path)
        for selector in MAIN:
            assert await player.page.locator(selector).is_visible(), (player.name, selector)
        seats = player.page.locator("#seats li")
        assert await seats.count() == 6
        # No sideways scrolling, even at 390 pixels.
        width = await player.page.evaluate("document.documentElement.scrollWidth")
        assert width <= size["width"], (player.name, width)
        print(f"screenshot: {path}")
    # On the desktop the whole table fits in the first screen.
    for selector in MAIN:
        box = await desk.page.locator(selector).bounding_box()
        assert box is not None, selector
        assert box["y"] + box["height"] <= DESKTOP["height"], selector
    for player in (desk, phone):
        await player.house_way()
    await asyncio.wait_for(bot, 60)
    assert desk.errors == phone.errors == []


async def test_load_weight_and_time_to_the_table(browser: Browser, web_app: App) -> None:
    """A returning player opening the table with an empty cache: every byte fetched, and
    the time from navigation to the table drawn (its first snapshot)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    alice = await Player.open(browser, web_app, "Alice")
    await alice.page.click("tr[data-table='web'] button:has-text('Watch')")
    await alice.until("app.model && app.model.ready")
    cdp = await alice.context.new_cdp_session(alice.page)
    await cdp.send("Network.enable")
    await cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    await alice.page.reload()
    await alice.until("performance.getEntriesByName('paigow:table').length > 0")
    figures = await alice.page.evaluate(
        """() => {
          const nav = performance.getEntriesByType('navigation')[0];
          const res = performance.getEntriesByType('resource');
          const all = [nav, ...res];
          return {
            files: all.length,
            transfer_bytes: all.reduce((n, e) => n + e.transferSize, 0),
            body_bytes: all.reduce((n, e) => n + e.encodedBodySize, 0),
            time_to_table_ms: Math.round(performance.getEntriesByName('paigow:table')[0].startTime),
            dom_content_loaded_ms: Math.round(nav.domContentLoadedEventEnd),
          };
        }"""
    )
    (ARTIFACTS / "metrics.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(f"web client: {figures}")
    assert figures["body_bytes"] < 150_000
    assert figures["time_to_table_ms"] < 5_000
    assert alice.errors == []
