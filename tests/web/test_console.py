"""The operator's console in Chromium, as an operator uses it: the token entered once
(kept in the tab), the tables and their rounds live, a player looked up, credited,
a credit reversed and a debit refused, the audit run, a node drained. Screenshots at
desktop width are kept as artifacts (``.artifacts/web/console-*.png``)."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
import redis.asyncio
from playwright.async_api import Browser, ConsoleMessage, Page

from protocol.messages import Bet, Join
from server.app import App
from server.config import Settings
from tests.helpers import url
from tests.server.admin.conftest import mint
from tests.server.helpers import Client
from tests.web.conftest import StartApp
from tests.web.helpers import ARTIFACTS, DESKTOP, WAIT_MS


async def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"console-{name}.png"), full_page=False)


@pytest.mark.asyncio
async def test_the_console_as_an_operator_uses_it(
    browser: Browser,
    start_web: StartApp,
    server_settings: Settings,
    redis_client: redis.asyncio.Redis,
) -> None:
    app = await start_web(admin_port=0, node_name="one")
    # A second node, so that one can be drained (it stops itself when asked: here the
    # test stops it).
    two = App(dataclasses.replace(app.settings, port=0, node_name="two", admin_port=None))
    drained = asyncio.Event()
    two.on_drain = drained.set
    await two.start()
    player = await Client.hello(url(app), name="Dora")
    try:
        assert app.admin is not None
        await player.ok(Join, table_id="web", buy_in=1000)
        await player.ok(Bet, table_id="web", amount=100)
        token = await mint(redis_client, "night-shift")
        context = await browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
        page = await context.new_page()
        page.set_default_timeout(WAIT_MS)
        problems: list[str] = []
        page.on("pageerror", lambda exc: problems.append(f"pageerror: {exc}"))

        def console(message: ConsoleMessage) -> None:
            # A refusal (401, 409) is a failed resource to the browser: expected here.
            if message.type == "error" and "Failed to load resource" not in message.text:
                problems.append(f"console: {message.text}")

        page.on("console", console)
        base = f"http://127.0.0.1:{app.admin.port}/"
        await page.goto(base)
        # A wrong token: refused, said so, nothing shown.
        await page.fill("#token", "pgadmin1.bad.token")
        await page.press("#token", "Enter")
        await page.wait_for_selector("#login-error:has-text('refused')")
        assert await page.is_hidden("#tables")
        await shot(page, "login")
        await page.fill("#token", token)
        await page.press("#token", "Enter")

        # Tables, live: the round in play at "web" with Dora's bet.
        card = page.locator("article.card[data-table='web']")
        await card.locator("td", has_text="Dora").wait_for()
        # Her bet is in: the round goes on (every player acted: dealt, then setting).
        await card.locator(".phase.setting").wait_for()
        assert "round 1" in await card.inner_text()
        assert "night-shift" in await page.inner_text("#who")
        await shot(page, "tables")
        # The token stays in the tab: a reload is still signed in.
        await page.reload()
        await card.locator("td", has_text="Dora").wait_for()

        # Players: search, open, credit, reverse, a debit refused.
        await page.click("#tabs button[data-tab='players']")
        await page.fill("#search", "dora")
        await page.press("#search", "Enter")
        await page.click("#player-list tbody tr[data-player]")
        await page.wait_for_selector("#player-title")
        balance = int(await page.get_attribute("#player-facts", "data-balance") or "-1")
        await page.fill("#credit-form input[name=amount]", "5000")
        await page.fill("#credit-form input[name=reason]", "meant 500")
        await page.click("#credit-form button")
        await page.wait_for_selector(f"#move-result:has-text('balance {balance + 5000:,}')")
        await page.click("#ledger tbody tr[data-kind='credit']:has-text('meant 500') button")
        await page.fill("#reverse-form input[name=reason]", "typo: 5000 for 500")
        await page.click("#reverse-form button")
        await page.wait_for_selector("#move-result:has-text('reversal of 5,000: done')")
        await page.wait_for_selector("#ledger tbody tr[data-kind='reversal']")
        # Reversed once: the credit offers no second reversal.
        await page.wait_for_selector(
            "#ledger tbody tr[data-kind='credit']:has-text('meant 500') .reversed"
        )
        await page.fill("#debit-form input[name=amount]", str(balance + 1))
        await page.fill("#debit-form input[name=reason]", "too much")
        await page.click("#debit-form button")
        await page.wait_for_selector("#move-result.error:has-text('insufficient_balance')")
        assert int(await page.get_attribute("#player-facts", "data-balance") or "-1") == balance
        await shot(page, "players")

        # The audit.
        await page.click("#tabs button[data-tab='audit']")
        await page.click("#run-audit")
        await page.wait_for_selector("#audit-verdict.ok:has-text('passed')")
        assert "audit passed" in await page.inner_text("#audit-text")
        await shot(page, "audit")

        # Nodes: drain "two" (two clicks).
        await page.click("#tabs button[data-tab='nodes']")
        await page.wait_for_selector("#node-list tr[data-node='two']")
        await page.click("#node-list button[data-node='two']")
        await page.wait_for_selector("#node-list button[data-node='two']:has-text('Confirm')")
        await shot(page, "nodes")
        await page.click("#node-list button[data-node='two']")
        await page.wait_for_selector("#node-result.ok:has-text('two is draining')")
        async with asyncio.timeout(10):
            await drained.wait()
        assert problems == []
        await context.close()
    finally:
        await player.close()
        await two.stop()
