"""A table host that finds its table changed under it reloads it instead of stalling;
it stores only the parts of its state a change touched, upgrading a table stored whole
or in the parts of an older format."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
import pytest
import redis.asyncio

from protocol.errors import ErrorCode
from protocol.messages import Bet, BetPlaced, ErrorReply, Join, OkReply, Rebuy, SeatChange
from server.app import App
from server.host import encode_outbound, now_ms, pack_outbound
from server.store.errors import StoreUnavailable
from server.store.players.accounts import AccountStore
from server.store.tables.commit_args import CommitStatus, Write
from server.store.tables.parts import (
    CONFIG_PART,
    DEAL_PART,
    HEADER_PART,
    seat_part,
    stored_state,
    to_parts,
)
from server.store.tables.store import TableStore
from server.table import events as ev
from server.table.errors import TableError
from server.table.machine import Transition, step
from server.table.state import Phase
from tests.conftest import FAST_TABLES
from tests.helpers import until, url
from tests.server.conftest import StartApp
from tests.server.helpers import (
    Client,
    GatedCommits,
    LostReplies,
    RecordedParts,
    assert_gapless,
    audit_report,
    close_all,
)
from tests.server.table.helpers import legacy_blob, legacy_parts

EVERY_PART = {HEADER_PART, DEAL_PART, CONFIG_PART, *(seat_part(i) for i in range(6))}


@pytest.mark.asyncio
async def test_a_commit_the_host_did_not_see_reloads_the_table(
    app: App, redis_client: redis.asyncio.Redis
) -> None:
    """A commit stored but never answered (a lost reply) looks like this to the host:
    the stored version is ahead of its own. Its next commit is refused (stale version),
    the request gets ``unavailable``, and the host reloads the table and carries on."""
    host = app.hosts["slow"]
    client = await Client.hello(url(app))
    try:
        await client.ok(Join, table_id="slow", buy_in=500)
        assert host.state is not None
        assert host.token is not None
        old_token = host.token
        # Store the next state of the table behind the host's back, with its token.
        t = step(host.state, ev.Disconnect(client.player), now_ms())
        result = await TableStore(redis_client).commits.write(
            Write(
                "slow",
                token=host.token,
                expected_version=host.state.version,
                new_version=t.state.version,
                parts=to_parts(t.state, host.state),
                events=[(o.seq, pack_outbound(encode_outbound(o))) for o in t.events],
            )
        )
        assert result.status is CommitStatus.OK
        error = await client.error(Bet, "unavailable", table_id="slow", amount=100)
        assert error.retryable
        # The host reloads the stored table (quickly: it gives its own lease up).
        await until(lambda: host.ready and host.token != old_token, 5, "the reload")
        # The stored change is not lost: the reloaded seat is away. The client is
        # connected here, so the host's on-ready hook says the player is back.
        back = await client.event(
            "slow", SeatChange, lambda m: m.seq > t.state.seq and m.seat.status == "playing"
        )
        assert back.seq == t.state.seq + 1
        # Subscribed all along, the client also got the event stored behind the host's
        # back (the seat away), before the one saying it is back: no gap.
        assert_gapless(client.table("slow"), client.label)
        away = [m for m in client.table("slow") if m.seq == t.state.seq]
        assert len(away) == 1
        assert isinstance(away[0], SeatChange)
        assert away[0].seat.status == "away"
        assert host.state is not None
        assert host.state.version == t.state.version + 1
        await client.ok(Bet, table_id="slow", amount=100)
        seat = host.state.seats[host.state.seat_of(client.player) or 0]
        assert seat is not None
        assert seat.bet == 100
        assert any(isinstance(m, SeatChange) for m in client.table("slow"))
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_a_stored_commit_whose_reply_is_lost_counts_once(
    app: App, redis_client: redis.asyncio.Redis
) -> None:
    """The host asks Redis whether the change was stored: it was, so the request
    succeeds, its events go out, and nothing is applied twice."""
    host = app.hosts["slow"]
    store = LostReplies(host.store)
    client = await Client.hello(url(app))
    try:
        await client.ok(Join, table_id="slow", buy_in=500)
        store.lose_next = True
        await client.ok(Rebuy, table_id="slow", amount=100)
        assert not store.lose_next
        assert host.state is not None
        seat = host.state.seats[host.state.seat_of(client.player) or 0]
        assert seat is not None
        assert seat.balance == 600
        accounts = AccountStore(redis_client)
        assert await accounts.balance(client.player) == 10_000 - 600
        await client.ok(Bet, table_id="slow", amount=100)  # the table carries on
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_a_join_stored_but_not_answered_keeps_the_table_s_events(app: App) -> None:
    """The join was stored, but its reply was lost and so was the read of its record:
    the player gets an error, yet is seated, and must keep receiving the table."""
    host = app.hosts["slow"]
    store = LostReplies(host.store)
    client = await Client.hello(url(app))
    try:
        store.lose_next = store.also_the_record = True
        await client.error(Join, "internal", table_id="slow", buy_in=500)
        assert host.state is not None
        assert host.state.seat_of(client.player) is not None
        await client.ok(Bet, table_id="slow", amount=100)
        await client.event("slow", BetPlaced, lambda m: m.amount == 100)
    finally:
        await client.close()


async def seated_away(app: App, seat: int) -> str:
    """A player sits at ``slow`` in ``seat`` (opening its betting) and goes away."""
    client = await Client.hello(url(app))
    try:
        await client.ok(Join, table_id="slow", buy_in=500, seat=seat)
    finally:
        await client.close()
    host = app.hosts["slow"]

    def away() -> bool:
        state = host.state
        seated = state.seats[seat] if state is not None else None
        return seated is not None and not seated.connected

    # Stored before the server stops: the next owner has nothing to tell the table.
    await until(away, what="the seat away")
    return client.player


async def table_fields(redis_client: redis.asyncio.Redis) -> set[bytes | str]:
    return set(await redis_client.hkeys(TableStore(redis_client).keys.table_state("slow")))


@pytest.mark.asyncio
async def test_a_table_stored_whole_is_taken_over_and_stored_in_parts(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    """Servers before parts stored a table's state whole, in field ``s``: such a table
    is read, its first commit writes every part and deletes ``s``, and the commits after
    it write only what changed."""
    first = await start_app()
    ann = await seated_away(first, 2)
    await first.stop()
    # Rewrite the table as those servers left it (v, seq and tok are as they were).
    tables = TableStore(redis_client)
    stored = await tables.load("slow")
    assert stored is not None
    state = stored_state(stored)
    key = tables.keys.table_state("slow")
    newer = [
        f
        for f in await table_fields(redis_client)
        if b"." in f or f in (b"cid", b"n", b"xn", b"f", b"ab")
    ]
    await redis_client.hdel(key, *newer)
    await redis_client.hset(key, "s", legacy_blob(state))
    assert await table_fields(redis_client) == {b"v", b"seq", b"tok", b"s"}
    report = await audit_report(redis_client)  # reads a table stored whole too
    assert report.ok, report.explain()
    assert report.tables_total == 500

    second = await start_app()
    host = second.hosts["slow"]
    # Read as it was stored. Taken over from another process in its betting phase, the
    # table started that phase again (TakeOver): that first change wrote every part and
    # deleted the whole value.
    taken = host.state
    assert taken is not None
    assert (taken.seats, taken.round_no, taken.commitment) == (
        state.seats,
        state.round_no,
        state.commitment,
    )
    assert taken.version == state.version + 1
    fields = await table_fields(redis_client)
    assert b"s" not in fields
    assert {f"s.{name}".encode() for name in EVERY_PART} <= fields
    recorded = RecordedParts(host.store)
    bob = await Client.hello(url(second))
    try:
        await bob.ok(Join, table_id="slow", buy_in=300, seat=4)
        assert recorded.written == [{HEADER_PART, seat_part(4)}]
        assert await table_fields(redis_client) == {
            b"v",
            b"seq",
            b"tok",
            b"cid",
            b"n",  # ledger entries since (the buy-in)
            b"xn",  # transfers since (the buy-in's)
            b"f",  # the fence: the second server's token
            b"ab",  # the applied bucket whose time to live is set (the buy-in's)
            *(f"s.{name}".encode() for name in EVERY_PART),
        }
        await bob.ok(Bet, table_id="slow", amount=100)
        assert recorded.written[1:] == [{HEADER_PART, seat_part(4)}]
        stored = await tables.load("slow")
        assert stored is not None
        assert stored.whole is None
        assert stored_state(stored) == host.state
        assert host.state is not None
        seat = host.state.seats[2]
        assert seat is not None
        assert (seat.player, seat.balance) == (ann, 500)
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await bob.close()


@pytest.mark.asyncio
async def test_a_table_stored_in_format_2_parts_is_taken_over_and_stored_anew(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    """The servers before format 3 stored each record of the parts as a map keyed by
    field name: such a table is read after an upgrade, its first commit writes every
    part in format 3, and the commits after it write only what changed."""
    first = await start_app()
    ann = await seated_away(first, 2)
    await first.stop()
    # Rewrite the parts as those servers wrote them (the other fields are as they were).
    tables = TableStore(redis_client)
    stored = await tables.load("slow")
    assert stored is not None
    state = stored_state(stored)
    key = tables.keys.table_state("slow")
    old = legacy_parts(state)
    await redis_client.hdel(key, *[f for f in await table_fields(redis_client) if b"." in f])
    await redis_client.hset(key, mapping={f"s.{name}": part for name, part in old.items()})
    stored = await tables.load("slow")
    assert stored is not None
    assert stored.parts == old
    assert stored_state(stored) == state
    report = await audit_report(redis_client)  # reads format 2 too
    assert report.ok, report.explain()

    second = await start_app()
    host = second.hosts["slow"]
    # Taken over in its betting phase, the table started that phase again (TakeOver):
    # that first change wrote every part, in format 3.
    taken = host.state
    assert taken is not None
    assert (taken.seats, taken.round_no) == (state.seats, state.round_no)
    assert taken.version == state.version + 1
    stored = await tables.load("slow")
    assert stored is not None
    assert set(stored.parts) == EVERY_PART
    assert msgpack.unpackb(stored.parts[HEADER_PART])[0] == 3
    assert all(msgpack.unpackb(stored.parts[seat_part(i)]) is None for i in (0, 1, 3, 4, 5))
    assert msgpack.unpackb(stored.parts[seat_part(2)])[0] == ann  # an array, not a map
    assert stored_state(stored) == host.state
    recorded = RecordedParts(host.store)
    bob = await Client.hello(url(second))
    try:
        await bob.ok(Join, table_id="slow", buy_in=300, seat=4)
        await bob.ok(Bet, table_id="slow", amount=100)
        assert recorded.written == [{HEADER_PART, seat_part(4)}] * 2
        stored = await tables.load("slow")
        assert stored is not None
        assert stored_state(stored) == host.state
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await bob.close()


@pytest.mark.asyncio
async def test_settings_applied_on_taking_a_table_over_are_stored_with_its_next_change(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    """The host applies a changed tables file to the state it loaded, between rounds,
    before storing anything: the parts of its next change are counted from the state
    stored, so the new settings are among them. Here that change is the takeover's own
    (the table was in its betting phase, which starts again), before any request."""
    first = await start_app()
    await seated_away(first, 0)
    await first.stop()
    before = await TableStore(redis_client).load("slow")
    assert before is not None
    assert stored_state(before).config.max_bet == 1000
    raised = FAST_TABLES.replace('name = "Slow"\n', 'name = "Slow"\nmax_bet = 2000\n')
    assert raised != FAST_TABLES
    second = await start_app(tables=raised)
    host = second.hosts["slow"]
    assert host.state is not None
    assert host.state.config.max_bet == 2000
    taken = await TableStore(redis_client).load("slow")
    assert taken is not None
    assert taken.version == before.version + 1
    assert stored_state(taken) == host.state  # the settings stored with that change
    recorded = RecordedParts(host.store)
    bob = await Client.hello(url(second))
    try:
        await bob.ok(Join, table_id="slow", buy_in=300, seat=1)
        assert recorded.written == [{HEADER_PART, seat_part(1)}]
        stored = await TableStore(redis_client).load("slow")
        assert stored is not None
        assert stored_state(stored) == host.state
        assert stored_state(stored).config.max_bet == 2000
    finally:
        await bob.close()


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
    each with an error of its own (the first the store's, the others a server fault),
    nothing stored; the table carries on."""
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
        assert isinstance(failures[0], StoreUnavailable)
        for failure in failures[1:]:
            assert isinstance(failure, TableError)
            assert failure.code is ErrorCode.INTERNAL
        assert len({id(f) for f in failures}) == 3
        assert host.state.version == version
        assert all(s is None or s.bet == 0 for s in host.state.seats)
        await clients[0].ok(Bet, table_id="slow", amount=100)
    finally:
        await close_all(clients)
