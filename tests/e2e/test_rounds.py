"""Full rounds through a real server: several players at one table, several tables at once.

Every client must see the table's events with gapless ``seq``, the same public
events as everyone else, and only its own cards before the reveal.
"""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio

from protocol.messages import (
    Bet,
    Cards,
    Commitment,
    GetBalance,
    GetHistory,
    Hidden,
    HouseWay,
    Join,
    Results,
    Reveal,
    SeedReveal,
    SetHand,
    Snapshot,
    Watch,
)
from protocol.structs import Balances, HandChoice, HistoryPage, Joined
from tests.helpers import url
from tests.server.conftest import StartApp
from tests.server.helpers import (
    Client,
    assert_gapless,
    assert_same_public_events,
    audit_report,
    close_all,
    quick_tables,
)

BUY_IN = 1000
BET = 50


async def set_hand(client: Client, table_id: str, how: str) -> HandChoice:
    """Set the client's hand: ``player`` (suggested split sent as set_hand) or ``house``."""
    if how == "house":
        result = await client.ok(HouseWay, table_id=table_id, mode="set")
    else:
        suggested = await client.ok(HouseWay, table_id=table_id, mode="suggest")
        assert isinstance(suggested, HandChoice)
        assert not suggested.applied
        result = await client.ok(SetHand, table_id=table_id, low=suggested.low)
    assert isinstance(result, HandChoice)
    assert result.applied
    return result


async def play_round(players: list[Client], table_id: str, round_no: int) -> Results:
    """Every player bets, sets a hand once dealt; the round's results."""
    starts = [len(p.table(table_id)) for p in players]
    await asyncio.gather(*(p.ok(Bet, table_id=table_id, amount=BET) for p in players))
    for n, (p, start) in enumerate(zip(players, starts, strict=True)):
        cards = await p.event(table_id, Cards, lambda m: m.round == round_no, after=start)
        await p.phase(table_id, "setting", after=start)
        choice = await set_hand(p, table_id, "house" if n % 2 else "player")
        assert sorted(choice.high + choice.low) == sorted(cards.cards)
    results = [
        await p.event(table_id, Results, lambda m: m.round == round_no, after=s)
        for p, s in zip(players, starts, strict=True)
    ]
    for p, s in zip(players, starts, strict=True):
        await p.event(table_id, SeedReveal, lambda m: m.round == round_no, after=s)
        # Then the next round opens its betting.
        await p.event(table_id, Commitment, lambda m: m.round == round_no + 1, after=s)
    assert all(r == results[0] for r in results)
    return results[0]


def check_cards_private(players: dict[int, Client], table_id: str, watchers: list[Client]) -> None:
    """Each player got its own cards only; a watcher only ``hidden``; the reveal agrees."""
    for seat, p in players.items():
        events = p.table(table_id)
        own = [m for m in events if isinstance(m, Cards)]
        assert own, f"{p.label} got no cards"
        for cards in own:
            assert cards.seat == seat, f"{p.label} (seat {seat}) got the cards of {cards.seat}"
            reveal = next(m for m in events if isinstance(m, Reveal) and m.round == cards.round)
            hand = next(h for h in reveal.hands if h.hand == seat)
            assert sorted(hand.high + hand.low) == sorted(cards.cards)
            # Before the reveal, nothing the player received held another seat's cards.
            before = events[: events.index(reveal)]
            others = {h.hand: set(h.high + h.low) for h in reveal.hands if h.hand != seat}
            for m in before:
                if isinstance(m, Snapshot):
                    assert not m.hands
                    assert not m.your_cards or set(m.your_cards) == set(cards.cards)
            for other in others.values():
                assert not other & set(cards.cards)
    for w in watchers:
        assert not any(isinstance(m, Cards) for m in w.table(table_id))
        assert any(isinstance(m, Hidden) for m in w.table(table_id))


@pytest.mark.asyncio
async def test_three_guests_play_two_rounds(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    app = await start_app(quick_tables("q1"))
    players = [await Client.hello(url(app), label=f"p{i}", name=f"P{i}") for i in range(3)]
    watcher = await Client.hello(url(app), label="w")
    try:
        await watcher.ok(Watch, table_id="q1")
        # Joins at the same time, each asking for any free seat: three seats taken.
        joined = await asyncio.gather(*(p.ok(Join, table_id="q1", buy_in=BUY_IN) for p in players))
        assert all(isinstance(j, Joined) for j in joined)
        assert sorted(j.seat for j in joined) == [0, 1, 2]
        by_seat = {j.seat: p for j, p in zip(joined, players, strict=True)}

        first = await play_round(players, "q1", 1)
        second = await play_round(players, "q1", 2)
        for results in (first, second):
            assert sorted(r.seat for r in results.results) == [0, 1, 2]
            for r in results.results:
                assert r.bet == BET
                assert r.payout in (0, BET, 2 * BET - r.commission)

        everyone = [*players, watcher]
        for c in everyone:
            assert_gapless(c.table("q1"), c.label)
        assert_same_public_events(everyone, "q1")
        check_cards_private(by_seat, "q1", [watcher])

        # Each player's balance follows from its results; the history has both rounds.
        for seat, p in by_seat.items():
            balances = await p.ok(GetBalance)
            assert isinstance(balances, Balances)
            expected = BUY_IN
            for results in (first, second):
                r = next(r for r in results.results if r.seat == seat)
                expected += r.payout + r.bonus_payout - r.bet - r.bonus_bet
                assert r.balance == expected
            assert [(t.table_id, t.balance) for t in balances.tables] == [("q1", expected)]
            history = await p.ok(GetHistory)
            assert isinstance(history, HistoryPage)
            assert [r.round for r in history.rounds] == [2, 1]
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await close_all([*players, watcher])


@pytest.mark.asyncio
async def test_several_tables_at_once(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    tables = ["t1", "t2", "t3"]
    app = await start_app(quick_tables(*tables))
    seated = {t: [await Client.hello(url(app), label=f"{t}p{i}") for i in range(2)] for t in tables}
    watcher = await Client.hello(url(app), label="w")
    clients = [watcher, *(c for cs in seated.values() for c in cs)]
    try:
        for t in tables:
            await watcher.ok(Watch, table_id=t)

        async def table_plays(t: str) -> Results:
            for i, p in enumerate(seated[t]):
                await p.ok(Join, table_id=t, buy_in=BUY_IN, seat=i * 2)
            return await play_round(seated[t], t, 1)

        results = await asyncio.gather(*(table_plays(t) for t in tables))
        for t, r in zip(tables, results, strict=True):
            assert r.table_id == t
            assert sorted(x.seat for x in r.results) == [0, 2]
            assert_gapless(watcher.table(t), f"w at {t}")
            for p in seated[t]:
                assert_gapless(p.table(t), p.label)
                # A player sees only the table it plays at.
                assert set(p.events) == {t}
            assert_same_public_events([*seated[t], watcher], t)
            check_cards_private({2 * i: p for i, p in enumerate(seated[t])}, t, [watcher])
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await close_all(clients)


@pytest.mark.asyncio
async def test_history_of_one_table_fills_its_pages(start_app: StartApp) -> None:
    """Filtered by table, a page holds that table's rounds only, as many as asked for
    while older ones exist, however the player's rounds at other tables interleave."""
    app = await start_app(quick_tables("ha", "hb"))
    player = await Client.hello(url(app), label="p")
    try:
        for t in ("ha", "hb"):
            await player.ok(Join, table_id=t, buy_in=BUY_IN)
        # Newest first, the log is: ha 3, hb 2, hb 1, ha 2, ha 1 (hb's rounds between).
        await play_round([player], "ha", 1)
        await play_round([player], "ha", 2)
        await play_round([player], "hb", 1)
        await play_round([player], "hb", 2)
        await play_round([player], "ha", 3)

        async def pages(table_id: str, limit: int) -> list[list[int]]:
            found: list[list[int]] = []
            cursor: str | None = None
            while True:
                page = await player.ok(GetHistory, table_id=table_id, limit=limit, cursor=cursor)
                assert isinstance(page, HistoryPage)
                assert {r.table_id for r in page.rounds} <= {table_id}
                found.append([r.round for r in page.rounds])
                if page.next_cursor is None:
                    return found
                cursor = page.next_cursor

        assert await pages("ha", 2) == [[3, 2], [1]]  # across hb's rounds, no short page
        assert await pages("hb", 2) == [[2, 1], []]  # full: the end is not yet known
        assert await pages("hb", 5) == [[2, 1]]
        everything = await player.ok(GetHistory, limit=5)
        assert isinstance(everything, HistoryPage)
        assert [(r.table_id, r.round) for r in everything.rounds] == [
            ("ha", 3),
            ("hb", 2),
            ("hb", 1),
            ("ha", 2),
            ("ha", 1),
        ]
    finally:
        await player.close()
