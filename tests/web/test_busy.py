"""A server that turns the page away at start (close 1013: full, or too many connections
from this address): the page says the server is busy and when it tries again, keeps
trying with backoff, and signs in once there is room, with no error shown."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from tests.helpers import url
from tests.server.helpers import Client
from tests.web.conftest import StartApp
from tests.web.helpers import DESKTOP, WAIT_MS, Player, base_url

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]


async def test_a_full_server_at_start_is_retried_and_said(
    browser: Browser, start_web: StartApp
) -> None:
    app = await start_web(max_connections=1)
    holder = await Client.hello(url(app))  # the house is full
    context = await browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    page = await context.new_page()
    page.set_default_timeout(WAIT_MS)
    alice = Player(context, page, "Alice")
    try:
        await page.goto(base_url(app))
        await page.fill("#login-name", "Alice")
        await page.press("#login-name", "Enter")
        # Read in the same evaluation as the status: the retry may already be under way
        # (and the line back at "Connecting…") by the time a second look is taken.
        said = await alice.until(
            "app.session.status === 'busy' && document.getElementById('conn').textContent",
            what="the busy status",
        )
        assert said.startswith("Server busy (server full; retrying in "), said
        assert said.endswith(" s)"), said
    finally:
        await holder.close()  # room again
    await alice.until("app.session.status === 'online'", what="the retry's welcome")
    await page.wait_for_selector("#lobby-rows tr")
    assert await page.locator("#conn").inner_text() == "Connected"
    assert await alice.js("return app.session.welcome.name;") == "Alice"
    toast = await page.locator("#toast").inner_text()
    assert "Could not sign in" not in toast
    assert alice.errors == []
    await alice.close()
