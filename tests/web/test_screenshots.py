"""Screenshots of the table as players see it, desktop (1280x800) and phone (390x844):
the lobby, betting (chips picked, the countdown running), setting with a split picked,
and the results with their banner. Kept in ``.artifacts/web/screenshots/``; with
``PAIGOW_SCREENSHOTS`` set to a folder (``docs/screenshots`` for the documents) they are
written there too."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from itertools import combinations
from pathlib import Path

import pytest
from playwright.async_api import Browser

from clients.bots import run_bot
from clients.handrank import preview
from protocol.cards import card_text
from server.app import App
from tests.web.helpers import ARTIFACTS, DESKTOP, PHONE, Player

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(180)]

SHOTS = ARTIFACTS / "screenshots"
PNG = b"\x89PNG\r\n\x1a\n"


def keep(paths: list[Path], folder: Path) -> None:
    """Copies the screenshots into ``folder`` (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in paths:
        shutil.copy(path, folder / path.name)
        print(f"screenshot: {folder / path.name}")


async def shoot(player: Player, screen: str) -> Path:
    """The page as it is on screen (no scrolling), as ``<size>-<screen>.png``."""
    size = "desktop" if player.page.viewport_size == DESKTOP else "phone"
    path = SHOTS / f"{size}-{screen}.png"
    await player.page.evaluate("window.scrollTo(0, 0)")
    # Entrances (cards, chips, the banner) shown finished, not caught half-way.
    await player.page.screenshot(path=str(path), animations="disabled")
    return path


async def test_screenshots_of_every_screen(browser: Browser, web_app: App) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    desk = await Player.open(browser, web_app, "Desk", DESKTOP)
    phone = await Player.open(browser, web_app, "Phone", PHONE)
    players = (desk, phone)
    paths = [await shoot(p, "lobby") for p in players]
    for player in players:
        await player.sit("web", buy_in=1000)
    # A bot's bet opens betting: its countdown runs while the two pick their chips. It
    # would play a second round too: it is stopped after the pictures, still seated.
    bot = asyncio.create_task(
        run_bot(f"ws://127.0.0.1:{web_app.port}/", "web", name="Bot", rounds=2, bet=10)
    )
    for player in players:
        await player.until("app.model.phase === 'betting'", what="betting open")
        for chip in (25, 10):
            await player.page.click(f"#chips button[data-chip='{chip}']")
        paths.append(await shoot(player, "betting"))
    for player in players:
        await player.page.click("#place-bet")
        await player.until("app.model.you.bet === 35", what="the bet")
    round_no: int = await desk.js("return app.model.round;")

    async def split(player: Player) -> None:
        cards = await player.cards()
        low = next(low for low in combinations(cards, 2) if not preview(cards, low)[2])
        for card in low:
            await player.page.click(f"#your-cards button[data-card='{card_text(card)}']")
        await player.until("document.querySelectorAll('#your-low button.card').length === 2")
        paths.append(await shoot(player, "setting"))
        await player.page.click("#set-hand")

    await asyncio.gather(split(desk), split(phone))

    async def results(player: Player) -> None:
        await player.banner(round_no)
        paths.append(await shoot(player, "results"))

    await asyncio.gather(results(desk), results(phone))
    bot.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await bot
    assert len(paths) == 8
    for path in paths:
        assert path.read_bytes().startswith(PNG), path
    if folder := os.environ.get("PAIGOW_SCREENSHOTS"):
        keep(paths, Path(folder))
    assert desk.errors == []
    assert phone.errors == []
