"""The small things of the browser table: the way back to the lobby, the sign-in's
status, the rebuy field, the lobby's phase names and long names, the jargon and the
commission's rounding explained."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from server.app import App
from tests.web.helpers import DESKTOP, Player, base_url

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]


async def test_before_sign_in_the_page_is_not_signed_in_rather_than_offline(
    browser: Browser, web_app: App
) -> None:
    context = await browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    page = await context.new_page()
    await page.goto(base_url(web_app))
    await page.wait_for_selector("#login:not([hidden])")
    assert await page.locator("#conn").inner_text() == "Not signed in"
    await context.close()


async def test_lobby_words_the_way_back_and_the_rebuy_field(browser: Browser, web_app: App) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    page = alice.page
    row = page.locator("tr[data-table='web']")
    # The phase as people say it, not the wire's name.
    assert await row.locator("td").first.inner_text() == "Waiting for a bet"
    assert await row.locator("th").get_attribute("title") == "Web"
    # A name the server cut at 32 characters ends at a whole word; the jargon in a
    # name is explained in its tooltip.
    cut = await page.evaluate(
        """async () => { const w = await import('./js/ui/words.js');
        return w.shortName('Lotus (5-100, pair-classes house'); }"""
    )
    assert cut == "Lotus (5-100, pair-classes…"
    title = await page.locator("tr[data-table='lose'] th").get_attribute("title")
    assert title is not None
    assert "Foul:" in title
    await alice.sit("web", buy_in=200)
    # The rebuy field is emptied once the rebuy is done.
    await page.fill("#rebuy-amount", "100")
    await page.click("#rebuy-form button[type=submit]")
    await alice.until("app.model.you.balance === 300", what="the rebuy")
    await alice.until("document.getElementById('rebuy-amount').value === ''", what="emptied")
    # Back to the lobby from the table.
    await page.click("#to-lobby")
    await page.wait_for_selector("#lobby:not([hidden])")
    assert await page.is_hidden("#table")
    # Leaving the table (no round in play: at once) goes back to the lobby too.
    await page.click("tr[data-table='web'] button:not(.primary)")  # watch again
    await alice.until("app.model && app.model.ready && app.model.yourSeat !== null")
    await page.click("#leave")
    await page.wait_for_selector("#lobby:not([hidden])")
    assert await page.is_hidden("#table")
    assert await alice.js("return location.hash;") in ("", "#/")
    assert alice.errors == []


async def test_the_rules_explain_the_jargon_and_the_commission_rounding(
    browser: Browser, web_app: App
) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    await alice.page.click("tr[data-table='web'] button:not(.primary)")  # watch
    await alice.until("app.model && app.model.ready", what="the table")
    await alice.page.click("button[data-open='rules-dialog']")
    body = alice.page.locator("#rules-body")
    await body.get_by_text("Words used here").wait_for()
    text = await body.inner_text()
    assert "rounded down to whole chips" in text
    assert "a win of 20 pays 19" in text  # 5 %: floor(20 * 5 / 100) = 1
    for term in ("House way", "Pair-classes house way", "Foul", "Copy", "Push"):
        assert await body.locator("dt", has_text=term).count() >= 1, term
