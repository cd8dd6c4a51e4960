"""A sense of occasion that never slows play: the result banner with the round's amounts,
the countdown's warning in its last seconds (seen, and said politely), no motion at all
under prefers-reduced-motion (and motion without it), and sound off by default, its
toggle remembered across a reload."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser

from server.app import App
from tests.web.conftest import StartApp
from tests.web.helpers import DESKTOP, WAIT_MS, Player, base_url

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(150)]

# Counts, from now on, the most animations running at once in the page (a frame's look).
WATCH_MOTION = """() => { window.mostMotion = 0;
  const look = () => { const running = document.getAnimations().filter((a) =>
      a.playState === 'running' && Number(a.effect?.getComputedTiming().duration) > 0);
    window.mostMotion = Math.max(window.mostMotion, running.length);
    requestAnimationFrame(look); };
  look(); }"""


def signed(n: int) -> str:
    return f"+{n}" if n > 0 else f"\N{MINUS SIGN}{-n}" if n < 0 else "0"


async def test_the_banner_shows_the_amounts_of_the_settled_round(
    browser: Browser, web_app: App
) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    await alice.sit("web", buy_in=500)
    await alice.until("['idle', 'betting'].includes(app.model.phase)", what="betting")
    await alice.page.click("#chips button[data-chip='25']")
    await alice.page.check("input[name='target'][value='bonus']")
    await alice.page.click("#chips button[data-chip='10']")
    await alice.page.click("#place-bet")
    await alice.until("app.model.you.bet === 25 && app.model.you.bonus === 10", what="bet")
    round_no: int = await alice.js("return app.model.round;")
    await alice.cards()
    # The results as they come (the model drops them when the next betting opens).
    await alice.page.evaluate(
        "() => { window.seen = []; window.paigow.session.addEventListener('table',"
        " (e) => { if (e.detail.type === 'results') window.seen.push(e.detail); }); }"
    )
    await alice.house_way()
    banner = await alice.banner(round_no)
    result = await alice.js(
        "const r = window.seen.find((m) => m.round === arg); return r"
        " && r.results.find((x) => x.seat === app.model.yourSeat);",
        round_no,
    )
    main = result["payout"] - result["bet"]
    bonus = result["bonus_payout"] - result["bonus_bet"]
    assert banner["outcome"] == result["outcome"]  # the house way never fouls
    assert banner["net"] == main + bonus
    assert banner["total"] == f"Net {signed(main + bonus)}"
    assert (
        banner["head"] == {"win": "You win", "lose": "You lose", "push": "Push"}[result["outcome"]]
    )
    assert f"Main bet 25: {signed(main)}" in banner["detail"], banner
    assert f"Bonus 10: {signed(bonus)}" in banner["detail"], banner
    assert result["balance"] == 500 + main + bonus
    box = banner["box"]
    assert box["top"] >= 0, box
    assert box["bottom"] <= DESKTOP["height"], box
    # The banner never takes a click: a control under it still gets it.
    assert await alice.page.eval_on_selector(
        "#banner", "b => getComputedStyle(b).pointerEvents === 'none'"
    )
    assert alice.errors == []


QUICK_TABLE = """
[[table]]
id = "quick"
name = "Quick"
betting_ms = 10000
setting_ms = 20000
revealing_ms = 800
settling_ms = 1500
"""


async def test_the_countdown_warns_in_its_last_seconds(
    browser: Browser, start_web: StartApp, tmp_path: Path
) -> None:
    tables = tmp_path / "quick.toml"
    tables.write_text(QUICK_TABLE)
    app = await start_web(tables_file=tables)
    alice = await Player.open(browser, app, "Alice")
    bob = await Player.open(browser, app, "Bob")
    await alice.sit("quick")
    await bob.sit("quick")  # Bob does not bet: betting runs its full ten seconds
    await alice.bet(10)
    left = "app.model.deadline - app.session.now()"
    early = await alice.until(
        f"app.model.phase === 'betting' && {left} > 6000 && {{left: {left},"
        " warn: document.getElementById('phase-box').classList.contains('warn')}",
        what="betting with time to spare",
    )
    assert early["warn"] is False, early
    late = await alice.until(
        "document.getElementById('phase-box').classList.contains('warn') && app.model.phase"
        f" === 'betting' && {{left: {left}, text: document.getElementById('countdown').textContent,"
        " said: document.getElementById('announce').textContent}",
        what="the warning",
    )
    assert late["left"] <= 5000, late
    assert int(late["text"].split()[0]) <= 5, late
    # Said once, politely (the announcer is an aria-live="polite" region).
    said = await alice.until(
        "document.getElementById('announce').textContent.includes('seconds left to bet')"
        " && document.getElementById('announce').getAttribute('aria-live')",
        what="the warning said",
    )
    assert said == "polite"
    # The warning goes with the phase.
    await alice.until(
        "app.model.phase !== 'betting' && "
        "!document.getElementById('phase-box').classList.contains('warn')",
        what="the warning gone",
    )
    assert alice.errors == []


async def test_reduced_motion_stops_every_animation(browser: Browser, web_app: App) -> None:
    context = await browser.new_context(viewport=DESKTOP, reduced_motion="reduce")  # type: ignore[arg-type]
    page = await context.new_page()
    page.set_default_timeout(WAIT_MS)
    still = Player(context, page, "Still")
    await page.goto(base_url(web_app))
    await page.fill("#login-name", "Still")
    await page.press("#login-name", "Enter")
    await page.wait_for_selector("#lobby-rows tr")
    moving = await Player.open(browser, web_app, "Moving")  # the control: motion on
    await still.sit("web")
    await moving.sit("web")
    for player in (still, moving):
        await player.page.evaluate(WATCH_MOTION)
    round_no = await still.bet(25)
    await moving.bet(25)
    for player in (still, moving):
        await player.cards()
        await player.house_way()
    for player in (still, moving):
        await player.banner(round_no)
    assert await moving.page.evaluate("window.mostMotion") > 0  # cards, chips, banner moved
    assert await still.page.evaluate("window.mostMotion") == 0
    assert await page.evaluate("document.getAnimations().length") == 0
    assert still.errors == []
    assert moving.errors == []


async def test_sound_is_off_by_default_and_its_toggle_is_remembered(
    browser: Browser, web_app: App
) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    page = alice.page
    assert await page.get_attribute("#sound", "aria-pressed") == "false"
    assert await page.evaluate("localStorage.getItem('paigow.sound')") is None
    await alice.sit("web")
    await alice.bet(25)
    await alice.cards()
    assert await alice.js("return app.occasion.sound.played;") == 0  # silent: off
    await page.click("#sound")
    assert await page.get_attribute("#sound", "aria-pressed") == "true"
    assert await page.inner_text("#sound") == "Sound on"
    await page.reload()
    await alice.until("app.model && app.model.ready && app.model.yourSeat !== null", what="back")
    assert await page.get_attribute("#sound", "aria-pressed") == "true"
    assert await alice.js("return app.occasion.sound.on;") is True
    # On, the table's moments make tones (WebAudio, no files): the hand set and its result.
    await alice.house_way()
    await alice.until("app.occasion.sound.played > 0", what="a tone")
    await page.click("#sound")
    await page.reload()
    await alice.until("app.model && app.model.ready", what="back again")
    assert await page.get_attribute("#sound", "aria-pressed") == "false"
    assert alice.errors == []
