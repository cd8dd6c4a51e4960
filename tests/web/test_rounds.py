"""A new round at the browser table: last round's bet is gone from the seat and the bet
panel (the terminal client's rule, clients/model.py), and a bet placed for the coming
round is kept."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from server.app import App
from tests.web.helpers import Player

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]

# The seat tile, the bet panel and the hint as the page shows them.
SHOWN = """(() => {
  const seat = document.querySelector(`#seats li[data-seat='${app.model.yourSeat}']`);
  return { bet: app.model.you.bet, seat: seat.textContent,
    placed: document.getElementById('stake-placed').textContent,
    hint: document.getElementById('set-hint').textContent };
})()"""


async def test_a_new_betting_phase_shows_no_bet_from_the_last_round(
    browser: Browser, web_app: App
) -> None:
    alice = await Player.open(browser, web_app, "Alice")
    await alice.sit("web")
    round_no = await alice.bet(25)
    await alice.cards()
    await alice.house_way()
    # The next round's betting phase opens (and may close unbet, back to idle, on a
    # loaded machine): nothing is bet in it yet.
    await alice.until(
        "['idle', 'betting'].includes(app.model.phase) && app.model.round === arg",
        round_no + 1,
        "next betting",
    )
    shown = await alice.js(f"return {SHOWN};")
    assert shown["bet"] == 0, shown
    assert "Bet 25" not in shown["seat"], shown
    assert shown["placed"] == "", shown
    assert shown["hint"] == "Bet to be dealt in.", shown
    # A bet for this round stays, and is dealt.
    assert await alice.bet(10) == round_no + 1
    assert "Bet 10" in (await alice.js(f"return {SHOWN};"))["seat"]
    await alice.cards()
    assert alice.errors == []


async def test_a_bet_placed_in_idle_is_kept_when_its_betting_phase_opens(
    browser: Browser, web_app: App
) -> None:
    """The model alone, fed the events as an idle table sends them: `idle` with the next
    round's number, the bet (which may come before the phase event), then `betting`."""
    alice = await Player.open(browser, web_app, "Alice")
    await alice.sit("web")
    seen = await alice.page.evaluate(
        """async () => {
        const { TableModel } = await import('./js/model.js');
        const m = new TableModel('t', 'p');
        const seat = { seat: 0, status: 'playing', balance: 100, bet: 0, bonus: 0,
          hand_set: false, player_id: 'p', name: 'P' };
        m.apply({ type: 'snapshot', round: 3, phase: 'settling', deadline_ms: null,
          seats: [{ ...seat, bet: 25, hand_set: true }], commitment: 'c', your_seat: 0,
          your_cards: [], your_low: [], hands: [], results: [] });
        m.apply({ type: 'phase', round: 4, phase: 'idle', deadline_ms: null });
        m.apply({ type: 'bet_placed', seat: 0, amount: 10, bonus: 5, balance: 85 });
        m.apply({ type: 'phase', round: 4, phase: 'betting', deadline_ms: 1 });
        const kept = m.seats[0].bet;
        const keptBonus = m.seats[0].bonus;
        m.apply({ type: 'phase', round: 5, phase: 'betting', deadline_ms: 2 });
        return { kept, keptBonus, next: m.seats[0].bet, set: m.seats[0].hand_set }; }"""
    )
    assert seen == {"kept": 10, "keptBonus": 5, "next": 0, "set": False}
