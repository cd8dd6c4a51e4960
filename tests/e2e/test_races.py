"""Two connections of one player racing for the same chips: exactly one wins.

The two requests are sent back to back on two sockets, then both replies are
awaited, so the server receives them together. Meanwhile a task samples every
balance in Redis: none may ever be negative; the audit passes at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator

import pytest
import redis.asyncio

from protocol.codec import encode
from protocol.messages import Bet, BetPlaced, CashOut, ErrorReply, Join, OkReply, Rebuy, SitOut
from server.app import App
from server.auth import tokens
from server.config import Settings
from server.store.players.accounts import AccountStore
from server.store.tables.parts import stored_state
from server.store.tables.store import TableStore
from tests.helpers import url
from tests.server.helpers import Client, Reply, audit_report, close_all

Request = Join | Rebuy | Bet | CashOut

ACCOUNT = 1000


@contextlib.asynccontextmanager
async def never_negative(client: redis.asyncio.Redis, player: str) -> AsyncIterator[list[int]]:
    """Sample the account and every table balance of ``player`` until the block ends."""
    accounts = AccountStore(client)
    tables = TableStore(client)
    samples: list[int] = []
    stop = asyncio.Event()

    async def sample() -> None:
        while not stop.is_set():
            balance = await accounts.balance(player)
            if balance is not None:
                samples.append(balance)
            for table_id in await tables.table_ids():
                stored = await tables.load(table_id)
                assert stored is not None
                state = stored_state(stored)
                index = state.seat_of(player)
                seat = state.seats[index] if index is not None else None
                if seat is not None:
                    samples.extend((seat.balance, seat.bet, seat.bonus))
            await asyncio.sleep(0)

    task = asyncio.create_task(sample())
    try:
        yield samples
    finally:
        stop.set()
        await task
    assert samples, "no sample taken"
    assert min(samples) >= 0, f"a balance went negative: {min(samples)}"


async def two_connections(app: App, settings: Settings, player: str) -> tuple[Client, Client]:
    """Two connections logged in as ``player`` (a signed token each)."""
    assert settings.token_secret is not None
    secret = settings.token_secret.encode()
    now = int(time.time())
    first = await Client.hello(url(app), label="A", token=tokens.issue(secret, player, 600, now))
    second = await Client.hello(url(app), label="B", token=tokens.issue(secret, player, 600, now))
    return first, second


async def race(first: Client, a: Request, second: Client, b: Request) -> tuple[Reply, Reply]:
    """Send ``a`` on ``first`` and ``b`` on ``second`` back to back; both replies."""
    rid_a, rid_b = first.next_rid(), second.next_rid()
    await asyncio.gather(
        first.send(encode(dataclasses.replace(a, rid=rid_a))),
        second.send(encode(dataclasses.replace(b, rid=rid_b))),
    )
    [ra] = await first.wait(lambda: first.replies.get(rid_a))
    [rb] = await second.wait(lambda: second.replies.get(rid_b))
    assert isinstance(ra, OkReply | ErrorReply)
    assert isinstance(rb, OkReply | ErrorReply)
    return ra, rb


def one_wins(replies: tuple[Reply, Reply], loser_codes: set[str]) -> int:
    """Index of the one ``ok``; the other must be an error with one of ``loser_codes``."""
    oks = [i for i, r in enumerate(replies) if isinstance(r, OkReply)]
    assert len(oks) == 1, f"expected exactly one winner: {replies}"
    loser = replies[1 - oks[0]]
    assert isinstance(loser, ErrorReply), loser
    assert loser.code in loser_codes, loser
    return oks[0]


@pytest.mark.asyncio
@pytest.mark.parametrize("order", ["fast-first", "slow-first"])
async def test_two_joins_beyond_the_account(
    app: App, server_settings: Settings, redis_client: redis.asyncio.Redis, order: str
) -> None:
    await AccountStore(redis_client).credit("alice", ACCOUNT, "test:credit")
    a, b = await two_connections(app, server_settings, "alice")
    tables = ["fast", "slow"] if order == "fast-first" else ["slow", "fast"]
    try:
        async with never_negative(redis_client, "alice"):
            replies = await race(
                a,
                Join(rid="x", table_id=tables[0], buy_in=800),
                b,
                Join(rid="x", table_id=tables[1], buy_in=800),
            )
        winner = one_wins(replies, {"insufficient_balance"})
        assert await AccountStore(redis_client).balance("alice") == ACCOUNT - 800
        seated = [
            t for t, h in app.hosts.items() if h.state and h.state.seat_of("alice") is not None
        ]
        assert seated == [tables[winner]]
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await close_all([a, b])


@pytest.mark.asyncio
async def test_two_rebuys_beyond_the_account(
    app: App, server_settings: Settings, redis_client: redis.asyncio.Redis
) -> None:
    await AccountStore(redis_client).credit("alice", ACCOUNT, "test:credit")
    a, b = await two_connections(app, server_settings, "alice")
    try:
        await a.ok(Join, table_id="slow", buy_in=200)
        async with never_negative(redis_client, "alice"):
            replies = await race(
                a,
                Rebuy(rid="x", table_id="slow", amount=600),
                b,
                Rebuy(rid="x", table_id="slow", amount=600),
            )
        one_wins(replies, {"insufficient_balance"})
        assert await AccountStore(redis_client).balance("alice") == 200
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await close_all([a, b])


async def _seated_with_company(
    app: App, settings: Settings, redis_client: redis.asyncio.Redis
) -> tuple[Client, Client, Client]:
    """Alice at ``slow`` with 300 chips on two connections; Bob seated too, so that
    betting stays open after Alice's bet."""
    await AccountStore(redis_client).credit("alice", ACCOUNT, "test:credit")
    a, b = await two_connections(app, settings, "alice")
    bob = await Client.hello(url(app), label="bob")
    await a.ok(Join, table_id="slow", buy_in=300, seat=0)
    await bob.ok(Join, table_id="slow", buy_in=300, seat=1)
    return a, b, bob


@pytest.mark.asyncio
@pytest.mark.parametrize("bet_first", [True, False])
async def test_a_bet_and_a_cash_out(
    app: App, server_settings: Settings, redis_client: redis.asyncio.Redis, bet_first: bool
) -> None:
    a, b, bob = await _seated_with_company(app, server_settings, redis_client)
    try:
        bet = Bet(rid="x", table_id="slow", amount=200)
        cash = CashOut(rid="x", table_id="slow", amount=300)
        async with never_negative(redis_client, "alice"):
            if bet_first:
                replies = await race(a, bet, b, cash)
            else:
                cash_reply, bet_reply = await race(a, cash, b, bet)
                replies = (bet_reply, cash_reply)
        winner = one_wins(replies, {"insufficient_balance"})
        state = app.hosts["slow"].state
        assert state is not None
        seat = state.seats[0]
        account = await AccountStore(redis_client).balance("alice")
        if winner == 0:  # the bet won: 200 held, 100 on the table, 700 in the account
            assert seat is not None
            assert (seat.bet, seat.balance, account) == (200, 100, 700)
        else:  # the cash-out won: nothing left to bet with
            assert seat is not None
            assert (seat.bet, seat.balance, account) == (0, 0, 1000)
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await close_all([a, b, bob])


@pytest.mark.asyncio
async def test_two_bets_for_the_same_chips(
    app: App, server_settings: Settings, redis_client: redis.asyncio.Redis
) -> None:
    """A bet replaces the round's bet (protocol/PROTOCOL.md, section 6): of two racing
    bets exactly one stands, the other's chips are never taken on top of it."""
    a, b, bob = await _seated_with_company(app, server_settings, redis_client)
    try:
        async with never_negative(redis_client, "alice"):
            replies = await race(
                a,
                Bet(rid="x", table_id="slow", amount=200, bonus=100),
                b,
                Bet(rid="x", table_id="slow", amount=250),
            )
        assert all(isinstance(r, OkReply) for r in replies), replies
        placed = [m for m in a.table("slow") if isinstance(m, BetPlaced) and m.seat == 0]
        assert len(placed) == 2
        last = placed[-1]
        state = app.hosts["slow"].state
        assert state is not None
        seat = state.seats[0]
        assert seat is not None
        assert (seat.bet, seat.bonus) == (last.amount, last.bonus)
        assert seat.balance == 300 - last.amount - last.bonus == last.balance
        # Then a bet beyond the table balance while one is held: refused, nothing moves.
        await a.error(Bet, "insufficient_balance", table_id="slow", amount=305)
        await b.ok(SitOut, table_id="slow")  # removes the bet
        state = app.hosts["slow"].state
        assert state is not None
        assert state.seats[0] is not None
        assert (state.seats[0].bet, state.seats[0].balance) == (0, 300)
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await close_all([a, b, bob])
