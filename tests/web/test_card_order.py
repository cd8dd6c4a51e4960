"""Cards sorted for reading: your seven, your set halves (the split as you set it), the
dealer's and every revealed hand, best rank first (the joker first); the dealer's two
hands labelled."""

from __future__ import annotations

from itertools import combinations

import pytest
from playwright.async_api import Browser

from clients.handrank import preview
from protocol.cards import card_text
from server.app import App
from tests.web.helpers import Player

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]

ORDER = "23456789TJQKA"


def rank(text: str) -> int:
    return 99 if text == "JK" else ORDER.index(text[0])


def assert_sorted(texts: list[str], where: str) -> None:
    ranks = [rank(t) for t in texts]
    assert ranks == sorted(ranks, reverse=True), f"{where}: {texts}"


async def shown(player: Player, selector: str) -> list[str]:
    cards: list[str] = await player.page.eval_on_selector_all(
        f"{selector} [data-card]", "els => els.map(e => e.dataset.card)"
    )
    return cards


async def test_cards_are_sorted_for_reading_and_the_dealer_hands_labelled(
    browser: Browser, web_app: App
) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    await alice.sit("web")
    await alice.bet(25)
    cards = await alice.cards()
    assert_sorted(await shown(alice, "#your-cards"), "your seven cards")
    legal = next(low for low in combinations(cards, 2) if not preview(cards, low)[2])
    for card in legal:
        await alice.page.click(f"#your-cards button[data-card='{card_text(card)}']")
    await alice.page.click("#set-hand")
    await alice.until("app.model.yourLow.length === 2", what="the hand set")
    low = await shown(alice, "#your-low")
    assert sorted(low) == sorted(card_text(c) for c in legal)  # the split as it was set
    assert_sorted(low, "your low hand")
    assert_sorted(await shown(alice, "#your-cards"), "your high hand")
    # Everything read in the turn the reveal shows (the next round clears it).
    revealed = await alice.until(
        "app.model.hands.get(6) && app.model.hands.get(app.model.yourSeat) && (() => {"
        " const texts = (el) => [...el.querySelectorAll('[data-card]')].map(e => e.dataset.card);"
        " const rows = document.querySelectorAll("
        "   `#seats li[data-seat='${app.model.yourSeat}'] .split-mini .hand-row`);"
        " return { dealerHigh: texts(document.querySelector('#dealer-hand .high')),"
        " dealerLow: texts(document.querySelector('#dealer-hand .low')),"
        " seatHigh: texts(rows[0]), seatLow: texts(rows[1]),"
        " labels: [...document.querySelectorAll('#dealer-hand .hand-label')]"
        "   .map(e => e.textContent.trim().toLowerCase()) }; })()",
        what="the reveal",
    )
    for key in ("dealerHigh", "dealerLow", "seatHigh", "seatLow"):
        assert_sorted(revealed[key], key)
    assert len(revealed["dealerHigh"]) == len(revealed["seatHigh"]) == 5, revealed
    assert revealed["labels"] == ["high", "low"], revealed
    assert alice.errors == []
