"""Playing on a phone (390x844) without scrolling against the clock: every table's
buttons in the lobby, the chips and the Place bet button while betting is open, the cards
and Set hand once dealt, the result and its banner; and a round at 360, 390, 768 and
1280 pixels never scrolls sideways."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from server.app import App
from tests.web.helpers import PHONE, Player

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]

ON_SCREEN = """(selectors) => { window.scrollTo(0, 0);
  return selectors.map((s) => { const r = document.querySelector(s).getBoundingClientRect();
    return [s, r.top >= 0 && r.bottom <= innerHeight, Math.round(r.bottom)]; }); }"""


WIDTHS = (360, 390, 768, 1280)


async def test_a_phone_needs_no_scrolling_to_bet_and_to_set(browser: Browser, web_app: App) -> None:
    alice = await Player.open(browser, web_app, "Alice", PHONE)
    for selector, seen, bottom in await alice.page.evaluate(
        ON_SCREEN, [f"tr[data-table='{t}'] button.primary" for t in ("web", "lose")]
    ):
        assert seen, (selector, bottom)
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
    banner = await alice.until(
        # Where it rests, once its entrance (a short slide) is over.
        "!document.getElementById('banner').hidden"
        " && document.getElementById('banner').getAnimations().length === 0 && (() => {"
        " const r = document.getElementById('banner').getBoundingClientRect();"
        " return { top: r.top, bottom: r.bottom, left: r.left, right: r.right }; })()",
        what="the banner",
    )
    assert banner["top"] >= 0, banner
    assert banner["bottom"] <= PHONE["height"], banner
    assert banner["left"] >= 0, banner
    assert banner["right"] <= PHONE["width"], banner
    assert alice.errors == []


async def widths_fit(player: Player, when: str) -> None:
    """At each width, the page is no wider than the screen (nothing scrolls sideways)."""
    for width in WIDTHS:
        await player.page.set_viewport_size({"width": width, "height": 844})
        await player.page.evaluate("() => new Promise(requestAnimationFrame)")
        scroll = await player.page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, (when, width, scroll)
    await player.page.set_viewport_size({"width": PHONE["width"], "height": PHONE["height"]})


async def test_a_round_never_scrolls_sideways(browser: Browser, web_app: App) -> None:
    alice = await Player.open(browser, web_app, "Alice", PHONE)
    await alice.sit("web")
    await alice.until("['idle', 'betting'].includes(app.model.phase)", what="betting")
    await alice.page.click("#chips button[data-chip='25']")
    await widths_fit(alice, "betting")
    await alice.page.click("#place-bet")
    await alice.until("app.model.you.bet === 25", what="the bet")
    round_no: int = await alice.js("return app.model.round;")
    cards = await alice.cards()
    # A split picked: two cards in the low hand.
    for card in sorted(cards)[:2]:
        await alice.page.click(f"#your-cards button[data-focus-key='card-{card}']")
    await widths_fit(alice, "setting")
    await alice.house_way()
    await alice.banner(round_no)
    await widths_fit(alice, "results")
    assert alice.errors == []
