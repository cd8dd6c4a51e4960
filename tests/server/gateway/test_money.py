"""Money requests over real sockets: each applies once per (session, rid), and its
reply states the account balance the commit left, not one read before it.

A client that lost a reply resumes its session and sends the same request again with
the same rid (or sends it twice at once): the chips move once, and both replies are
the same ``ok``. In a new session, the same rid is a new request. The balance tests
hold a table's lock (the host's own, in-process) while a request waits for it, so that
another move of the same account lands between the moment the request arrives and its
commit, every time.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
import redis.asyncio

from protocol.codec import encode
from protocol.messages import CashOut, ErrorReply, Join, Leave, OkReply, Rebuy, Watch
from protocol.structs import Balances, Joined
from server.app import App
from server.auth import tokens
from server.config import Settings
from server.host import TableHost
from server.store.players.accounts import AccountStore
from tests.helpers import until, url
from tests.server.helpers import Client, LostReplies, Reply, audit_report, close_all
from tests.server.store.helpers import ledger_len

ACCOUNT = 1000
BUY_IN = 300

MoneyMessage = Join | Rebuy | CashOut | Leave

REQUESTS: dict[str, tuple[MoneyMessage, int, int | None]] = {
    # kind: (the request, the account and the table balance after it once, from an
    # account of ACCOUNT and, but for the join, a seat bought in with BUY_IN)
    "join": (Join(rid="money-1", table_id="slow", buy_in=BUY_IN), ACCOUNT - BUY_IN, BUY_IN),
    "rebuy": (Rebuy(rid="money-1", table_id="slow", amount=200), ACCOUNT - 500, 500),
    "cash_out": (CashOut(rid="money-1", table_id="slow", amount=120), ACCOUNT - 180, 180),
    "leave": (Leave(rid="money-1", table_id="slow"), ACCOUNT, None),
}


async def connect(
    app: App, settings: Settings, player: str, label: str, resume: Client | None = None
) -> Client:
    """A connection logged in as ``player`` (a signed token); with ``resume``, in the
    session of that earlier connection (which the server then closes, if still open)."""
    assert settings.token_secret is not None
    token = tokens.issue(settings.token_secret.encode(), player, 600, int(time.time()))
    resume_token = None
    if resume is not None:
        assert resume.welcome is not None
        resume_token = resume.welcome.resume_token
    return await Client.hello(url(app), label=label, token=token, resume_token=resume_token)


async def send(client: Client, message: MoneyMessage) -> Reply:
    """Send ``message`` with its own rid (maybe not new on this connection); its reply."""
    seen = len(client.replies.get(message.rid, []))
    await client.send(encode(message))
    return await reply_to(client, message.rid, seen)


async def reply_to(client: Client, rid: str, seen: int = 0) -> Reply:
    """The one reply with ``rid`` after the ``seen`` earlier ones."""
    replies = await client.wait(lambda: client.replies.get(rid, [])[seen:])
    assert len(replies) == 1, replies
    return replies[0]


def ok_result(reply: Reply) -> Any:
    assert isinstance(reply, OkReply), reply
    return reply.result


async def holdings(app: App, client: redis.asyncio.Redis, player: str) -> tuple[Any, ...]:
    """What a money request changes: the account, the seat and the ledger. (Not the
    table's version: a connection that drops or comes back changes it.)"""
    state = app.hosts["slow"].state
    assert state is not None
    index = state.seat_of(player)
    seat = state.seats[index] if index is not None else None
    return (
        await AccountStore(client).balance(player),
        None if seat is None else (index, seat.balance),
        await ledger_len(client),
    )


def waiting(host: TableHost) -> int:
    """How many tasks wait for the table's lock."""
    return len(host.lock._waiters or ())


# --- the same request twice -------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("together", [False, True], ids=["again-later", "together"])
@pytest.mark.parametrize("kind", list(REQUESTS))
async def test_a_money_request_sent_twice_moves_chips_once(
    app: App,
    server_settings: Settings,
    redis_client: redis.asyncio.Redis,
    kind: str,
    together: bool,
) -> None:
    """Again later: the first reply was received, the connection dropped, and the
    client resumes its session on a new one and sends the request again. Together: the
    client sends it twice at once. Either way both replies are the same ``ok``."""
    await AccountStore(redis_client).credit("alice", ACCOUNT, "test:credit")
    message, account, table_balance = REQUESTS[kind]
    a = await connect(app, server_settings, "alice", "A")
    clients = [a]
    try:
        if kind != "join":
            await a.ok(Join, table_id="slow", buy_in=BUY_IN)
        if together:
            await asyncio.gather(a.send(encode(message)), a.send(encode(message)))
            replies = await a.wait(lambda: len(a.replies.get(message.rid, [])) >= 2)
            assert replies
            first, second = a.replies[message.rid]
            after = await holdings(app, redis_client, "alice")
        else:
            first = await send(a, message)
            after = await holdings(app, redis_client, "alice")
            await a.close()
            b = await connect(app, server_settings, "alice", "B", resume=a)
            clients.append(b)
            second = await send(b, message)
        assert ok_result(first) == ok_result(second)
        assert ok_result(first).account == account
        assert await holdings(app, redis_client, "alice") == after
        assert after[0] == account
        assert (after[1] and after[1][1]) == table_balance
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await close_all(clients)


@pytest.mark.asyncio
async def test_a_rid_is_the_players_own_and_a_new_rid_is_a_new_request(
    app: App, server_settings: Settings, redis_client: redis.asyncio.Redis
) -> None:
    accounts = AccountStore(redis_client)
    await accounts.credit("alice", ACCOUNT, "test:credit-alice")
    await accounts.credit("bob", ACCOUNT, "test:credit-bob")
    alice = await connect(app, server_settings, "alice", "A")
    bob = await connect(app, server_settings, "bob", "B")
    try:
        await alice.ok(Join, table_id="slow", buy_in=BUY_IN)
        await bob.ok(Join, table_id="slow", buy_in=BUY_IN)
        rebuy = Rebuy(rid="same", table_id="slow", amount=100)
        ok_result(await send(alice, rebuy))
        ok_result(await send(bob, rebuy))  # bob's "same" is not alice's
        assert await accounts.balance("alice") == ACCOUNT - BUY_IN - 100
        assert await accounts.balance("bob") == ACCOUNT - BUY_IN - 100
        again = ok_result(await send(alice, Rebuy(rid="fresh", table_id="slow", amount=100)))
        assert again.account == await accounts.balance("alice") == ACCOUNT - BUY_IN - 200
        # An old rid on another request is a client's mistake: refused, nothing moves.
        before = await holdings(app, redis_client, "alice")
        reused = await send(alice, CashOut(rid="same", table_id="slow", amount=50))
        assert isinstance(reused, ErrorReply)
        assert reused.code == "rid_reused"
        assert not reused.retryable
        assert await holdings(app, redis_client, "alice") == before
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await close_all([alice, bob])


@pytest.mark.asyncio
async def test_one_rid_at_two_tables_at_once_applies_once(
    app: App, server_settings: Settings, redis_client: redis.asyncio.Redis
) -> None:
    """A request still in flight when its session is resumed elsewhere, and the retry
    sent to another table: the two tables' hosts do not share a lock, both requests
    pass the check made before the change, and the commit itself refuses the second."""
    accounts = AccountStore(redis_client)
    await accounts.credit("alice", ACCOUNT, "test:credit")
    fast, slow = app.hosts["fast"], app.hosts["slow"]
    a = await connect(app, server_settings, "alice", "A")
    clients = [a]
    try:
        await a.ok(Join, table_id="slow", buy_in=BUY_IN)
        await a.ok(Join, table_id="fast", buy_in=BUY_IN)
        async with fast.lock, slow.lock:
            await a.send(encode(Rebuy(rid="both", table_id="slow", amount=100)))
            await until(lambda: waiting(slow), what="the first rebuy to wait")
            b = await connect(app, server_settings, "alice", "B", resume=a)  # a is closed
            clients.append(b)
            await b.send(encode(Rebuy(rid="both", table_id="fast", amount=100)))
            await until(lambda: waiting(fast), what="the second rebuy to wait")
        reply = await reply_to(b, "both")  # a's reply, if any, went to a closed socket
        await until(lambda: not waiting(fast) and not waiting(slow), what="both to finish")
        assert isinstance(reply, OkReply | ErrorReply), reply
        assert isinstance(reply, OkReply) or reply.code == "rid_reused", reply
        assert await accounts.balance("alice") == ACCOUNT - 2 * BUY_IN - 100
        if isinstance(reply, OkReply):
            assert ok_result(reply).account == ACCOUNT - 2 * BUY_IN - 100
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await close_all(clients)


@pytest.mark.asyncio
async def test_a_commit_whose_reply_is_lost_still_answers_with_the_recorded_balance(
    app: App, server_settings: Settings, redis_client: redis.asyncio.Redis
) -> None:
    """The host finds its change stored and answers from the request's record; the
    client, unsure, sends it again: the same reply, nothing moves twice."""
    host = app.hosts["slow"]
    store = LostReplies(host.store)
    accounts = AccountStore(redis_client)
    await accounts.credit("alice", ACCOUNT, "test:credit")
    a = await connect(app, server_settings, "alice", "A")
    clients = [a]
    try:
        await a.ok(Join, table_id="slow", buy_in=BUY_IN)
        store.lose_next = True
        rebuy = Rebuy(rid="lost", table_id="slow", amount=250)
        first = ok_result(await send(a, rebuy))
        assert not store.lose_next
        assert first.account == await accounts.balance("alice") == ACCOUNT - BUY_IN - 250
        b = await connect(app, server_settings, "alice", "B", resume=a)
        clients.append(b)
        assert ok_result(await send(b, rebuy)) == first
        assert await accounts.balance("alice") == ACCOUNT - BUY_IN - 250
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await close_all(clients)


@pytest.mark.asyncio
async def test_a_new_session_starts_its_rids_afresh(
    app: App, server_settings: Settings, redis_client: redis.asyncio.Redis
) -> None:
    """A client whose request counter starts again in a new session (no resume) is
    not answered with an old reply: its request is applied."""
    accounts = AccountStore(redis_client)
    await accounts.credit("alice", ACCOUNT, "test:credit")
    a = await connect(app, server_settings, "alice", "A")
    clients = [a]
    try:
        join = Join(rid="1", table_id="slow", buy_in=BUY_IN)
        ok_result(await send(a, join))
        ok_result(await send(a, Leave(rid="2", table_id="slow")))
        await a.close()
        b = await connect(app, server_settings, "alice", "B")  # a new session
        clients.append(b)
        joined = ok_result(await send(b, join))
        assert isinstance(joined, Joined)
        state = app.hosts["slow"].state
        assert state is not None
        assert state.seat_of("alice") == joined.seat
        assert joined.account == await accounts.balance("alice") == ACCOUNT - BUY_IN
    finally:
        await close_all(clients)


# --- balances in replies ------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("kind", ["join", "rebuy"])
async def test_the_reply_states_the_account_after_a_credit_that_came_meanwhile(
    app: App, server_settings: Settings, redis_client: redis.asyncio.Redis, kind: str
) -> None:
    """An operator's credit lands after the request arrived, before its commit."""
    accounts = AccountStore(redis_client)
    await accounts.credit("alice", ACCOUNT, "test:credit")
    host = app.hosts["slow"]
    a = await connect(app, server_settings, "alice", "A")
    try:
        if kind == "join":
            await a.ok(Watch, table_id="slow")  # so that the join waits only to commit
            message: MoneyMessage = Join(rid="j", table_id="slow", buy_in=BUY_IN)
            moved = BUY_IN
        else:
            await a.ok(Join, table_id="slow", buy_in=BUY_IN)
            message = Rebuy(rid="r", table_id="slow", amount=200)
            moved = BUY_IN + 200
        async with host.lock:
            await a.send(encode(message))
            await until(lambda: waiting(host), what="the request to wait for the table")
            await accounts.credit("alice", 55, "test:operator")
        result = ok_result(await reply_to(a, message.rid))
        assert isinstance(result, Joined if kind == "join" else Balances)
        assert result.account == await accounts.balance("alice") == ACCOUNT + 55 - moved
    finally:
        await a.close()


@pytest.mark.asyncio
async def test_two_joins_at_two_tables_each_state_the_account_their_commit_left(
    app: App, server_settings: Settings, redis_client: redis.asyncio.Redis
) -> None:
    """Both joins arrive before either commits; whichever commits second must count
    the first one's buy-in, and the last reply is the account as it stays."""
    accounts = AccountStore(redis_client)
    await accounts.credit("alice", ACCOUNT, "test:credit")
    fast, slow = app.hosts["fast"], app.hosts["slow"]
    a = await connect(app, server_settings, "alice", "A")
    b = await connect(app, server_settings, "alice", "B")
    try:
        await a.ok(Watch, table_id="fast")
        await b.ok(Watch, table_id="slow")
        join_fast = Join(rid="jf", table_id="fast", buy_in=300)
        join_slow = Join(rid="js", table_id="slow", buy_in=200)
        async with fast.lock, slow.lock:
            await asyncio.gather(a.send(encode(join_fast)), b.send(encode(join_slow)))
            await until(lambda: waiting(fast) and waiting(slow), what="both joins to wait")
        replies = await asyncio.gather(reply_to(a, "jf"), reply_to(b, "js"))
        accounts_told = tuple(ok_result(r).account for r in replies)
        fast_first, slow_first = (700, 500), (500, 800)
        assert accounts_told in (fast_first, slow_first)
        assert min(accounts_told) == await accounts.balance("alice") == 500
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await close_all([a, b])


@pytest.mark.asyncio
async def test_a_money_request_that_moves_nothing_states_the_account(
    app: App, server_settings: Settings, redis_client: redis.asyncio.Redis
) -> None:
    """Cashing out an empty table balance stores nothing; its reply still says what
    the account holds."""
    accounts = AccountStore(redis_client)
    await accounts.credit("alice", ACCOUNT, "test:credit")
    host = app.hosts["slow"]
    a = await connect(app, server_settings, "alice", "A")
    try:
        await a.ok(Join, table_id="slow", buy_in=BUY_IN)
        emptied = await a.ok(CashOut, table_id="slow", amount=0)  # 0: all of it
        assert emptied.account == ACCOUNT
        assert host.state is not None
        version = host.state.version
        nothing = await a.ok(CashOut, table_id="slow", amount=0)
        assert host.state.version == version  # nothing stored
        assert isinstance(nothing, Balances)
        assert nothing.account == await accounts.balance("alice") == ACCOUNT
        assert [(t.table_id, t.balance) for t in nothing.tables] == [("slow", 0)]
    finally:
        await a.close()
