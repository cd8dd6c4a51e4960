"""A foul at a table where fouls lose: confirmed before it is sent, then shown plainly
(the seat's result readable, "Your hand" says foul)."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from protocol.cards import card_text
from server.app import App
from tests.web.contrast import CONTRAST
from tests.web.helpers import Player
from tests.web.test_play import foul_pair

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(150)]


async def test_a_foul_that_loses_is_confirmed_then_shown_readably(
    browser: Browser, web_app: App
) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    await alice.sit("lose")
    for _ in range(3):  # a hand with no foul at all is rare: try again
        round_no = await alice.bet(10)
        cards = await alice.cards()
        low = foul_pair(cards)
        if low is not None:
            break
        await alice.house_way()
        await alice.settled(round_no)
    assert low is not None
    for card in low:
        await alice.page.click(f"#your-cards button[data-card='{card_text(card)}']")
    # The first press asks; nothing is sent: a request after it comes back with the
    # hand still unset (one connection answers in order).
    await alice.page.click("#set-hand")
    await alice.page.locator("#foul").get_by_text("confirm", exact=False).wait_for()
    assert "loses your bet" in await alice.page.locator("#foul").inner_text()
    await alice.js("return app.session.request('balance');")
    assert await alice.js("return app.model.you.hand_set;") is False
    assert await alice.js("return app.model.yourLow.length;") == 0
    # The second press sends it; the table takes it and it loses.
    await alice.page.click("#set-hand")
    await alice.until("app.model.yourLow.length === 2", what="the fouled hand set")
    assert "foul" in (await alice.page.locator("#you").inner_text()).lower()
    # Read in the turn the results show (the next round clears them).
    shown = await alice.until(
        "app.model.round === arg && app.model.results.get(app.model.yourSeat) && (() => {"
        " const el = document.querySelector("
        "   `#seats li[data-seat='${app.model.yourSeat}'] [data-testid=result]`);"
        f" return {{ outcome: app.model.results.get(app.model.yourSeat).outcome,"
        f" text: el.textContent, ratio: ({CONTRAST})(el),"
        " you: document.getElementById('you').textContent,"
        " banner: !document.getElementById('banner').hidden"
        "   && document.getElementById('banner').textContent.replace(/\\s+/g, ' ').trim(),"
        f" bannerRatio: ({CONTRAST})(document.getElementById('banner-net')) }}; }})()",
        round_no,
        "the fouled result",
    )
    assert shown["outcome"] == "lose", shown
    assert shown["text"].startswith("Foul"), shown
    assert shown["ratio"] >= 4.5, shown
    assert "foul" in shown["you"].lower(), shown
    # The banner says it too, with the amount lost, readably.
    assert shown["banner"] == "Foul: you lose Net \N{MINUS SIGN}10 Main bet 10: \N{MINUS SIGN}10"
    assert shown["bannerRatio"] >= 4.5, shown
    assert alice.errors == []
