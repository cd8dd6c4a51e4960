"""Requests that wait for a busy table are applied as a group and stored in one
commit; a fault, a cancellation or a failed commit inside a group is answered
request by request."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio

from protocol.errors import ErrorCode
from protocol.messages import Bet, BetPlaced, ErrorReply, Join, OkReply
from server.app import App
from server.store.errors import StoreUnavailable
from server.table import events as ev
from server.table.machine import Transition, step
from server.table.state import Phase
from tests.helpers import until, url
from tests.server.helpers import (
    Client,
    GatedCommits,
    RecordedParts,
    assert_gapless,
    audit_report,
    close_all,
)


async def _audited(redis_client: redis.asyncio.Redis) -> None:
    """Every chip accounted for, in Redis."""
    report = await audit_report(redis_client)
    assert report.ok, report.explain()


@pytest.mark.asyncio
async def test_events_that_wait_for_a_busy_table_are_stored_in_one_commit(
    app: App, redis_client: redis.asyncio.Redis
) -> None:
    """Bets that come while the table is busy wait together and are stored in one
    commit, each stepped on the state the one before it left: a refused bet gets its
    own error and changes nothing, and each player's ``ok`` comes after the events of
    the bets applied before theirs and before the event of their own bet."""
    host = app.hosts["slow"]
    store = RecordedParts(host.store)
    clients = [await Client.hello(url(app), label=f"p{i}") for i in range(4)]
    try:
        for seat, client in enumerate(clients):
            await client.ok(Join, table_id="slow", buy_in=500, seat=seat)
        assert host.state is not None
        version, commits = host.state.version, len(store.written)
        amounts = [100, 200, 10_000, 300]  # the third is over the table's limit
        async with host.lock:  # the table is busy: the bets wait for their turn
            calls = []
            for client, amount in zip(clients, amounts, strict=True):
                calls.append(asyncio.create_task(client.call(Bet, table_id="slow", amount=amount)))
                await until(lambda: host.queued == len(calls), 5, "the bet waiting")
        replies = await asyncio.gather(*calls)
        assert len(store.written) == commits + 1
        assert isinstance(replies[2], ErrorReply)
        assert replies[2].code == ErrorCode.BET_LIMITS.value
        assert all(isinstance(r, OkReply) for i, r in enumerate(replies) if i != 2)
        assert host.state.version == version + 3
        for seat, amount in enumerate(amounts):
            bet = host.state.seats[seat]
            assert bet is not None
            assert bet.bet == (0 if seat == 2 else amount)
        placed: dict[int, int] = {}  # seat: the seq of its bet's event
        for client in clients:

            def three_bets(c: Client = client) -> list[BetPlaced] | None:
                bets = [m for m in c.table("slow") if isinstance(m, BetPlaced)]
                return bets if len(bets) == 3 else None

            bets = await client.wait(three_bets)
            placed.update({m.seat: m.seq for m in bets})
            assert_gapless(client.table("slow"), client.label)
        for seat, client in enumerate(clients):
            if seat == 2:
                continue
            ok = next(
                i
                for i, m in enumerate(client.messages)
                if isinstance(m, OkReply) and m.rid == replies[seat].rid
            )
            for i, m in enumerate(client.messages):
                if isinstance(m, BetPlaced) and m.table_id == "slow":
                    assert (i < ok) == (m.seq < placed[seat]), (client.label, m, ok, i)
        await _audited(redis_client)
    finally:
        await close_all(clients)


@pytest.mark.asyncio
async def test_a_fault_inside_a_group_stores_what_came_before_then_voids_the_round(
    app: App, redis_client: redis.asyncio.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in the state machine on one event of a group (injected: no real request
    can cause one) leaves the bets before it stored and answered; the round is then
    voided (docs/RULES.md, "Faults"), that request fails, and the events after it are
    stepped on the voided table."""
    host = app.hosts["slow"]
    clients = [await Client.hello(url(app), label=f"q{i}") for i in range(4)]
    try:
        for seat, client in enumerate(clients):
            await client.ok(Join, table_id="slow", buy_in=500, seat=seat)
        faulty = clients[1].player

        def step_with_a_bug(state: Any, event: ev.Event, now: int) -> Any:
            if isinstance(event, ev.PlaceBet) and event.player == faulty:
                raise RuntimeError("a bug")
            return step(state, event, now)

        monkeypatch.setattr("server.host.applying.step", step_with_a_bug)
        async with host.lock:  # the bets wait, in this order
            calls = []
            for client in clients[:3]:
                calls.append(asyncio.create_task(client.call(Bet, table_id="slow", amount=100)))
                await until(lambda: host.queued == len(calls), 5, "the bet waiting")
        first, second, third = await asyncio.gather(*calls)
        monkeypatch.undo()
        assert isinstance(first, OkReply)  # stored before the fault
        assert isinstance(second, ErrorReply)
        assert second.code == ErrorCode.INTERNAL.value
        assert isinstance(third, ErrorReply)  # the round is over: no more bets
        assert third.code == ErrorCode.WRONG_PHASE.value
        assert host.state is not None
        assert host.state.phase is Phase.SETTLING  # voided: the first bet was returned
        assert all(s is None or (s.bet == 0 and s.balance == 500) for s in host.state.seats)
        await clients[0].event("slow", BetPlaced, lambda m: m.amount == 100)
        await _audited(redis_client)
    finally:
        await close_all(clients)


async def _seated_players(app: App, count: int) -> list[Client]:
    clients = [await Client.hello(url(app), label=f"s{i}") for i in range(count)]
    for seat, client in enumerate(clients):
        await client.ok(Join, table_id="slow", buy_in=500, seat=seat)
    return clients


@pytest.mark.asyncio
async def test_a_cancelled_request_leading_a_group_leaves_the_others_answered(
    app: App, redis_client: redis.asyncio.Redis
) -> None:
    """The request whose task applies a group (the first to get the table) is
    cancelled while the group's commit is on its way: the commit carries on, every
    change in it is stored and answered in order, and the table stays held. A request
    cancelled while it still waits is not applied at all."""
    host = app.hosts["slow"]
    store = GatedCommits(host.store)
    clients = await _seated_players(app, 4)
    try:
        assert host.state is not None
        version = host.state.version
        answered: list[int] = []
        tasks: list[asyncio.Task[Any]] = []
        async with host.lock:
            for seat, client in enumerate(clients):

                def answer(t: Transition, seat: int = seat) -> None:
                    answered.append(seat)

                bet = ev.PlaceBet(client.player, 100, 0)
                tasks.append(asyncio.create_task(host.submit(bet, answer)))
                await until(lambda: host.queued == len(tasks), 5, "the bet waiting")
            tasks[3].cancel()  # still waiting: taken off the queue
            await until(lambda: host.queued == 3, 5, "the cancelled bet gone")
            store.gate.clear()
        await until(lambda: store.waiting == 1, 5, "the group's commit on its way")
        tasks[0].cancel()
        await asyncio.sleep(0.05)  # the cancellation is in; the commit still waits
        assert not tasks[1].done()
        store.gate.set()
        await asyncio.gather(tasks[1], tasks[2])
        for cancelled in (tasks[0], tasks[3]):
            with pytest.raises(asyncio.CancelledError):
                await cancelled
        assert answered == [0, 1, 2]
        assert host.ready
        assert host.state.version == version + 3
        assert [s.bet if s else None for s in host.state.seats[:4]] == [100, 100, 100, 0]
        await clients[3].ok(Bet, table_id="slow", amount=100)  # the table carries on
        await _audited(redis_client)
    finally:
        await close_all(clients)


@pytest.mark.asyncio
async def test_a_commit_that_fails_fails_each_request_of_its_group_on_its_own(
    app: App,
) -> None:
    """A group's commit that fails before it is stored fails every request it held,
    each with an error of its own (the store's unavailability, each answered
    `unavailable`, not a server fault), nothing stored; the table carries on."""
    host = app.hosts["slow"]
    store = GatedCommits(host.store)
    clients = await _seated_players(app, 3)
    try:
        assert host.state is not None
        version = host.state.version
        tasks: list[asyncio.Task[Any]] = []
        async with host.lock:
            for client in clients:
                bet = ev.PlaceBet(client.player, 100, 0)
                tasks.append(asyncio.create_task(host.submit(bet, lambda t: None)))
                await until(lambda: host.queued == len(tasks), 5, "the bet waiting")
            store.fail_next = True
        failures = await asyncio.gather(*tasks, return_exceptions=True)
        for failure in failures:
            assert isinstance(failure, StoreUnavailable)
        assert len({id(f) for f in failures}) == 3
        assert host.state.version == version
        assert all(s is None or s.bet == 0 for s in host.state.seats)
        await clients[0].ok(Bet, table_id="slow", amount=100)
    finally:
        await close_all(clients)
