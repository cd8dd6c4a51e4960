"""Playing on a phone (390x844) without scrolling against the clock: the chips and the
Place bet button on screen while betting is open, the cards and Set hand once dealt."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from server.app import App
from tests.web.helpers import PHONE, Player

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]

ON_SCREEN = """(selectors) => { window.scrollTo(0, 0);
  return selectors.map((s) => { const r = document.querySelector(s).getBoundingClientRect();
    return [s, r.top >= 0 && r.bottom <= innerHeight, Math.round(r.bottom)]; }); }"""


async def test_a_phone_needs_no_scrolling_to_bet_and_to_set(browser: Browser, web_app: App) -> None:
    alice = await Player.open(browser, web_app, "Alice", PHONE)
    await alice.sit("web")
    await alice.until("['idle', 'betting'].includes(app.model.phase)", what="betting")
    for selector, seen, bottom in await alice.page.evaluate(
        ON_SCREEN, ["#chips", "#place-bet", "#phase"]
    ):
        assert seen, (selector, bottom)
    round_no = await alice.bet(25)
    await alice.cards()
    for selector, seen, bottom in await alice.page.evaluate(
        ON_SCREEN, ["#your-cards", "#your-low", "#set-hand", "#house-way", "#phase"]
    ):
        assert seen, (selector, bottom)
    await alice.house_way()
    # The result is said where the cards are, on screen (read in the turn it shows:
    # the next round clears it).
    box = await alice.until(
        "app.model.round === arg && app.model.results.get(app.model.yourSeat)"
        " && document.getElementById('set-hint').textContent.startsWith('Your result:')"
        " && (() => { const r = document.getElementById('set-hint').getBoundingClientRect();"
        " return { top: r.top + scrollY, bottom: r.bottom + scrollY, height: innerHeight }; })()",
        round_no,
        "the result by your hand",
    )
    assert box["top"] >= 0, box
    assert box["bottom"] <= box["height"], box
    assert alice.errors == []
