"""The bet panel says what is true: the amounts on the table after Rebet, the chips
going on the main bet at each new round, disabled buttons drawn as such, a refused
bet explained in words, and a refused foul's message on a 1280x800 screen."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from protocol.cards import card_text
from server.app import App
from tests.web.helpers import Player
from tests.web.test_play import foul_pair

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(150)]

LOOK = """(el) => { const s = getComputedStyle(el);
  return { border: s.borderTopStyle, background: s.backgroundColor, disabled: el.disabled }; }"""


async def test_the_bet_panel_shows_what_is_on_the_table(browser: Browser, web_app: App) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    page = alice.page
    await alice.sit("web")
    await alice.until("['idle', 'betting'].includes(app.model.phase)", what="betting")
    # A bet below the table's minimum: refused, and said in words with the limits.
    await page.click("#chips button[data-chip='5']")
    await page.click("#place-bet")
    toast = page.locator("#toast")
    await alice.until("document.getElementById('toast').textContent !== ''", what="a toast")
    text = await toast.inner_text()
    assert text.startswith("Bets at this table are 10\u2013500"), text
    await page.click("#clear-bet")
    # 25 on the main bet and 5 on the bonus.
    await page.click("#chips button[data-chip='25']")
    await page.check("input[name=target][value=bonus]")
    await page.click("#chips button[data-chip='5']")
    await page.click("#place-bet")
    await alice.until("app.model.you.bet === 25 && app.model.you.bonus === 5", what="the bet")
    round_no = await alice.js("return app.model.round;")
    await alice.cards()
    # Betting is closed: its buttons are drawn disabled (no fill, a dashed edge).
    for selector in ("#place-bet", "#clear-bet", "#rebet", "#chips button"):
        look = await page.locator(selector).first.evaluate(LOOK)
        assert look["disabled"], (selector, look)
        assert look["border"] == "dashed", (selector, look)
        assert look["background"] in ("rgba(0, 0, 0, 0)", "transparent"), (selector, look)
    await alice.house_way()
    # The next round (betting, or idle again if its betting closed unbet meanwhile).
    await alice.until(
        "['idle', 'betting'].includes(app.model.phase) && app.model.round === arg",
        round_no + 1,
        "next round",
    )
    # A new round: the chips go on the main bet again; Rebet shows what it placed.
    assert await page.is_checked("input[name=target][value=amount]")
    look = await page.locator("#clear-bet").evaluate(LOOK)
    assert look["border"] != "dashed", look
    await page.click("#rebet")
    await alice.until("app.model.you.bet === 25 && app.model.you.bonus === 5", what="rebet")
    await alice.until(
        "document.getElementById('stake-main').textContent === '25'"
        " && document.getElementById('stake-bonus').textContent === '5'",
        what="the rebet amounts in the panel",
    )
    assert alice.errors == []


async def test_a_refused_foul_is_on_screen_at_1280x800(browser: Browser, web_app: App) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    await alice.sit("web")
    for _ in range(3):
        round_no = await alice.bet(25)
        cards = await alice.cards()
        low = foul_pair(cards)
        if low is not None:
            break
        await alice.house_way()
        await alice.settled(round_no)
    assert low is not None
    for card in low:
        await alice.page.click(f"#your-cards button[data-card='{card_text(card)}']")
    await alice.page.click("#set-hand")
    await alice.until("document.getElementById('foul').textContent.startsWith('Refused')")
    box = await alice.page.evaluate(
        """() => { window.scrollTo(0, 0);
        const r = document.getElementById('foul').getBoundingClientRect();
        return { top: r.top, bottom: r.bottom, height: innerHeight }; }"""
    )
    assert box["top"] >= 0, box
    assert box["bottom"] <= box["height"], box
