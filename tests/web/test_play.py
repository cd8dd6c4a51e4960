"""Playing at the browser table: two browser players and a terminal bot, fouls, the house way."""

from __future__ import annotations

import asyncio
from itertools import combinations
from typing import Any

import pytest
from playwright.async_api import Browser

from clients.bots import run_bot
from clients.handrank import preview
from protocol.cards import card_text
from server.app import App
from tests.web.helpers import Player

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(150)]

ROUNDS = 3


# The page at the moment its round's results came, read in one turn of its event loop
# (a redraw follows each event in the same turn): the next round clears them as soon
# as the bot bets again, 1.5 s after, which went by on a loaded machine while the test
# still read the other page.
SHOWN = """app.model.round === arg && app.model.results.get(app.model.yourSeat) && (() => {
  const seat = document.querySelector(`#seats li[data-seat='${app.model.yourSeat}']`);
  return { result: app.model.results.get(app.model.yourSeat), results: app.model.results.size,
    shown: seat.querySelector('[data-testid=result]').textContent,
    balance: seat.querySelector('[data-testid=seat-balance]').textContent };
})()"""


async def play_round(player: Player) -> dict[str, Any]:
    """Bet 25 (two chips), set by the house way, wait for the results; the result, the
    number of results and what the seat showed, as they came."""
    round_no = await player.bet(25)
    await player.cards()
    await player.house_way()
    shown: dict[str, Any] = await player.until(SHOWN, round_no, f"the results of {round_no}")
    return shown


async def test_two_browser_players_and_a_bot_play_rounds_to_settlement(
    browser: Browser, web_app: App
) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    bob = await Player.open(browser, web_app, "Bob")
    seats = {await alice.sit("web"), await bob.sit("web")}
    ws_url = f"ws://127.0.0.1:{web_app.port}/"
    bot = asyncio.create_task(run_bot(ws_url, "web", name="bot", rounds=ROUNDS, bet=10))
    for _ in range(ROUNDS):
        for shown in await asyncio.gather(play_round(alice), play_round(bob)):
            # The page shows what the server settled: the seat's result and balance.
            assert shown["shown"] != ""
            assert shown["balance"] == f"Balance {shown['result']['balance']:,}"
            # Each browser sees the three players' results.
            assert shown["results"] == 3
    stats, _ = await asyncio.wait_for(bot, 60)
    assert stats.rounds == ROUNDS, stats
    assert not stats.unverified, stats
    assert len(seats) == 2
    for player in (alice, bob):
        assert player.errors == []
        # Every settled round was checked in the page, and passed.
        await player.until("document.querySelector('.fair-badge').dataset.verdict === 'ok'")


def foul_pair(cards: list[int]) -> tuple[int, int] | None:
    """Two of the seven cards whose split fouls, if any."""
    for low in combinations(cards, 2):
        if preview(cards, low)[2]:
            return low
    return None


async def test_a_foul_is_warned_and_refused_and_the_house_way_sets_the_hand(
    browser: Browser, web_app: App
) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    await alice.sit("web")
    for _ in range(3):  # a hand with no foul at all (seven of a suit) is rare: try again
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
    warning = alice.page.locator("#foul")
    await warning.wait_for(state="visible")
    assert "Foul" in await warning.inner_text()
    # Sent anyway, the table (foul = reject) refuses it and the hand stays unset.
    await alice.page.click("#set-hand")
    await alice.until("document.getElementById('foul').textContent.startsWith('Refused')")
    assert await alice.js("return app.model.yourLow.length;") == 0
    # The house way sets it, as the server chose, and the reveal says so.
    await alice.house_way()
    assert "Set: High:" in await alice.page.locator("#preview").inner_text()
    seat = await alice.js("return app.model.yourSeat;")
    hand = await alice.until("app.model.hands.get(arg)", seat, "the reveal")
    assert hand["house_way"] is True
    assert hand["foul"] is False
    await alice.settled(round_no)
    assert alice.errors == []


async def test_keyboard_alone_sets_a_hand(browser: Browser, web_app: App) -> None:
    """Tab to the cards, pick two with Space, set with Enter: no mouse."""
    alice = await Player.open(browser, web_app, "Keys")
    await alice.sit("web")
    round_no = await alice.bet(25)
    cards = await alice.cards()
    legal = next(low for low in combinations(cards, 2) if not preview(cards, low)[2])
    for picked, card in enumerate(legal, 1):
        await alice.page.focus(f"#your-cards button[data-card='{card_text(card)}']")
        await alice.page.keyboard.press("Space")
        await alice.until(
            "document.getElementById('your-low').querySelectorAll('button').length === arg",
            picked,
            f"pick {picked} in the low hand",
        )
    await alice.page.focus("#set-hand")
    await alice.page.keyboard.press("Enter")
    low = await alice.until("app.model.yourLow.length === 2 && app.model.yourLow")
    assert sorted(low) == sorted(legal)
    await alice.settled(round_no)
