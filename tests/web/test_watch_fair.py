"""Watching without playing, and the provably fair check done in the page."""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import Browser

from clients.bots import run_bot
from protocol import fairness
from server.app import App
from tests.web.helpers import Player

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]


async def test_a_watcher_sees_a_round_and_the_page_checks_its_fairness(
    browser: Browser, web_app: App
) -> None:
    watcher = await Player.open(browser, web_app, "Watcher")
    await watcher.page.click("tr[data-table='web'] button:has-text('Watch')")
    await watcher.until("app.model && app.model.ready", what="the snapshot")
    assert await watcher.page.locator("#watching").is_visible()
    assert await watcher.page.locator("#betting").is_hidden()

    ws_url = f"ws://127.0.0.1:{web_app.port}/"
    stats, _ = await asyncio.wait_for(run_bot(ws_url, "web", name="bot", rounds=1, bet=10), 60)
    assert stats.rounds == 1
    round_no = min(stats.played)
    # The watcher saw the bot's hand and the dealer's revealed, and its result...
    seat = stats.results[0].seat
    await watcher.until("app.fairness.has(arg)", round_no, "the fairness check")
    record = await watcher.js(
        "const r = app.fairness.get(arg); return {rec: r.rec, ok: r.report.ok,"
        " checks: r.report.checks};",
        round_no,
    )
    assert record["ok"] is True, record["checks"]
    hands = {h["hand"]: h for h in record["rec"]["hands"]}
    assert set(hands) == {seat, 6}
    # ...and the page's verdict is the protocol's own.
    seed = bytes.fromhex(record["rec"]["seed"])
    dealt = {k: tuple(h["high"] + h["low"]) for k, h in hands.items()}
    deal = fairness.deal(seed)
    assert {k: sorted(v) for k, v in dealt.items()} == {k: sorted(deal[k]) for k in dealt}
    assert fairness.commitment(seed) == record["rec"]["commitment"]
    badge = watcher.page.locator(".fair-badge")
    assert await badge.get_attribute("data-verdict") == "ok"
    await watcher.page.click("button[data-open='fair-dialog']")
    row = watcher.page.locator(f"#fair-list .fair-row[data-round='{round_no}']")
    assert await row.get_attribute("data-verdict") == "ok"
    assert "✗" not in await row.inner_text()
    assert watcher.errors == []


async def test_history_lists_a_played_round_and_checks_it(browser: Browser, web_app: App) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    await alice.sit("web")
    round_no = await alice.bet(25)
    await alice.cards()
    await alice.house_way()
    result = await alice.settled(round_no)
    await alice.until("app.fairness.has(arg)", round_no, "the seed")
    await alice.page.click("button[data-open='history-dialog']")
    row = alice.page.locator(f"#history-list .history-row[data-round='{round_no}']")
    await row.wait_for()
    assert f"balance {result['balance']:,}" in await row.inner_text()
    await row.locator("button:has-text('Check fairness')").click()
    await row.locator(".fair-result:has-text('Fair: every check passes.')").wait_for()
    assert "✗" not in await row.inner_text()
    await alice.page.keyboard.press("Escape")  # a dialog closes from the keyboard
    await alice.page.locator("#history-dialog").wait_for(state="hidden")
    assert alice.errors == []
