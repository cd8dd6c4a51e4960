"""Side bets served (docs/DESIGN.md, "Wagers"; protocol/PROTOCOL.md, section 14): a
client of an earlier minor, whose `bet` has no `wagers`, plays a round with a bonus bet
at a table with the Envy bonus beside a client of minor 6 that lists its wagers; each
gets the bonus fields as before and the lists beside them, and no chip is lost."""

from __future__ import annotations

import msgpack
import pytest
import redis.asyncio

from protocol.messages import Bet, GetTableInfo, HouseWay, Join, OkReply, Results
from protocol.structs import TableInfo, Wager
from tests.helpers import url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, audit_report, close_all, quick_tables

ENVY = "[table.side_bets.envy]\nmin_bonus = 5\n"


@pytest.mark.asyncio
async def test_an_old_shape_bet_and_a_list_of_wagers_play_a_round_with_envy(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    app = await start_app(tables=quick_tables("fortune") + ENVY)
    old = await Client.hello(url(app), label="old")
    new = await Client.hello(url(app), label="new")
    try:
        info = await new.ok(GetTableInfo, table_id="fortune")
        assert isinstance(info, TableInfo)
        assert [(s.kind, s.min, s.max, s.rides_on) for s in info.side_bets] == [
            ("bonus", 5, 100, None),
            ("envy", 5, 0, "bonus"),
        ]
        assert info.side_bets[1].fixed
        assert info.side_bets[1].paytable[-1].bonus_class == "four_of_a_kind"
        await old.ok(Join, table_id="fortune", buy_in=500)
        await new.ok(Join, table_id="fortune", buy_in=500)
        # The bet of a client written before minor 6: a map without `wagers`.
        rid = old.next_rid()
        await old.send(
            msgpack.packb(
                {"type": "bet", "rid": rid, "table_id": "fortune", "amount": 20, "bonus": 5}
            )
        )
        (reply,) = await old.wait(lambda: old.replies.get(rid))
        assert isinstance(reply, OkReply), reply
        await new.ok(Bet, table_id="fortune", amount=20, wagers=(Wager("bonus", 10),))
        await new.phase("fortune", "setting")
        for c in (old, new):
            await c.ok(HouseWay, table_id="fortune", mode="set")
        results = await old.event("fortune", Results)
        by_seat = {r.seat: r for r in results.results}
        stakes = sorted(
            (r.bonus_bet, r.wagers[0].kind, r.wagers[0].stake) for r in by_seat.values()
        )
        assert stakes == [(5, "bonus", 5), (10, "bonus", 10)]
        for r in by_seat.values():
            bonus = r.wagers[0]
            assert (bonus.payout, bonus.pay_class) == (r.bonus_payout, r.bonus_class)
            envy = sum(w.payout for w in r.wagers if w.kind == "envy")
            # The balance counts every payout: an older client's reading of it holds.
            assert r.balance == 500 - 20 - r.bonus_bet + r.payout + r.bonus_payout + envy
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await close_all([old, new])
