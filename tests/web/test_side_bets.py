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


async def test_a_share_of_the_meter_is_said_though_its_chips_go_to_the_account(
    browser: Browser, web_app: App
) -> None:
    """Minor 7: a progressive hand that takes a share of the meter has its class with
    payout 0 (the share goes into the account): the banner and the seat say the jackpot;
    the net counts the stake alone, as the seat's chips do."""
    page = await browser.new_page()
    await page.goto(base_url(web_app))
    hit = {
        **RESULT,
        "bonus_bet": 0,
        "wagers": [
            {"kind": "progressive", "stake": 5, "payout": 0,
             "pay_class": "natural_7_card_straight_flush"},
        ],
    }  # fmt: skip
    got = await page.evaluate(WORDS.replace("return {", "return { head: banner.head,"), hit)
    assert got["net"] == -105
    assert got["head"].startswith("Jackpot! ")
    note = "(JACKPOT: natural 7 card straight flush, its share paid to your account)"
    assert note in got["detail"], got
    assert note in got["seat"], got
    # A fixed award is paid in the payout and says its line, with no jackpot.
    hit["wagers"] = [{"kind": "progressive", "stake": 5, "payout": 40, "pay_class": "full_house"}]
    got = await page.evaluate(WORDS.replace("return {", "return { head: banner.head,"), hit)
    assert "JACKPOT" not in got["detail"]
    assert not got["head"].startswith("Jackpot")
    assert "(full house)" in got["seat"], got
    await page.close()
