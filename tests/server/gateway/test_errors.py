"""Refused requests: each gets the right error code, and nothing changes.

"Nothing changes" is checked in Redis: the table's stored version and every account
balance are the same after the refusal as before it.
"""

from __future__ import annotations

import itertools
import time

import msgpack
import pytest
import redis.asyncio

from protocol.codec import encode
from protocol.errors import CloseCode
from protocol.messages import (
    Bet,
    BetPlaced,
    CashOut,
    Clear,
    ErrorReply,
    GetHistory,
    GetTableInfo,
    Hello,
    HouseWay,
    Join,
    Leave,
    Ping,
    Pong,
    Rebet,
    Rebuy,
    SetHand,
    SitOut,
    Watch,
)
from protocol.messages import Cards as CardsEvent
from protocol.structs import Balances, HandChoice
from server.app import App
from server.auth import tokens
from server.config import Settings
from server.rules.splits import split_with_low
from server.store.players.accounts import AccountStore
from server.store.tables.store import TableStore
from tests.helpers import url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, audit_report, close_all


class Unchanged:
    """Records the tables' versions and the accounts, to check a refusal changed nothing."""

    def __init__(self, client: redis.asyncio.Redis) -> None:
        self.tables = TableStore(client)
        self.accounts = AccountStore(client)

    async def state(self) -> tuple[dict[str, int], list[tuple[str, int]]]:
        versions = {}
        for table_id in await self.tables.table_ids():
            stored = await self.tables.load(table_id)
            assert stored is not None
            versions[table_id] = stored.version
        return versions, await self.accounts.list_accounts()

    async def refused(self, client: Client, code: str, kind: type, **fields: object) -> ErrorReply:
        before = await self.state()
        error = await client.error(kind, code, **fields)
        assert await self.state() == before, f"{kind.__name__} {fields} changed something"
        return error


@pytest.mark.asyncio
@pytest.mark.parametrize("case", ["forged", "other_secret", "expired", "malformed", "resume"])
async def test_bad_credentials_close_4001(
    app: App, server_settings: Settings, redis_client: redis.asyncio.Redis, case: str
) -> None:
    assert server_settings.token_secret is not None
    secret = server_settings.token_secret.encode()
    now = int(time.time())
    good = tokens.issue(secret, "alice", 3600, now)
    payload, signature = good.split(".")
    token: str | None = None
    resume: str | None = None
    if case == "forged":  # another player's name with alice's signature
        token = tokens.issue(secret, "mallory", 3600, now).split(".")[0] + "." + signature
    elif case == "other_secret":
        token = tokens.issue(b"not-the-server-secret", "alice", 3600, now)
    elif case == "expired":
        token = tokens.issue(secret, "alice", 60, now - 120)
    elif case == "malformed":
        token = payload
    else:  # a resume token signed with the login secret is not a resume token
        token, resume = good, good
    client = await Client.open(url(app))
    try:
        await client.send(_hello(token=token, resume_token=resume))
        closed = await client.wait_closed()
        assert closed.code == CloseCode.UNAUTHORIZED
        [reply] = client.messages
        assert isinstance(reply, ErrorReply)
        assert (reply.code, reply.rid, reply.retryable) == ("unauthorized", "h", False)
        if case == "expired":
            assert "expired" in reply.message
        # Nothing changed: no account was created.
        assert await AccountStore(redis_client).list_accounts() == []
    finally:
        await client.close()


def _hello(**fields: object) -> bytes:
    return encode(
        Hello(rid="h", min_version=1, max_version=1, client="t", **fields)  # type: ignore[arg-type]
    )


@pytest.mark.asyncio
async def test_a_good_token_logs_in(app: App, server_settings: Settings) -> None:
    assert server_settings.token_secret is not None
    token = tokens.issue(server_settings.token_secret.encode(), "alice", 60, int(time.time()))
    client = await Client.hello(url(app), token=token)
    try:
        assert client.welcome is not None
        assert (client.welcome.player_id, client.welcome.guest) == ("alice", False)
        # No account yet: a buy-in is refused, nothing moves.
        await client.error(Join, "insufficient_balance", table_id="slow", buy_in=100)
    finally:
        await client.close()


async def _seated(app: App, label: str, buy_in: int, seat: int) -> Client:
    client = await Client.hello(url(app), label=label)
    await client.ok(Join, table_id="slow", buy_in=buy_in, seat=seat)
    return client


@pytest.mark.asyncio
async def test_seat_and_money_errors_change_nothing(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    app = await start_app(guest_balance=1000)
    check = Unchanged(redis_client)
    alice = await _seated(app, "a", 300, seat=2)
    bob = await Client.hello(url(app), label="b")
    try:
        # Acting on a seat that is not yours: every action needs your own seat.
        for kind, fields in [
            (Bet, {"amount": 50}),
            (Rebet, {}),
            (Clear, {}),
            (SitOut, {}),
            (Leave, {}),
            (Rebuy, {"amount": 100}),
            (CashOut, {"amount": 0}),
        ]:
            await check.refused(bob, "not_seated", kind, table_id="slow", **fields)
        # Someone else's seat, an occupied table, a table that does not exist.
        await check.refused(bob, "seat_taken", Join, table_id="slow", buy_in=100, seat=2)
        await check.refused(alice, "already_seated", Join, table_id="slow", buy_in=100)
        await check.refused(bob, "no_such_table", Join, table_id="nope", buy_in=100)
        await check.refused(bob, "no_such_table", Watch, table_id="nope")
        await check.refused(bob, "no_such_table", GetTableInfo, table_id="nope")
        await check.refused(bob, "bad_cursor", GetHistory, cursor="x")
        # A buy-in beyond the account (1000), and beyond the table's limits.
        await check.refused(bob, "insufficient_balance", Join, table_id="slow", buy_in=1005)
        await check.refused(bob, "bet_limits", Join, table_id="slow", buy_in=50)
        # A rebuy beyond the account.
        await check.refused(alice, "insufficient_balance", Rebuy, table_id="slow", amount=900)
        # Bets beyond the table balance (300), outside the limits, a bonus alone.
        await check.refused(alice, "insufficient_balance", Bet, table_id="slow", amount=305)
        await check.refused(alice, "bet_limits", Bet, table_id="slow", amount=7)
        await check.refused(alice, "bet_limits", Bet, table_id="slow", amount=5000)
        # A bonus with no main bet breaks the message's schema: the decoder refuses it.
        before = await check.state()
        raw = {"type": "bet", "rid": "raw1", "table_id": "slow", "amount": 0, "bonus": 10}
        await alice.send(msgpack.packb(raw))
        [error] = await alice.wait(lambda: alice.replies.get("raw1"))
        assert isinstance(error, ErrorReply), error
        assert error.code == "bad_message", error
        assert await check.state() == before
        await check.refused(alice, "no_bet", Rebet, table_id="slow")
        await check.refused(alice, "insufficient_balance", CashOut, table_id="slow", amount=400)
        # Setting a hand in the betting phase.
        await check.refused(alice, "wrong_phase", SetHand, table_id="slow", low=(0, 1))
        await check.refused(alice, "wrong_phase", HouseWay, table_id="slow", mode="set")
        balances = await alice.ok(Rebuy, table_id="slow", amount=100)  # still works
        assert isinstance(balances, Balances)
        assert balances.account == 600
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await close_all([alice, bob])


@pytest.mark.asyncio
async def test_round_errors_change_nothing(app: App, redis_client: redis.asyncio.Redis) -> None:
    check = Unchanged(redis_client)
    alice = await _seated(app, "a", 500, seat=0)
    bob = await _seated(app, "b", 500, seat=1)
    carol = await Client.hello(url(app), label="c")
    try:
        await alice.ok(Bet, table_id="slow", amount=100)
        # A bet placed, but no hand before the deal: the house way's suggestion too.
        await check.refused(alice, "wrong_phase", HouseWay, table_id="slow", mode="suggest")
        await bob.ok(SitOut, table_id="slow")  # everyone decided: betting closes
        await alice.phase("slow", "setting")
        cards = await alice.event("slow", CardsEvent)
        # Carol has no seat: she cannot set a hand, Alice's or any.
        carol_tries: list[tuple[type, dict[str, object]]] = [
            (SetHand, {"low": cards.cards[:2]}),
            (HouseWay, {"mode": "set"}),
            (HouseWay, {"mode": "suggest"}),
            (Leave, {}),
        ]
        for kind, fields in carol_tries:
            await check.refused(carol, "not_seated", kind, table_id="slow", **fields)
        # Betting is over: a bet, a rebuy or a cash-out with a bet in play is refused.
        await check.refused(alice, "wrong_phase", Bet, table_id="slow", amount=50)
        await check.refused(bob, "wrong_phase", Bet, table_id="slow", amount=50)
        await check.refused(alice, "wrong_phase", Rebuy, table_id="slow", amount=100)
        await check.refused(alice, "wrong_phase", CashOut, table_id="slow", amount=100)
        await check.refused(alice, "wrong_phase", SitOut, table_id="slow")
        # Bob sits this round out: he has no hand to set.
        await check.refused(bob, "no_bet", SetHand, table_id="slow", low=cards.cards[:2])
        await check.refused(bob, "no_bet", HouseWay, table_id="slow", mode="set")
        # Bob cannot name Alice's cards; Alice cannot name cards she does not hold.
        others = [c for c in range(53) if c not in cards.cards]
        await check.refused(alice, "bad_hand", SetHand, table_id="slow", low=others[:2])
        await check.refused(
            alice, "bad_hand", SetHand, table_id="slow", low=(cards.cards[0], others[0])
        )
        # A split whose low hand outranks the high hand is refused (foul = reject).
        foul = next(
            (
                low
                for low in itertools.combinations(cards.cards, 2)
                if split_with_low(cards.cards, low).is_foul(app.hosts["slow"].config.rules.wheel)
            ),
            None,
        )
        if foul is not None:
            await check.refused(alice, "foul", SetHand, table_id="slow", low=foul)
        choice = await alice.ok(HouseWay, table_id="slow", mode="set")
        assert isinstance(choice, HandChoice)
        await alice.phase("slow", "revealing")
        # Too late now, and already set anyway.
        await check.refused(alice, "wrong_phase", SetHand, table_id="slow", low=choice.low)
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await close_all([alice, bob, carol])


@pytest.mark.asyncio
async def test_already_set(app: App, redis_client: redis.asyncio.Redis) -> None:
    check = Unchanged(redis_client)
    alice = await _seated(app, "a", 500, seat=0)
    bob = await _seated(app, "b", 500, seat=1)
    try:
        await alice.ok(Bet, table_id="slow", amount=100)
        await bob.ok(Bet, table_id="slow", amount=100)
        await alice.phase("slow", "setting")
        await alice.ok(HouseWay, table_id="slow", mode="set")
        # Bob still has to set: the round waits; Alice's hand is final.
        await check.refused(alice, "already_set", HouseWay, table_id="slow", mode="set")
    finally:
        await close_all([alice, bob])


TWO_SEATS = """
[[table]]
id = "duo"
name = "Two seats"
seats = 2
betting_ms = 20000
setting_ms = 30000
"""


@pytest.mark.asyncio
@pytest.mark.parametrize("code", ["seat_taken", "insufficient_balance", "table_full"])
async def test_a_failed_join_leaves_the_connection_as_it_was(
    start_app: StartApp, code: str
) -> None:
    app = await start_app(tables=TWO_SEATS, guest_balance=1000)
    alice = await Client.hello(url(app), label="a")
    bob = await Client.hello(url(app), label="b")  # not watching "duo"
    watcher = await Client.hello(url(app), label="w")  # watching "duo" before its join
    clients = [alice, bob, watcher]
    try:
        await alice.ok(Join, table_id="duo", buy_in=300, seat=0)
        join: dict[str, object] = {"seat": 0, "buy_in": 100}  # seat_taken: refused by step
        if code == "insufficient_balance":  # refused by the store's commit
            join = {"seat": None, "buy_in": 1005}
        elif code == "table_full":
            carol = await Client.hello(url(app), label="c")
            clients.append(carol)
            await carol.ok(Join, table_id="duo", buy_in=100, seat=1)
            join = {"seat": None, "buy_in": 100}
        await watcher.ok(Watch, table_id="duo")
        await bob.error(Join, code, table_id="duo", **join)
        await watcher.error(Join, code, table_id="duo", **join)
        seen = len(bob.table("duo"))
        await alice.ok(Bet, table_id="duo", amount=50)
        # The watcher still watches: the bet reaches it.
        await watcher.event("duo", BetPlaced, lambda m: m.seat == 0)
        # The bet's event went to every subscriber at once, before the watcher got it:
        # a pong Bob asks for now would follow it on his connection, had he been sent it.
        assert isinstance(await bob.call(Ping), Pong)
        assert bob.table("duo")[seen:] == []
    finally:
        await close_all(clients)
