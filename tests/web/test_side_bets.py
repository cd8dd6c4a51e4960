"""The browser table's words for side bets beyond the bonus (protocol minor 6): the
banner and the seat's result say an Envy win, and count it in the net."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from server.app import App
from tests.web.helpers import base_url

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]

RESULT = {
    "seat": 0, "outcome": "lose", "high": "lose", "low": "lose", "bet": 100, "payout": 0,
    "commission": 0, "bonus_bet": 10, "bonus_payout": 0, "balance": 940, "bonus_class": None,
    "wagers": [
        {"kind": "bonus", "stake": 10, "payout": 0, "pay_class": None},
        {"kind": "envy", "stake": 0, "payout": 50, "pay_class": "four_of_a_kind"},
    ],
}  # fmt: skip

WORDS = """async (r) => {
  const occasion = await import('/js/ui/occasion.js');
  const view = await import('/js/ui/tableview.js');
  const banner = occasion.outcome(r, null);
  return { net: banner.net, detail: banner.detail, seat: view.resultText(r, null) };
}"""


async def test_an_envy_win_is_said_and_counted(browser: Browser, web_app: App) -> None:
    page = await browser.new_page()
    await page.goto(base_url(web_app))
    got = await page.evaluate(WORDS, RESULT)
    assert got["net"] == -60
    assert "Envy: +50 (four of a kind)" in got["detail"], got
    assert "Bonus 10: \N{MINUS SIGN}10" in got["detail"], got
    assert (
        got["seat"] == "Lose \N{MINUS SIGN}100 · Bonus \N{MINUS SIGN}10 · Envy +50 (four of a kind)"
    )
    # A result of a server of an earlier minor (no `wagers`) reads as before.
    old = {k: v for k, v in RESULT.items() if k != "wagers"}
    got = await page.evaluate(WORDS, old)
    assert got["net"] == -110
    assert "Envy" not in got["detail"]
    await page.close()
