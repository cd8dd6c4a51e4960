"""Coming back: a reload mid-round, and a server restart, resume the round as it was."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from server.app import App
from tests.web.conftest import StartApp
from tests.web.helpers import Player

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]

SHOWN = "document.getElementById('your-cards').dataset.cards"


async def test_a_reload_mid_round_resumes_with_the_same_cards_and_timer(
    browser: Browser, web_app: App
) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    seat = await alice.sit("web")
    round_no = await alice.bet(25)
    cards = await alice.cards()
    await alice.until("app.model.phase === 'setting'")
    before = await alice.js("return {deadline: app.model.deadline, shown: " + SHOWN + "};")
    player_id = await alice.js("return app.session.welcome.player_id;")

    await alice.page.reload()
    # Back at the table, same player, same seat, same seven cards, same deadline.
    await alice.until("app.model && app.model.ready && app.model.yourCards.length === 7")
    after = await alice.js(
        "return {round: app.model.round, seat: app.model.yourSeat, cards: app.model.yourCards,"
        " player: app.session.welcome.player_id, resumed: app.session.welcome.resumed,"
        " deadline: app.model.deadline, phase: app.model.phase, shown: " + SHOWN + "};"
    )
    assert after["resumed"] is True
    assert after["player"] == player_id
    assert (after["round"], after["seat"], after["phase"]) == (round_no, seat, "setting")
    assert sorted(after["cards"]) == sorted(cards)
    assert after["deadline"] == before["deadline"]
    assert after["shown"] == before["shown"]
    countdown = await alice.page.locator("#countdown").inner_text()
    assert countdown.endswith(" s")
    assert int(countdown[:-2]) > 0
    # And the round goes on from the page.
    await alice.house_way()
    result = await alice.settled(round_no)
    assert result["seat"] == seat
    assert alice.errors == []


async def test_a_server_restart_mid_round_reconnects_and_the_round_goes_on(
    browser: Browser, start_web: StartApp
) -> None:
    app = await start_web()
    alice = await Player.open(browser, app, "Alice")
    seat = await alice.sit("web")
    round_no = await alice.bet(25)
    cards = await alice.cards()

    await app.stop()  # closes the page's connection with 1001: reconnect and resume
    await alice.until("app.session.status !== 'online'", what="the drop seen")
    await start_web()  # the same port, the same Redis: the table is taken over
    await alice.until("app.session.status === 'online'", what="the reconnection")
    assert await alice.page.locator("#conn").inner_text() == "Connected"
    await alice.until("app.model.phase === 'setting' && app.model.yourCards.length === 7")
    assert sorted(await alice.js("return app.model.yourCards;")) == sorted(cards)
    await alice.house_way()
    result = await alice.settled(round_no)
    assert result["seat"] == seat
    assert alice.errors == []


async def test_a_refused_resume_token_starts_a_fresh_session_at_the_same_table(
    browser: Browser, start_web: StartApp
) -> None:
    """A server whose token secret changed refuses the page's resume token (4001): the
    page signs in again as a new guest, by itself, and watches the table it was at."""
    app = await start_web()
    alice = await Player.open(browser, app, "Alice")
    await alice.sit("web")
    before = await alice.js("return app.session.welcome.player_id;")
    await app.stop()
    await start_web(token_secret="another-secret-0123456789")
    await alice.until(
        "app.session.status === 'online' && app.session.welcome.player_id !== arg",
        before,
        "a fresh session",
    )
    await alice.until("app.model && app.model.ready && app.model.yourSeat === null")
    assert await alice.page.locator("#watching").is_visible()
    assert await alice.page.locator("#login").is_hidden()
    assert alice.errors == []
