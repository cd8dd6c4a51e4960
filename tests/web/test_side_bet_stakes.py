"""The bet panel stakes every staked side bet the table offers (`table_info.side_bets`):
a radio for each beside the main and bonus bets, its stake shown and sent in `bet`'s
`wagers`, its limit said, the steps the table's (the main bet's `main_bet_unit`, a
side bet's `bet_unit`), its result in words, and Rebet shows it again."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser

from tests.web.conftest import StartApp
from tests.web.helpers import Player

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(150)]

# Chips of 5 and 25 under the `whole` rounding: main bets step by 20, side bets by 5.
TABLES = """
[[table]]
id = "dealer"
name = "Dealer bets"
min_bet = 20
max_bet = 400
denominations = [5, 25]
commission_rounding = "whole"
bonus_min = 5
bonus_max = 50
min_buy_in = 100
max_buy_in = 5000
betting_ms = 15000
dealing_ms = 200
setting_ms = 20000
revealing_ms = 800
settling_ms = 1500
grace_ms = 20000

[table.side_bets.queens_dragon]
min = 5
max = 50

[table.side_bets.tiger9]
min = 5
max = 25
"""

STAKES = (
    "Object.fromEntries([...document.querySelectorAll('#stake-sides strong')]"
    ".map((s) => [s.dataset.stake, s.textContent]))"
)


async def test_a_side_bet_is_staked_stepped_and_settled(
    browser: Browser, start_web: StartApp, tmp_path: Path
) -> None:
    path = tmp_path / "dealer.toml"
    path.write_text(TABLES)
    app = await start_web(tables_file=path)
    alice = await Player.open(browser, app, "Alice")
    page = alice.page
    await alice.sit("dealer")
    await alice.until("['idle', 'betting'].includes(app.model.phase)", what="betting")
    await alice.until("document.querySelectorAll('#targets input').length === 4", what="radios")
    labels = await page.locator("#targets label").all_inner_texts()
    assert [t.strip() for t in labels] == ["Main bet", "Bonus bet", "Queen's Dragon", "Tiger 9"]
    # The main bet steps by 20 (its commission whole), from nothing and from a chip.
    assert await page.inner_text("#step-size") == "step 20"
    await page.click("#step-up")
    await page.click("#step-up")
    assert await page.inner_text("#stake-main") == "40"
    await page.click("#chips button[data-chip='5']")
    await page.click("#step-up")
    assert await page.inner_text("#stake-main") == "60"
    await page.click("#step-down")
    assert await page.inner_text("#stake-main") == "40"
    # The Queen's Dragon: chips and steps of 5.
    await page.check("input[name=target][value=queens_dragon]")
    assert await page.inner_text("#step-size") == "step 5"
    assert await page.get_attribute("#step-up", "aria-label") == "Add 5 to the Queen's Dragon"
    await page.click("#chips button[data-chip='5']")
    await page.click("#step-up")
    # The Tiger 9 up to its limit, 25: one chip more is refused in words.
    await page.check("input[name=target][value=tiger9]")
    await page.click("#chips button[data-chip='25']")
    await page.click("#chips button[data-chip='5']")
    await alice.until("document.getElementById('toast').textContent !== ''", what="a toast")
    assert await page.inner_text("#toast") == "The Tiger 9 is at most 25 here."
    await page.click("#step-down")
    await page.click("#step-down")
    assert await page.evaluate(STAKES) == {"queens_dragon": "10", "tiger9": "15"}
    await page.click("#place-bet")
    placed = await alice.until(
        "app.model.you.bet === 40 && app.model.you.wagers.length === 2 && app.model.you.wagers",
        what="the bet with its side bets",
    )
    assert sorted((w["kind"], w["amount"]) for w in placed) == [
        ("queens_dragon", 10),
        ("tiger9", 15),
    ]
    round_no = await alice.js("return app.model.round;")
    await alice.cards()
    await alice.house_way()
    result = await alice.settled(round_no)
    won = {w["kind"]: (w["stake"], w["payout"]) for w in result["wagers"]}
    assert set(won) == {"queens_dragon", "tiger9"}
    assert won["queens_dragon"] in ((10, 0), (10, 510))
    assert won["tiger9"] in ((15, 0), (15, 15 * 31))
    banner = await alice.banner(round_no)
    assert "Queen's Dragon 10: " in banner["detail"], banner
    assert "Tiger 9 15: " in banner["detail"], banner
    # The next round: Rebet repeats the side bets, and the panel shows them.
    await alice.until(
        "['idle', 'betting'].includes(app.model.phase) && app.model.round === arg",
        round_no + 1,
        "next round",
    )
    await page.click("#rebet")
    await alice.until("app.model.you.bet === 40 && app.model.you.wagers.length === 2", what="rebet")
    await alice.until(
        f"JSON.stringify({STAKES}) === arg",
        '{"queens_dragon":"10","tiger9":"15"}',
        "the side stakes in the panel",
    )
    assert await page.inner_text("#stake-placed") == "(on the table)"
    assert alice.errors == []
