"""Who the browser plays as: a guest kept by the browser (every tab, every reload, until
forgotten), two tabs of one browser sharing it one at a time, and a token login that
asks for no name."""

from __future__ import annotations

import time

import pytest
from playwright.async_api import Browser, Page

from server.app import App
from server.auth import tokens
from tests.web.conftest import StartApp
from tests.web.helpers import WAIT_MS, Player, base_url

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]

SECRET = b"test-secret-0123456789"  # the tests' server settings' token secret


async def welcome_of(page: Page) -> dict[str, object]:
    """The page's welcome, once it is online."""
    handle = await page.wait_for_function(
        "() => window.paigow && window.paigow.session.status === 'online'"
        " && window.paigow.session.welcome",
        timeout=WAIT_MS,
    )
    value = await handle.json_value()
    assert isinstance(value, dict)
    return value


async def test_a_guest_is_the_browser_s_in_every_tab_and_reload(
    browser: Browser, web_app: App
) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    first = await welcome_of(alice.page)
    assert first["guest"] is True

    # A second tab of the same browser: the same guest, without signing in.
    tab = await alice.context.new_page()
    tab.set_default_timeout(WAIT_MS)
    await tab.goto(base_url(web_app))
    second = await welcome_of(tab)
    assert (second["player_id"], second["resumed"]) == (first["player_id"], True)
    assert await tab.locator("#login").is_hidden()
    # The first tab gave the session up (4005) and offers to take it back, by itself
    # doing nothing more: no tug of war between the tabs.
    await alice.page.locator("#play-here").wait_for(state="visible")
    assert await alice.js("return app.session.status;") == "closed"
    await alice.page.click("#play-here")
    back = await welcome_of(alice.page)
    assert (back["player_id"], back["resumed"]) == (first["player_id"], True)
    await tab.locator("#play-here").wait_for(state="visible")
    await tab.close()

    # A reload and a new page after closing every tab: still the same guest.
    await alice.page.reload()
    assert (await welcome_of(alice.page))["player_id"] == first["player_id"]
    await alice.page.close()
    later = await alice.context.new_page()
    await later.goto(base_url(web_app))
    assert (await welcome_of(later))["player_id"] == first["player_id"]

    # Another browser (a new context): another guest.
    bob = await Player.open(browser, web_app, "Bob")
    assert (await welcome_of(bob.page))["player_id"] != first["player_id"]
    assert alice.errors == []
    assert bob.errors == []


async def test_a_forgotten_guest_makes_way_for_a_new_one(browser: Browser, web_app: App) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    first = await welcome_of(alice.page)
    other = await alice.context.new_page()
    await other.goto(base_url(web_app))
    await welcome_of(other)  # the second tab holds the guest now
    await other.locator("#forget").click()
    await other.locator("#login").wait_for(state="visible")
    # Forgotten on the whole browser: the first tab goes back to the sign-in too.
    await alice.page.locator("#login").wait_for(state="visible")
    assert await other.evaluate("localStorage.getItem('paigow.guest')") is None
    await other.fill("#login-name", "Alicia")
    await other.press("#login-name", "Enter")
    fresh = await welcome_of(other)
    assert fresh["player_id"] != first["player_id"]
    assert (fresh["name"], fresh["resumed"]) == ("Alicia", False)
    # A reload keeps the new one.
    await other.reload()
    assert (await welcome_of(other))["player_id"] == fresh["player_id"]
    assert alice.errors == []


async def test_two_tabs_signing_in_at_once_make_one_guest(browser: Browser, web_app: App) -> None:
    context = await browser.new_context()
    pages = [await context.new_page() for _ in range(2)]
    for page in pages:
        page.set_default_timeout(WAIT_MS)
        await page.goto(base_url(web_app))
        await page.fill("#login-name", "Twin")
    # Both submit before either is welcomed.
    for page in pages:
        await page.evaluate("() => document.getElementById('login-form').requestSubmit()")
    seen = set()
    for page in pages:
        handle = await page.wait_for_function(
            "() => window.paigow.session.welcome || null", timeout=WAIT_MS
        )
        seen.add((await handle.json_value())["player_id"])
    assert len(seen) == 1
    await context.close()


async def test_a_token_login_asks_for_no_name(browser: Browser, start_web: StartApp) -> None:
    app = await start_web()
    context = await browser.new_context()
    page = await context.new_page()
    page.set_default_timeout(WAIT_MS)
    await page.goto(base_url(app))
    await page.locator("#login").wait_for(state="visible")
    await page.click("#login-token-box summary")
    assert await page.locator("#login-name").is_hidden()
    token = tokens.issue(SECRET, "tess", 600, int(time.time()))
    await page.fill("#login-token", token)
    await page.press("#login-token", "Enter")
    welcome = await welcome_of(page)
    assert (welcome["player_id"], welcome["guest"]) == ("tess", False)
    assert await page.locator("#player-name").inner_text() == "tess"
    assert await page.locator("#forget").inner_text() == "Sign out"
    # A token login is this tab's: it is not kept as the browser's guest.
    assert await page.evaluate("localStorage.getItem('paigow.guest')") is None
    await context.close()


# Another tab of the origin holds the guest's database at version 1 and never lets it
# go, then asks for version 2: that upgrade waits for ever, and every open queued after
# it (the page's own, of version 1) with it. This is an open that never settles, as an
# old Safari's could be.
HOLD_AND_UPGRADE = """async () => {
  window.held = await new Promise((resolve, reject) => {
    const r = indexedDB.open("paigow", 1);
    r.onupgradeneeded = () => r.result.createObjectStore("guest");
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
  window.upgrade = "pending";
  const r2 = indexedDB.open("paigow", 2);
  r2.onblocked = () => { window.upgrade = "blocked"; };
  r2.onsuccess = () => { window.upgrade = "opened"; };
}"""

# Whether an open of version 1 settles within a second: "hung" if not.
PROBE = """() => new Promise((resolve) => {
  const r = indexedDB.open("paigow", 1);
  r.onsuccess = () => { r.result.close(); resolve("opened"); };
  r.onerror = () => resolve("failed");
  setTimeout(() => resolve("hung"), 1000);
})"""

UPGRADE = """() => new Promise((resolve) => {
  const r = indexedDB.open("paigow", 2);
  r.onupgradeneeded = () => r.result.createObjectStore("other");
  r.onblocked = () => resolve("blocked");
  r.onsuccess = () => { r.result.close(); resolve("opened"); };
  r.onerror = () => resolve("failed");
})"""


async def test_a_sign_in_does_not_wait_for_an_indexeddb_that_never_opens(
    browser: Browser, web_app: App
) -> None:
    context = await browser.new_context()
    holder = await context.new_page()
    holder.set_default_timeout(WAIT_MS)
    await holder.goto(base_url(web_app))
    await holder.evaluate(HOLD_AND_UPGRADE)
    await holder.wait_for_function("() => window.upgrade === 'blocked'")
    page = await context.new_page()
    page.set_default_timeout(WAIT_MS)
    await page.goto(base_url(web_app))
    assert await page.evaluate(PROBE) == "hung"  # the page's open would never settle
    await page.fill("#login-name", "Patient")
    await page.press("#login-name", "Enter")
    # Inside the Web Lock the open is given up after a while: the guest is kept in
    # localStorage alone, and the sign-in goes on.
    welcome = await welcome_of(page)
    assert welcome["name"] == "Patient"
    await page.wait_for_function("() => localStorage.getItem('paigow.guest') !== null")
    # Another tab signs in the same guest through the same fallback.
    tab = await context.new_page()
    tab.set_default_timeout(WAIT_MS)
    await tab.goto(base_url(web_app))
    assert (await welcome_of(tab))["player_id"] == welcome["player_id"]
    await context.close()


async def test_a_later_schema_in_another_tab_is_not_blocked(browser: Browser, web_app: App) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    first = await welcome_of(alice.page)
    await alice.page.wait_for_function("() => localStorage.getItem('paigow.guest') !== null")
    # A later page (a schema of version 2) in another tab: this tab's open database
    # closes itself rather than block the upgrade.
    later = await alice.context.new_page()
    later.set_default_timeout(WAIT_MS)
    await later.goto(base_url(web_app))
    await welcome_of(later)
    assert await later.evaluate(UPGRADE) == "opened"
    # This page cannot open version 1 any more: its guest is still found (localStorage).
    await alice.page.reload()
    assert (await welcome_of(alice.page))["player_id"] == first["player_id"]
    assert alice.errors == []
