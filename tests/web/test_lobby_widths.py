"""The lobby and the table on any screen: no sideways scrolling at 360, 390, 768 and
1280 pixels, and every table's Watch and Sit down buttons on screen."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from server.app import App
from tests.web.helpers import Player

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]

WIDTHS = (360, 390, 768, 1280)

FITS = """() => {
  const boxes = [...document.querySelectorAll('#lobby-rows button')].map((b) => {
    const r = b.getBoundingClientRect();
    return { text: b.textContent, left: r.left, right: r.right };
  });
  return { scroll: document.documentElement.scrollWidth, inner: innerWidth, boxes };
}"""


async def test_the_lobby_fits_every_width(browser: Browser, web_app: App) -> None:
    alice = await Player.open(browser, web_app, "Alice", {"width": 390, "height": 844})
    for width in WIDTHS:
        await alice.page.set_viewport_size({"width": width, "height": 844})
        await alice.page.evaluate("() => new Promise(requestAnimationFrame)")
        fits = await alice.page.evaluate(FITS)
        assert fits["scroll"] <= fits["inner"], (width, fits["scroll"])
        assert len(fits["boxes"]) == 4  # two tables, Watch and Sit down each
        for box in fits["boxes"]:
            assert box["left"] >= 0, (width, box)
            assert box["right"] <= fits["inner"], (width, box)
    await alice.sit("web")
    for width in WIDTHS:
        await alice.page.set_viewport_size({"width": width, "height": 844})
        await alice.page.evaluate("() => new Promise(requestAnimationFrame)")
        scroll = await alice.page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, ("table", width, scroll)
    assert alice.errors == []
