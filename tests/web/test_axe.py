"""Accessibility checked by a tool: axe-core on every screen of the page (sign-in, lobby,
watching a table, the table while betting, setting with a split picked, the results, the
rules with the glossary, the sit-down, history and fairness dialogs), on a desktop
(1280x800) and a phone (390x844). No serious or critical violation may stand; the per-screen summary
(violations by impact) is printed and written to .artifacts/web/axe-<size>.txt."""

from __future__ import annotations

import hashlib
from itertools import combinations
from typing import Any

import pytest
from playwright.async_api import Browser

from clients.handrank import preview
from protocol.cards import card_text
from server.app import App
from server.web import STATIC
from tests.web import axe
from tests.web.helpers import ARTIFACTS, DESKTOP, PHONE, WAIT_MS, Player, base_url

pytestmark = [pytest.mark.timeout(240)]


@pytest.mark.asyncio
async def test_every_screen_passes_axe(
    browser: Browser, web_app: App, size: str, viewport: dict[str, int]
) -> None:
    found: dict[str, list[dict[str, Any]]] = {}
    # Sign-in: the page before any session.
    context = await browser.new_context(viewport=viewport)  # type: ignore[arg-type]
    page = await context.new_page()
    page.set_default_timeout(WAIT_MS)
    await page.goto(base_url(web_app))
    await page.wait_for_selector("#login:not([hidden])")
    found["sign-in"] = await axe.check(page)
    await context.close()

    alice = await Player.open(browser, web_app, "Alice", viewport)
    page = alice.page
    found["lobby"] = await axe.check(page)
    await page.click("tr[data-table='web'] button:not(.primary)")
    await page.wait_for_selector("#seats button[data-focus-key='sit-seat-0']")
    found["watching a table"] = await axe.check(page)
    await page.click("#to-lobby")
    await page.wait_for_selector("#lobby:not([hidden]) #lobby-rows tr")
    await page.click("tr[data-table='web'] button.primary")
    await page.wait_for_selector("#join-dialog[open]")
    found["sit-down dialog"] = await axe.check(page)
    await page.click("#join-form button[type=submit]")
    await page.wait_for_selector("#betting:not([hidden])")
    await alice.until("app.model.you && ['idle', 'betting'].includes(app.model.phase)")
    await page.click("#chips button[data-chip='25']")
    found["betting"] = await axe.check(page)
    await page.click("#place-bet")
    await alice.until("app.model.you && app.model.you.bet === 25", what="the bet")
    round_no: int = await alice.js("return app.model.round;")
    cards = await alice.cards()
    legal = next(low for low in combinations(cards, 2) if not preview(cards, low)[2])
    for card in legal:
        await page.click(f"#your-cards button[data-card='{card_text(card)}']")
    await alice.until("document.getElementById('your-low').querySelectorAll('button').length === 2")
    found["setting, a split picked"] = await axe.check(page)
    await page.click("#set-hand")
    await alice.banner(round_no)
    found["results"] = await axe.check(page)
    for dialog, screen in (
        ("rules-dialog", "rules and glossary"),
        ("history-dialog", "history"),
        ("fair-dialog", "fair play"),
    ):
        await page.click(f"button[data-open='{dialog}']")
        await page.wait_for_selector(f"#{dialog}[open]")
        if dialog == "rules-dialog":
            await page.wait_for_selector("#rules-body h3")
        if dialog == "history-dialog":
            await page.wait_for_selector("#history-list .history-row")
        found[screen] = await axe.check(page)
        await page.click(f"#{dialog} button[data-close]")
    assert alice.errors == []

    lines = [f"axe-core {axe.VERSION}, {size} {viewport['width']}x{viewport['height']}:"]
    for screen, violations in found.items():
        counts = axe.by_impact(violations)
        ids = ", ".join(f"{v['id']} ({v['impact']})" for v in violations) or "none"
        lines.append(
            f"  {screen:26} " + " ".join(f"{k} {n}" for k, n in counts.items()) + f"  [{ids}]"
        )
    summary = "\n".join(lines)
    print(summary)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"axe-{size}.txt").write_text(summary + "\n")
    for screen, violations in found.items():
        assert axe.blocking(violations) == [], (screen, axe.blocking(violations))


@pytest.fixture(params=["desktop", "phone"])
def size(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def viewport(size: str) -> dict[str, int]:
    return DESKTOP if size == "desktop" else PHONE


def test_the_vendored_checker_is_the_pinned_one_with_its_licence() -> None:
    """axe-core as tests/web/vendor_axe.sh brought it: the version, the licence, the
    file's digest as recorded; a test-only asset the server does not serve."""
    readme = (axe.AXE / "README.txt").read_text(encoding="utf-8")
    assert readme.startswith(f"axe-core {axe.VERSION} (MPL-2.0")
    assert "Mozilla Public License" in (axe.AXE / "LICENSE.txt").read_text(encoding="utf-8")
    for name in ("axe.min.js", "LICENSE.txt", "LICENSE-3RD-PARTY.txt"):
        digest = hashlib.sha256((axe.AXE / name).read_bytes()).hexdigest()
        assert f"{digest}  {name}" in readme
    assert not list(STATIC.rglob("axe*"))
