"""A player at the browser table, driven as a person would: clicks, keys, what is shown.

Every wait is on a condition in the page (Playwright's ``wait_for_function`` and
locators), bounded by the page's default timeout; nothing sleeps for a fixed time.
The page exposes its controller as ``window.paigow`` (``paigow.model`` is the table
on screen), which the tests read to know what the page believes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, BrowserContext, ConsoleMessage, Error, Page

from server.app import App

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / ".artifacts" / "web"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
WAIT_MS = 20_000  # the bound of every wait in the page


def base_url(app: App) -> str:
    return f"http://127.0.0.1:{app.port}/"


class Player:
    """One browser context (its own sessionStorage, so its own player) with one page."""

    def __init__(self, context: BrowserContext, page: Page, name: str) -> None:
        self.context = context
        self.page = page
        self.name = name
        self.errors: list[str] = []  # uncaught exceptions and protocol errors in the page
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        page.on("console", self._console)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error" and "bad frame" in message.text:
            self.errors.append(f"console: {message.text}")

    @classmethod
    async def open(
        cls, browser: Browser, app: App, name: str, viewport: dict[str, int] | None = None
    ) -> Player:
        """A new player: the page loaded and signed in as a guest named ``name``."""
        context = await browser.new_context(viewport=viewport or DESKTOP)  # type: ignore[arg-type]
        page = await context.new_page()
        page.set_default_timeout(WAIT_MS)
        player = cls(context, page, name)
        await page.goto(base_url(app))
        await page.fill("#login-name", name)
        await page.press("#login-name", "Enter")
        await page.wait_for_selector("#lobby-rows tr")
        return player

    async def js(self, expression: str, arg: Any = None) -> Any:
        """The value of a JavaScript function body of ``paigow`` (the page's controller)."""
        body = f"(arg) => {{ const app = window.paigow; {expression} }}"
        return await self.page.evaluate(body, arg)

    async def until(self, condition: str, arg: Any = None, what: str = "") -> Any:
        """Wait until a JavaScript expression over ``app`` (the controller) is truthy."""
        body = (
            "(arg) => { const app = window.paigow;"
            f" try {{ return {condition}; }} catch {{ return false; }} }}"
        )
        try:
            handle = await self.page.wait_for_function(body, arg=arg, timeout=WAIT_MS)
        except Error as exc:
            state = await self.state()
            raise AssertionError(f"{self.name}: waiting for {what or condition}: {state}") from exc
        return await handle.json_value()

    async def state(self) -> str:
        """What the page shows, for a failure message."""
        try:
            return json.dumps(
                await self.js(
                    "const m = app.model; return m && {phase: m.phase, round: m.round, "
                    "seat: m.yourSeat, cards: m.yourCards, low: m.yourLow, "
                    "status: app.session.status,"
                    " toast: document.getElementById('toast').textContent};"
                )
            )
        except Error as exc:
            return f"(page unreadable: {exc})"

    async def sit(self, table: str, buy_in: int | None = None) -> int:
        """Sit down at ``table`` from the lobby (the dialog's default buy-in unless given);
        the seat taken."""
        await self.page.click(f"tr[data-table='{table}'] button.primary")
        await self.page.wait_for_selector("#join-dialog[open]")
        if buy_in is not None:
            await self.page.fill("#join-buyin", str(buy_in))
        await self.page.click("#join-form button[type=submit]")
        await self.page.wait_for_selector("#betting:not([hidden])")
        found = await self.until(
            "app.model.yourSeat !== null && {seat: app.model.yourSeat}", what="a seat"
        )
        seat: int = found["seat"]
        return seat

    async def bet(self, *chips: int) -> int:
        """Click chips (by value) for the main bet and place it; the round it is in."""
        await self.until(
            "['idle', 'betting'].includes(app.model.phase) && app.model.you", what="betting"
        )
        for chip in chips:
            await self.page.click(f"#chips button[data-chip='{chip}']")
        await self.page.click("#place-bet")
        total = sum(chips)
        await self.until("app.model.you && app.model.you.bet === arg", total, "the bet placed")
        round_no: int = await self.js("return app.model.round;")
        return round_no

    async def cards(self) -> list[int]:
        """Wait for this round's seven cards in the page; the card codes."""
        cards: list[int] = await self.until(
            "app.model.yourCards.length === 7 && ['dealing', 'setting'].includes(app.model.phase)"
            " && document.querySelectorAll('#you button.card').length === 7"
            " && app.model.yourCards",
            what="the cards",
        )
        return cards

    async def house_way(self) -> None:
        """Press the house-way button; wait until the page shows the hand set."""
        await self.page.click("#house-way")
        await self.until("app.model.yourLow.length === 2", what="the hand set")

    async def settled(self, round_no: int) -> dict[str, Any]:
        """Wait for the results of ``round_no`` at this player's seat; the result."""
        result: dict[str, Any] = await self.until(
            "app.model.round === arg && app.model.results.get(app.model.yourSeat)",
            round_no,
            f"the results of round {round_no}",
        )
        return result

    async def banner(self, round_no: int) -> dict[str, Any]:
        """Wait for the result banner of ``round_no``; what it shows. The banner stays a
        few seconds, where the model's results go as soon as the next betting opens
        (often in the same moment as they come)."""
        shown: dict[str, Any] = await self.until(
            "(() => { const b = document.getElementById('banner');"
            " const text = (id) => document.getElementById(id).textContent;"
            " return !b.hidden && b.dataset.round === String(arg) && {outcome: b.dataset.outcome,"
            " net: Number(b.dataset.net), head: text('banner-head'), total: text('banner-net'),"
            " detail: text('banner-detail'), box: b.getBoundingClientRect().toJSON()}; })()",
            round_no,
            f"the banner of round {round_no}",
        )
        return shown

    async def close(self) -> None:
        await self.context.close()
