"""Screenshots of the built-in tables with side bets, desktop (1280x800) and phone
(390x844): Fortune (the bonus bet, the Envy bonus and its jackpot: its bet panel with a
bonus, its rules with the Envy pay table, a result with an Envy win), EZ Pai Gow (no
commission: its bet panel with a Queen's Dragon stake, a result naming it) and Tiger (no
commission on a dealer's nine-high low: its bet panel with a Tiger 9 stake, a result
naming it, its rules with the Tiger 9). Kept in ``.artifacts/web/screenshots/`` as
``<size>-<table>-<screen>.png`` (``PAIGOW_SCREENSHOTS``: copied there too). axe finds
nothing blocking on the bet panel with a side bet's radio.

The Envy win is dealt honestly: the test chooses the Fortune round's seed among seeds
whose real shuffle gives the second seat four of a kind or better (the shell takes a
round's seed from ``secrets.token_bytes``, replaced here for that round only). The
cards are the seed's, so the page's fairness check of the round passes."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser

from protocol.fairness import deal
from server.gateway import money
from server.host import host
from server.rules.bonus import BonusClass, classify_bonus
from tests.web import axe
from tests.web.conftest import StartApp
from tests.web.helpers import DESKTOP, PHONE, Player
from tests.web.test_screenshots import PNG, SHOTS, keep

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(300)]

# The words of each side bet's line in the result banner, for a stake of 5 or 10.
WORDS = {"bonus": "Bonus 5: ", "queens_dragon": "Queen's Dragon 10: ", "tiger9": "Tiger 9 10: "}


def envy_seeds() -> Iterator[bytes]:
    """Seeds whose deal gives seat 1 four of a kind or better (the Envy bonus's lowest
    paying hand at Fortune) and seat 0 less: seat 0's bonus bet is paid Envy for it."""
    for i in itertools.count():
        seed = hashlib.sha256(b"envy-%d" % i).digest()
        hands = deal(seed)
        if classify_bonus(hands[1]) <= BonusClass.FOUR_OF_A_KIND < classify_bonus(hands[0]):
            yield seed


class ChosenSeeds:
    """``secrets`` for the shell's new rounds: a chosen seed while ``chosen`` has one,
    else a random one, as the server's own."""

    def __init__(self) -> None:
        self.chosen: list[bytes] = []

    def token_bytes(self, n: int) -> bytes:
        return self.chosen.pop(0) if self.chosen else secrets.token_bytes(n)


async def shoot(player: Player, table: str, screen: str) -> Path:
    """The page as it is on screen (no scrolling), as ``<size>-<table>-<screen>.png``."""
    size = "desktop" if player.page.viewport_size == DESKTOP else "phone"
    path = SHOTS / f"{size}-{table}-{screen}.png"
    await player.page.evaluate("window.scrollTo(0, 0)")
    await player.page.screenshot(path=str(path), animations="disabled")
    return path


async def play(
    players: tuple[Player, ...], table: str, side: str, paths: list[Path]
) -> list[dict[str, object]]:
    """Both players sit at ``table`` (seats 0 and 1), stake 25 and 5 or 10 on ``side``,
    set by the house way; the panel and the result shot. Each one's banner."""
    for seat, player in enumerate(players):
        assert await player.sit(table, buy_in=1000) == seat
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

    async def results(player: Player) -> dict[str, object]:
        banner = await player.banner(round_no)
        assert WORDS[side] in str(banner["detail"]), banner
        paths.append(await shoot(player, table, "results"))
        return banner

    return list(await asyncio.gather(*(results(p) for p in players)))


async def rules(player: Player, table: str, heading: str, paths: list[Path]) -> None:
    """The table's rules page, scrolled to ``heading``, shot; then closed."""
    page = player.page
    await page.click("button[data-open=rules-dialog]")
    await player.until(
        "document.getElementById('rules-body').textContent.includes(arg)", heading, heading
    )
    await page.get_by_role("heading", name=heading, exact=True).evaluate(
        "(el) => el.scrollIntoView({ block: 'start' })"
    )
    size = "desktop" if page.viewport_size == DESKTOP else "phone"
    path = SHOTS / f"{size}-{table}-rules.png"
    await page.screenshot(path=str(path), animations="disabled")
    paths.append(path)
    await page.keyboard.press("Escape")


async def test_screenshots_of_the_tables_with_side_bets(
    browser: Browser, start_web: StartApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    app = await start_web(tables_file=None)  # the shipped tables
    seeds = ChosenSeeds()
    monkeypatch.setattr(money, "secrets", seeds)
    monkeypatch.setattr(host, "secrets", seeds)
    paths: list[Path] = []
    fortune = (
        await Player.open(browser, app, "Fay", DESKTOP),
        await Player.open(browser, app, "Fon", PHONE),
    )
    # The sitting down that opens the round takes its seed: every new round's, until
    # the results.
    seeds.chosen = list(itertools.islice(envy_seeds(), 4))
    banners = await play(fortune, "fortune", "bonus", paths)
    seeds.chosen = []
    assert "Envy bonus: +" in str(banners[0]["detail"]), banners[0]  # seat 1's hand
    # The seed's own cards: the page's check of the round passes.
    await fortune[0].until(
        "document.getElementById('fair-badge').dataset.verdict === 'ok'", what="fair"
    )
    # Fortune's rules: the Envy bonus's pay table under the bonus bet's.
    await rules(fortune[0], "fortune", "Envy bonus", paths)
    ez = (
        await Player.open(browser, app, "Ezra", DESKTOP),
        await Player.open(browser, app, "Eve", PHONE),
    )
    await play(ez, "ez", "queens_dragon", paths)
    tiger = (
        await Player.open(browser, app, "Tia", DESKTOP),
        await Player.open(browser, app, "Tom", PHONE),
    )
    await play(tiger, "tiger", "tiger9", paths)
    for player in tiger:
        await rules(player, "tiger", "Tiger 9", paths)
    assert len(paths) == 15
    for path in paths:
        assert path.read_bytes().startswith(PNG), path
    if folder := os.environ.get("PAIGOW_SCREENSHOTS"):
        keep(paths, Path(folder))
    for player in (*fortune, *ez, *tiger):
        assert player.errors == []
