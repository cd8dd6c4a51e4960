"""The keyboard player's place survives the page's redraws: the control focused with the
keyboard (Tab) still has the focus, or its new equivalent does, after a redraw caused
by a real server event, the lobby's timer, or the control's own request."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from clients.core import Client
from server.app import App
from tests.web.helpers import Player

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]

TABS = 80  # more than the page's controls: Tab goes round them all before failing
ACTIVE = "(() => { const a = document.activeElement;"
ACTIVE += " return a && (a.getAttribute('aria-label') || a.id || a.textContent); })()"


async def tab_to(player: Player, condition: str) -> None:
    """Press Tab until the focused control ``a`` meets the JavaScript ``condition``."""
    test = f"(() => {{ const a = document.activeElement; return Boolean(a && ({condition})); }})()"
    for _ in range(TABS):
        await player.page.keyboard.press("Tab")
        if await player.page.evaluate(test):
            return
    raise AssertionError(f"{player.name}: Tab never reached {condition}")


async def mark_focused(player: Player) -> None:
    """Keep the focused element, to tell later whether the redraw replaced it."""
    await player.page.evaluate("window.focusedBefore = document.activeElement")


@pytest.mark.parametrize("check_visibility", [True, False], ids=["", "no-checkVisibility"])
async def test_a_seat_button_keeps_the_focus_when_another_player_sits(
    browser: Browser, web_app: App, check_visibility: bool
) -> None:
    """A watcher on a seat's "Sit here" button: another player sits, every seat is drawn
    anew, and the focus is on the new button of the same seat; Enter opens its buy-in.
    So too in a browser without ``checkVisibility`` (Safari before 17.4)."""
    bob = await Player.open(browser, web_app, "Bob")
    if not check_visibility:
        await bob.page.evaluate("delete Element.prototype.checkVisibility")
        assert await bob.page.evaluate("!('checkVisibility' in document.body)")
    await bob.page.click("tr[data-table='web'] button:has-text('Watch')")
    await bob.until("app.model && app.model.ready && document.querySelector('#seats button')")
    await tab_to(bob, "a.getAttribute('aria-label') === 'Sit here, seat 3'")
    await mark_focused(bob)
    async with Client(f"ws://127.0.0.1:{web_app.port}/", name="Cara") as cara:
        await cara.join("web", 500, seat=0)
        # The seat's event drew every seat again: the focused button is not the old one.
        await bob.until(
            "document.querySelector(\"#seats li[data-seat='0']\").dataset.status !== 'empty'"
            " && !window.focusedBefore.isConnected",
            what="the seats drawn again after Cara sat",
        )
        assert await bob.page.evaluate(ACTIVE) == "Sit here, seat 3"
        assert await bob.page.evaluate("document.activeElement.closest('#seats') !== null")
        await bob.page.keyboard.press("Enter")
        await bob.page.wait_for_selector("#join-dialog[open]")
        assert await bob.page.locator("#join-title").inner_text() == "Sit at seat 3, Web"
    assert bob.errors == []


async def test_a_lobby_button_keeps_the_focus_when_the_list_is_read_again(
    browser: Browser, web_app: App
) -> None:
    """The lobby's rows are drawn anew every few seconds: a player who sat down elsewhere
    changes the list, and the focus stays on the same table's Watch button."""
    bob = await Player.open(browser, web_app, "Bob")
    await tab_to(bob, "a.getAttribute('aria-label') === 'Watch Fouls lose'")
    await mark_focused(bob)
    async with Client(f"ws://127.0.0.1:{web_app.port}/", name="Cara") as cara:
        await cara.join("lose", 500)
        await bob.until(
            "document.querySelector(\"tr[data-table='lose']\").textContent.includes('1 / 6')"
            " && !window.focusedBefore.isConnected",
            what="the lobby's list read again with Cara seated",
        )
        assert await bob.page.evaluate(ACTIVE) == "Watch Fouls lose"
        await bob.page.keyboard.press("Enter")
        await bob.until("app.model && app.model.id === 'lose'", what="the table opened")
    assert bob.errors == []


async def test_a_button_pressed_with_the_keyboard_keeps_the_focus_through_its_request(
    browser: Browser, web_app: App
) -> None:
    """Chips and the bet placed with the keyboard alone: the Place bet button is disabled
    while its request is in flight (the browser drops the focus of a disabled button)
    and the other player's events redraw the table, yet the focus is back on it."""
    bob = await Player.open(browser, web_app, "Bob")
    await bob.sit("web")
    # A second player who does not bet keeps the betting phase open meanwhile.
    async with Client(f"ws://127.0.0.1:{web_app.port}/", name="Cara") as cara:
        await cara.join("web", 500)
        await bob.until("app.model.seats.filter((s) => s.status !== 'empty').length === 2")
        await bob.until("['idle', 'betting'].includes(app.model.phase)", what="betting")
        await tab_to(bob, "a.getAttribute('aria-label') === 'Add a 25 chip'")
        await bob.page.keyboard.press("Space")
        await bob.until("document.getElementById('stake-main').textContent === '25'")
        await tab_to(bob, "a.id === 'place-bet'")
        await bob.page.keyboard.press("Enter")
        await bob.until("app.model.you && app.model.you.bet === 25", what="the bet placed")
        await bob.until(
            "document.activeElement.id === 'place-bet' && !document.activeElement.disabled",
            what="the focus back on Place bet",
        )
        assert await bob.js("return app.model.phase;") in ("idle", "betting")
    assert bob.errors == []
