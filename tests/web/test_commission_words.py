"""The browser's rules text says how the table rounds the commission
(table_info.commission_rounding, protocol minor 4), with the table's own examples."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from server.app import App
from tests.web.helpers import DESKTOP, base_url

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]

TEXTS = """async () => {
  const w = await import('./js/ui/words.js');
  return [w.commissionText(5), w.commissionText(5, 'down', 5), w.commissionText(5, 'up', 5),
          w.commissionText(5, 'whole', 20)];
}"""


async def test_the_commission_is_told_as_the_table_rounds_it(
    browser: Browser, web_app: App
) -> None:
    context = await browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    page = await context.new_page()
    await page.goto(base_url(web_app))
    old, down, up, whole = await page.evaluate(TEXTS)
    # A server of an earlier minor sends no rounding: rounded down, as it was.
    assert old == down
    assert "rounded down to whole chips" in down
    assert "a win of 10 pays 10" in down
    assert "a win of 20 pays 19" in down
    assert "rounded up to whole chips" in up
    assert "a win of 10 pays 9" in up
    assert "a win of 19 pays 18" in up
    assert "exactly" in whole
    assert "steps of 20" in whole
    assert "a win of 20 pays 19" in whole
    assert "a win of 100 pays 95" in whole
    await context.close()


FREE = """async () => {
  const w = await import('./js/ui/words.js');
  return [w.commissionText(0, 'down', 5, 'ez'), w.commissionText(0, 'down', 5, 'nine_low'),
          w.commissionText(5, 'down', 5, 'none')];
}"""


async def test_a_commission_free_table_tells_the_dealer_s_hand_that_pushes(
    browser: Browser, web_app: App
) -> None:
    # table_info.commission_free (protocol minor 5).
    context = await browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    page = await context.new_page()
    await page.goto(base_url(web_app))
    ez, nine, none = await page.evaluate(FREE)
    assert ez.startswith("None: a winning main bet pays even money.")
    assert "won or lost, pushes when the dealer's hand is a queen-high pai gow" in ez
    assert "a nine-high low hand" in nine
    assert "rounded down to whole chips" in none
    await context.close()
