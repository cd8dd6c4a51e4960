"""The Queen's Dragon and the Tiger 9 served (docs/RULES.md, "Commission-free tables";
protocol/PROTOCOL.md, section 14): a table of a tables file offers both, its
`table_info` lists them with their limits and pay lines, two players stake them in
`bet`'s `wagers`, each result settles them on the dealer's hand as revealed, and the
audit finds every chip."""

from __future__ import annotations

import pytest
import redis.asyncio

from protocol.messages import Bet, GetTableInfo, HouseWay, Join, Results, Reveal
from protocol.structs import TableInfo, Wager
from server.rules.dealer_hands import is_nine_high_low, is_queen_high_pai_gow
from server.rules.queens_dragon import QUEEN_HIGH_PAI_GOW
from server.rules.tiger9 import NINE_HIGH_LOW
from tests.helpers import url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, audit_report, close_all, quick_tables

DEALER = 6
SIDE_BETS = """
[table.side_bets.queens_dragon]
min = 5
max = 50
[table.side_bets.tiger9]
min = 5
max = 25
odds = 25
"""


@pytest.mark.asyncio
async def test_both_dealer_bets_play_a_served_round_and_the_audit_is_clean(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    app = await start_app(tables=quick_tables("dealer") + SIDE_BETS)
    a = await Client.hello(url(app), label="a")
    b = await Client.hello(url(app), label="b")
    try:
        info = await a.ok(GetTableInfo, table_id="dealer")
        assert isinstance(info, TableInfo)
        assert [(s.kind, s.min, s.max, s.fixed) for s in info.side_bets] == [
            ("bonus", 5, 100, False),
            ("queens_dragon", 5, 50, False),
            ("tiger9", 5, 25, False),
        ]
        dragon, tiger = info.side_bets[1:]
        assert [(p.bonus_class, p.pays) for p in dragon.paytable] == [(QUEEN_HIGH_PAI_GOW, 50)]
        assert [(p.bonus_class, p.pays) for p in tiger.paytable] == [(NINE_HIGH_LOW, 25)]
        for c in (a, b):
            await c.ok(Join, table_id="dealer", buy_in=500)
        await a.ok(
            Bet,
            table_id="dealer",
            amount=20,
            wagers=(Wager("queens_dragon", 10), Wager("tiger9", 5)),
        )
        await b.ok(Bet, table_id="dealer", amount=20, wagers=(Wager("tiger9", 25),))
        await a.phase("dealer", "setting")
        for c in (a, b):
            await c.ok(HouseWay, table_id="dealer", mode="set")
        reveal = await a.event("dealer", Reveal)
        dealer = next(h for h in reveal.hands if h.hand == DEALER)
        queen_high = is_queen_high_pai_gow(dealer.high + dealer.low)
        nine_low = is_nine_high_low(dealer.low)
        results = await a.event("dealer", Results)
        by_seat = {r.seat: r for r in results.results}
        assert len(by_seat) == 2
        stakes = {r.seat: [(w.kind, w.stake) for w in r.wagers] for r in by_seat.values()}
        assert sorted(stakes.values()) == [
            [("queens_dragon", 10), ("tiger9", 5)],
            [("tiger9", 25)],
        ]
        for r in by_seat.values():
            for w in r.wagers:
                wins = queen_high if w.kind == "queens_dragon" else nine_low
                odds = 50 if w.kind == "queens_dragon" else 25
                line = QUEEN_HIGH_PAI_GOW if w.kind == "queens_dragon" else NINE_HIGH_LOW
                assert (w.pay_class, w.payout) == (
                    (line, w.stake * (odds + 1)) if wins else (None, 0)
                )
            staked = sum(w.stake for w in r.wagers)
            back = sum(w.payout for w in r.wagers)
            assert r.balance == 500 - 20 - staked + r.payout + back
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await close_all([a, b])
