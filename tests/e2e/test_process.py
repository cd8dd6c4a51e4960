"""The server as a process: killed with SIGKILL mid-round, stopped with SIGTERM.

Each test runs ``python -m server`` against the session's Redis (flushed first), as
an operator would run ``paigow-server --redis-url ...``.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import redis.asyncio

from protocol.errors import CloseCode
from protocol.messages import (
    Bet,
    Cards,
    GetBalance,
    HandSet,
    HouseWay,
    Join,
    Results,
    Reveal,
    SeatChange,
    SetHand,
    Snapshot,
    Watch,
)
from protocol.structs import Balances, HandChoice
from server.store.tables.store import TableStore
from tests.e2e.process_helpers import audit_passes, start
from tests.server.helpers import Client, assert_gapless, close_all, now_ms, seat_status
from tests.server.processes import ServerProcess, free_port, http_get


@pytest.mark.asyncio
async def test_sigkill_while_setting_then_restart(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    processes: list[ServerProcess],
) -> None:
    # Time for a restart, three resumes and a hand set before the deadline, which a
    # loaded machine took more than 6 s to give (the round waits for the deadline anyway).
    setting_ms = 15_000
    lease_ms = 1000
    first = start(processes, redis_url, tmp_path, setting_ms=setting_ms, lease_ms=lease_ms)
    await first.started()
    players = [await Client.hello(first.url, label=f"p{i}") for i in range(3)]
    clients = list(players)
    try:
        for i, p in enumerate(players):
            await p.ok(Join, table_id="k", buy_in=1000, seat=i)
        await asyncio.gather(*(p.ok(Bet, table_id="k", amount=100) for p in players))
        setting = await players[0].phase("k", "setting")
        deadline = setting.deadline_ms
        assert deadline is not None
        cards = [await p.event("k", Cards) for p in players]
        # p0 sets its hand before the crash; p1 and p2 have not when the server dies.
        await players[0].ok(HouseWay, table_id="k", mode="set")
        await players[2].event("k", HandSet, lambda m: m.seat == 0)
        tokens = [p.welcome.resume_token for p in players if p.welcome is not None]
        seen = [p.last_seq("k") for p in players]
        before_cards = players[1].table("k").index(cards[1]) - 1  # p1 resumes from before

        first.kill()
        for p in players:
            closed = await p.wait_closed()
            assert closed.code is None  # no close frame: the process just vanished

        second = start(processes, redis_url, tmp_path, setting_ms=setting_ms, lease_ms=lease_ms)
        await second.started()  # after the dead owner's lease expired
        assert now_ms() < deadline - 1500, "too slow to test the resumed setting phase"

        # p0 resumes at its last seq: nothing missed. p1 resumes from before its cards:
        # it gets the missed events, its own cards among them. p2 gives no last seq: a
        # snapshot with its cards and the deadline.
        resumed = [
            await Client.hello(
                second.url, label="p0r", resume_token=tokens[0], last_seq=[("k", seen[0])]
            ),
            await Client.hello(
                second.url,
                label="p1r",
                resume_token=tokens[1],
                last_seq=[("k", players[1].table("k")[before_cards].seq)],
            ),
            await Client.hello(second.url, label="p2r", resume_token=tokens[2]),
        ]
        clients += resumed
        for old, new in zip(players, resumed, strict=True):
            assert new.welcome is not None
            assert new.welcome.resumed
            assert new.player == old.player

        p1_missed = await resumed[1].event("k", Cards)
        assert p1_missed.cards == cards[1].cards
        assert p1_missed.seq == cards[1].seq
        # Tables in last_seq get the missed events, or a snapshot: not both.
        assert resumed[1].table("k")[0].seq == players[1].table("k")[before_cards].seq + 1
        assert not any(isinstance(m, Snapshot) for m in resumed[1].table("k"))
        assert not any(isinstance(m, Snapshot) for m in resumed[0].table("k"))
        snap = await resumed[2].event("k", Snapshot)
        assert snap.phase == "setting"
        assert snap.deadline_ms == deadline
        assert snap.your_seat == 2
        assert snap.your_cards == cards[2].cards
        assert [s.hand_set for s in snap.seats[:3]] == [True, False, False]

        # p1 sets its hand on the new server before the deadline; p2 never does.
        suggestion = await resumed[1].ok(HouseWay, table_id="k", mode="suggest")
        assert isinstance(suggestion, HandChoice)
        await resumed[1].ok(SetHand, table_id="k", low=suggestion.low)
        # The round waits for the deadline, then the house way sets p2's hand.
        revealing = await resumed[0].phase("k", "revealing", within=setting_ms / 1000 + 5)
        revealed_at = now_ms()
        assert revealed_at >= deadline - 50, "the setting phase ended before its deadline"
        assert revealed_at <= deadline + 2000, "the deadline was not honoured in time"
        reveal = await resumed[0].event("k", Reveal)
        assert reveal.seq == revealing.seq + 1
        ways = {h.hand: h.house_way for h in reveal.hands}
        assert ways == {0: True, 1: False, 2: True, 6: True}
        for i in (1, 2):
            hand = next(h for h in reveal.hands if h.hand == i)
            assert sorted(hand.high + hand.low) == sorted(cards[i].cards)
        results = [await r.event("k", Results) for r in resumed]
        assert all(r == results[0] for r in results)
        assert sorted(r.seat for r in results[0].results) == [0, 1, 2]

        # Seq numbers carry on across the crash without a gap for every client.
        for old, new in zip(players, resumed, strict=True):
            kept = old.table("k")[: before_cards + 1] if new is resumed[1] else old.table("k")
            assert_gapless(kept + new.table("k"), new.label)

        # Balances follow the results; the audit passes.
        for i, r in enumerate(resumed):
            balance = await r.ok(GetBalance)
            assert isinstance(balance, Balances)
            result = next(x for x in results[0].results if x.seat == i)
            assert [(t.table_id, t.balance) for t in balance.tables] == [("k", result.balance)]
        await close_all(clients)
        stored = await TableStore(redis_client).load("k")
        assert stored is not None
        assert audit_passes(redis_url).strip().endswith("audit passed")
    finally:
        await close_all(clients)


@pytest.mark.asyncio
async def test_sigterm_closes_1001_and_hands_the_tables_over(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    processes: list[ServerProcess],
) -> None:
    # A takeover that waited for the lease would take this long; a minute, so that half
    # of it tells a wait from a slow start on a loaded machine.
    lease_ms = 60_000
    # The round must still be in play when she comes back through the new process (a
    # loaded machine took more than 3 s to get there); nothing waits for its end.
    setting_ms = 60_000
    first = start(processes, redis_url, tmp_path, setting_ms=setting_ms, lease_ms=lease_ms)
    await first.started()
    player = await Client.hello(first.url, label="p")
    watcher = await Client.hello(first.url, label="w")
    clients = [player, watcher]
    try:
        await player.ok(Join, table_id="k", buy_in=1000, seat=3)
        await player.ok(Bet, table_id="k", amount=100)
        await watcher.ok(Watch, table_id="other")
        token = player.welcome.resume_token if player.welcome else ""
        before = await redis_client.hgetall("pg:account:" + player.player)

        first.terminate()
        for c in clients:
            closed = await c.wait_closed()
            assert closed.code == CloseCode.GOING_AWAY, c.label
        assert await first.exited() == 0
        # The leases were given up: nobody holds the tables now.
        assert await redis_client.get("pg:table:k:lease") is None
        assert await redis_client.get("pg:table:other:lease") is None
        stored = await TableStore(redis_client).load("k")
        assert stored is not None

        began = time.monotonic()
        second = start(processes, redis_url, tmp_path, setting_ms=setting_ms, lease_ms=lease_ms)
        await second.started()
        assert time.monotonic() - began < lease_ms / 2000, "the new process waited for a lease"

        # Nothing lost: the account, the seat, the bet; the round carries on.
        assert await redis_client.hgetall("pg:account:" + player.player) == before
        back = await Client.hello(second.url, label="p2", resume_token=token)
        clients.append(back)
        snap = await back.event("k", Snapshot)
        assert snap.your_seat == 3
        assert snap.seats[3].bet == 100
        # Her bet closed the betting (she is alone): the round is being played.
        assert snap.seats[3].balance == 900
        assert snap.phase in ("dealing", "setting")
        # Marked away when its connection closed, back now.
        await back.event("k", SeatChange, lambda m: m.seat.seat == 3 and m.seat.status == "playing")
        assert audit_passes(redis_url).strip().endswith("audit passed")
    finally:
        await close_all(clients)


@pytest.mark.asyncio
async def test_hellos_before_the_restarted_server_hosts_the_table_are_attached_later(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    processes: list[ServerProcess],
) -> None:
    """After a SIGKILL the new process accepts connections while the dead owner's lease
    still holds the table. Hellos sent then are attached once the table is hosted, with
    nothing more sent: p0, resuming from before its cards, gets the events it missed;
    p1, away since its connection dropped before the crash, gets a snapshot with its
    cards and is marked back."""
    setting_ms = 60_000  # the round waits in its setting phase throughout
    first = start(processes, redis_url, tmp_path, setting_ms=setting_ms, lease_ms=1000)
    await first.started()
    players = [await Client.hello(first.url, label=f"p{i}") for i in range(2)]
    clients = list(players)
    try:
        for i, p in enumerate(players):
            await p.ok(Join, table_id="k", buy_in=1000, seat=i)
        await asyncio.gather(*(p.ok(Bet, table_id="k", amount=100) for p in players))
        cards = [await p.event("k", Cards) for p in players]
        tokens = [p.welcome.resume_token for p in players if p.welcome is not None]
        before_cards = players[0].table("k").index(cards[0]) - 1
        before_seq = players[0].table("k")[before_cards].seq
        await players[1].close()
        await players[0].wait(lambda: seat_status(players[0], "k", 1) == "away")

        first.kill()
        await players[0].wait_closed()
        # As if the dead owner's lease had not expired yet, for as long as the test needs.
        lease = TableStore(redis_client).keys.table_lease("k")
        await redis_client.set(lease, b"0:the-dead-process")
        port = free_port()
        second = start(
            processes, redis_url, tmp_path, setting_ms=setting_ms, lease_ms=1000, port=port
        )
        await second.serving(port)
        resumed = [
            await Client.hello(
                second.url, label="p0r", resume_token=tokens[0], last_seq=[("k", before_seq)]
            ),
            await Client.hello(second.url, label="p1r", resume_token=tokens[1]),
        ]
        clients += resumed
        for r in resumed:
            assert r.welcome is not None
            assert r.welcome.resumed
        # Both hellos were answered while the table was not hosted here.
        status, body = await asyncio.to_thread(http_get, port, "/readyz")
        assert status == 503
        assert "k" in body.removeprefix("not ready: ").strip().split(", "), body
        assert resumed[0].table("k") == []
        assert resumed[1].table("k") == []

        await redis_client.delete(lease)
        # p0: the events it missed, from the one after its last seq, its cards among them.
        missed = await resumed[0].event("k", Cards)
        assert missed == cards[0]
        assert resumed[0].table("k")[0].seq == before_seq + 1
        assert not any(isinstance(m, Snapshot) for m in resumed[0].table("k"))
        # p1: a snapshot with its cards, then the seat event saying it is back.
        snap = await resumed[1].event("k", Snapshot)
        assert snap.phase == "setting"
        assert snap.your_seat == 1
        assert snap.your_cards == cards[1].cards
        p0r, p1r = resumed
        await p0r.wait(lambda: seat_status(p0r, "k", 1) == "playing")
        await p1r.wait(lambda: seat_status(p1r, "k", 1) == "playing")
        # p0's connection was here when the table was taken: never marked away.
        assert seat_status(resumed[0], "k", 0) is None  # no seat event about it
        assert seat_status(resumed[1], "k", 0) == "playing"
        kept = players[0].table("k")[: before_cards + 1]
        assert_gapless(kept + resumed[0].table("k"), "p0")
        assert_gapless(resumed[1].table("k"), "p1")
        await close_all(clients)
        assert audit_passes(redis_url).strip().endswith("audit passed")
    finally:
        await close_all(clients)
