"""Screenshots of the built-in tables with side bets, desktop (1280x800) and phone
(390x844): Fortune (the bonus bet and the Envy bonus: its bet panel with a bonus, its
rules with the Envy pay table, a result) and EZ Pai Gow (no commission: its bet panel
with a Queen's Dragon stake, a result naming it). Kept in ``.artifacts/web/screenshots/``
as ``<size>-<table>-<screen>.png`` (``PAIGOW_SCREENSHOTS``: copied there too). axe finds
nothing blocking on the bet panel with a side bet's radio."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from playwright.async_api import Browser

from tests.web import axe
from tests.web.conftest import StartApp
from tests.web.helpers import DESKTOP, PHONE, Player
from tests.web.test_screenshots import PNG, SHOTS, keep

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(240)]


async def shoot(player: Player, table: str, screen: str) -> Path:
    """The page as it is on screen (no scrolling), as ``<size>-<table>-<screen>.png``."""
    size = "desktop" if player.page.viewport_size == DESKTOP else "phone"
    path = SHOTS / f"{size}-{table}-{screen}.png"
    await player.page.evaluate("window.scrollTo(0, 0)")
    await player.page.screenshot(path=str(path), animations="disabled")
    return path


async def play(players: tuple[Player, ...], table: str, side: str, paths: list[Path]) -> None:
    """Both players sit at ``table``, stake 25 and 5 or 10 on ``side``, set by the house
    way; the panel and the result shot."""
    for player in players:
        await player.sit(table, buy_in=1000)
    for player in players:
        page = player.page
        await player.until("['idle', 'betting'].includes(app.model.phase)", what="betting")
        await page.click("#chips button[data-chip='25']")
        await page.check(f"input[name=target][value={side}]")
        for _ in range(1 if side == "bonus" else 2):
            await page.click("#chips button[data-chip='5']")
        paths.append(await shoot(player, table, "betting"))
        if player.page.viewport_size == DESKTOP:
            violations = await axe.check(page)
            assert axe.blocking(violations) == [], axe.blocking(violations)
        await page.click("#place-bet")
        await player.until("app.model.you.bet === 25", what="the bet")
    round_no: int = await players[0].js("return app.model.round;")
    for player in players:
        await player.cards()
        await player.house_way()

    async def results(player: Player) -> None:
        banner = await player.banner(round_no)
        words = "Bonus 5: " if side == "bonus" else "Queen's Dragon 10: "
        assert words in banner["detail"], banner
        paths.append(await shoot(player, table, "results"))

    await asyncio.gather(*(results(p) for p in players))


async def test_screenshots_of_the_tables_with_side_bets(
    browser: Browser, start_web: StartApp
) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    app = await start_web(tables_file=None)  # the shipped tables
    paths: list[Path] = []
    fortune = (
        await Player.open(browser, app, "Fay", DESKTOP),
        await Player.open(browser, app, "Fon", PHONE),
    )
    await play(fortune, "fortune", "bonus", paths)
    # Fortune's rules: the Envy bonus's pay table under the bonus bet's.
    desk = fortune[0]
    await desk.page.click("button[data-open=rules-dialog]")
    await desk.until("document.getElementById('rules-body').textContent.includes('Envy bonus')")
    await desk.page.get_by_role("heading", name="Envy bonus", exact=True).evaluate(
        "(el) => el.scrollIntoView({ block: 'start' })"
    )
    path = SHOTS / "desktop-fortune-rules.png"
    await desk.page.screenshot(path=str(path), animations="disabled")
    paths.append(path)
    ez = (
        await Player.open(browser, app, "Ezra", DESKTOP),
        await Player.open(browser, app, "Eve", PHONE),
    )
    await play(ez, "ez", "queens_dragon", paths)
    assert len(paths) == 9
    for path in paths:
        assert path.read_bytes().startswith(PNG), path
    if folder := os.environ.get("PAIGOW_SCREENSHOTS"):
        keep(paths, Path(folder))
    for player in (*fortune, *ez):
        assert player.errors == []
