"""An operator's credits, debits and reversals (``AccountStore.operate``): idempotent
by key, refused with a reason and nothing written, every one a ledger entry the audit
adds up."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio

from server.app import table_money
from server.store.audit.check import audit
from server.store.client.replies import stream_entries
from server.store.keys import Keys
from server.store.players.accounts import AccountStore, Move, MoveRefused, Refusal
from server.store.players.guests import Closing, GuestStore

KEYS = Keys()


@pytest.fixture
def accounts(redis_client: redis.asyncio.Redis) -> AccountStore:
    return AccountStore(redis_client)


async def entries(client: redis.asyncio.Redis, player: str) -> list[dict[str, bytes]]:
    return [f for _, f in stream_entries(await client.xrange(KEYS.account_ledger(player)))]


async def clean(client: redis.asyncio.Redis) -> None:
    report = await audit(client, table_money)
    assert report.ok, report.explain()


@pytest.mark.asyncio
async def test_an_unknown_player_is_refused_unless_created(
    accounts: AccountStore, redis_client: redis.asyncio.Redis
) -> None:
    with pytest.raises(MoveRefused) as refused:
        await accounts.operate(Move.CREDIT, "alcie", amount=5000, key="k1", reason="r", by="ops")
    assert refused.value.reason is Refusal.UNKNOWN_PLAYER
    assert not await accounts.exists("alcie")
    assert await accounts.list_accounts() == []
    made = await accounts.operate(
        Move.CREDIT, "alice", amount=5000, key="k1", reason="welcome", by="ops", create=True
    )
    assert (made.applied, made.balance, made.amount) == (True, 5000, 5000)
    for move in (Move.DEBIT, Move.REVERSAL):
        with pytest.raises(MoveRefused) as refused:
            await accounts.operate(
                move, "bob", amount=1, key="k2", reason="r", by="ops", create=True, entry="1-0"
            )
        assert refused.value.reason is Refusal.UNKNOWN_PLAYER
    assert await accounts.list_accounts() == [("alice", 5000)]
    await clean(redis_client)


@pytest.mark.asyncio
async def test_a_key_is_applied_once_and_not_for_another_request(
    accounts: AccountStore, redis_client: redis.asyncio.Redis
) -> None:
    await accounts.credit("ann", 100, "seed")
    moves = await asyncio.gather(
        *(
            accounts.operate(Move.CREDIT, "ann", amount=250, key="pay-7", reason="bonus", by="a")
            for _ in range(5)
        )
    )
    assert sum(m.applied for m in moves) == 1
    assert {(m.balance, m.entry, m.amount) for m in moves} == {(350, moves[0].entry, 250)}
    # The first result again, later too, whatever happened since.
    await accounts.credit("ann", 1, "later")
    again = await accounts.operate(
        Move.CREDIT, "ann", amount=250, key="pay-7", reason="bonus", by="b"
    )
    assert (again.applied, again.balance, again.entry) == (False, 350, moves[0].entry)
    for changed in (
        {"move": Move.CREDIT, "amount": 251, "reason": "bonus"},
        {"move": Move.CREDIT, "amount": 250, "reason": "other"},
        {"move": Move.DEBIT, "amount": 250, "reason": "bonus"},
    ):
        with pytest.raises(MoveRefused) as refused:
            await accounts.operate(
                changed["move"],  # type: ignore[arg-type]
                "ann",
                amount=changed["amount"],  # type: ignore[arg-type]
                reason=changed["reason"],  # type: ignore[arg-type]
                key="pay-7",
                by="a",
            )
        assert refused.value.reason is Refusal.KEY_REUSED
    # A key of the first kind of credit (its record the ledger id alone) is that credit.
    old = await accounts.operate(Move.CREDIT, "ann", amount=100, key="seed", reason="x", by="a")
    assert not old.applied
    with pytest.raises(MoveRefused):
        await accounts.operate(Move.DEBIT, "ann", amount=100, key="seed", reason="x", by="a")
    assert await accounts.balance("ann") == 351
    fields = await entries(redis_client, "ann")
    assert [f["key"] for f in fields] == [b"seed", b"op:pay-7", b"later"]
    assert (fields[1]["reason"], fields[1]["by"]) == (b"bonus", b"a")
    await clean(redis_client)


@pytest.mark.asyncio
async def test_a_debit_never_goes_below_zero(
    accounts: AccountStore, redis_client: redis.asyncio.Redis
) -> None:
    await accounts.credit("ann", 300, "seed")
    done = await accounts.operate(Move.DEBIT, "ann", amount=120, key="d1", reason="fix", by="a")
    assert (done.applied, done.balance, done.amount) == (True, 180, 120)
    with pytest.raises(MoveRefused) as refused:
        await accounts.operate(Move.DEBIT, "ann", amount=181, key="d2", reason="fix", by="a")
    assert (refused.value.reason, refused.value.balance) == (Refusal.INSUFFICIENT, 180)
    assert await redis_client.hget(KEYS.account("ann"), "out") == b"120"
    last = (await entries(redis_client, "ann"))[-1]
    assert (last["kind"], last["source"], last["dest"]) == (b"debit", b"account", b"outside")
    await clean(redis_client)


@pytest.mark.asyncio
async def test_a_credit_is_reversed_once_while_its_chips_are_there(
    accounts: AccountStore, redis_client: redis.asyncio.Redis
) -> None:
    await accounts.credit("ann", 50, "seed")
    wrong = await accounts.operate(
        Move.CREDIT, "ann", amount=5000, key="typo", reason="meant 500", by="a"
    )
    back = await accounts.operate(
        Move.REVERSAL, "ann", entry=wrong.entry, key="undo-1", reason="typo", by="a"
    )
    assert (back.applied, back.balance, back.amount) == (True, 50, 5000)
    same = await accounts.operate(
        Move.REVERSAL, "ann", entry=wrong.entry, key="undo-1", reason="typo", by="a"
    )
    assert (same.applied, same.entry) == (False, back.entry)
    with pytest.raises(MoveRefused) as refused:
        await accounts.operate(
            Move.REVERSAL, "ann", entry=wrong.entry, key="undo-2", reason="typo", by="a"
        )
    assert (refused.value.reason, refused.value.entry) == (Refusal.REVERSED, back.entry)
    # Not a credit: the reversal itself; no entry: an id never written.
    for entry, reason in ((back.entry, Refusal.NOT_A_CREDIT), ("1-0", Refusal.NO_ENTRY)):
        with pytest.raises(MoveRefused) as refused:
            await accounts.operate(Move.REVERSAL, "ann", entry=entry, key="u3", reason="r", by="a")
        assert refused.value.reason is reason
    # Chips no longer there: refused whole, nothing taken.
    big = await accounts.operate(Move.CREDIT, "ann", amount=400, key="c2", reason="r", by="a")
    await accounts.operate(Move.DEBIT, "ann", amount=300, key="d1", reason="spent", by="a")
    with pytest.raises(MoveRefused) as refused:
        await accounts.operate(Move.REVERSAL, "ann", entry=big.entry, key="u4", reason="r", by="a")
    assert (refused.value.reason, refused.value.balance) == (Refusal.INSUFFICIENT, 150)
    assert await accounts.balance("ann") == 150
    ledger = await accounts.ledger("ann")
    assert [e.kind for e in ledger] == ["debit", "credit", "reversal", "credit", "credit"]
    assert ledger[2].extra == {"reason": "typo", "by": "a", "reverses": wrong.entry}
    assert [e.entry for e in await accounts.ledger("ann", 2, before=ledger[1].entry)] == [
        ledger[2].entry,
        ledger[3].entry,
    ]
    await clean(redis_client)


@pytest.mark.asyncio
async def test_bad_arguments_are_refused_before_redis(accounts: AccountStore) -> None:
    cases: list[tuple[dict[str, object], str]] = [
        ({"amount": 0}, "amount"),
        ({"amount": -5}, "amount"),
        ({"amount": 10**16}, "amount"),
        ({"key": "has space"}, "key"),
        ({"key": ""}, "key"),
        ({"key": "x" * 65}, "key"),
        ({"reason": "  "}, "reason"),
        ({"reason": "r" * 201}, "reason"),
    ]
    for case, what in cases:
        args: dict[str, object] = {"amount": 5, "key": "k", "reason": "r", **case}
        with pytest.raises(ValueError, match=what):
            await accounts.operate(Move.CREDIT, "ann", by="a", create=True, **args)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ledger entry"):
        await accounts.operate(Move.REVERSAL, "ann", entry="nope", key="k", reason="r", by="a")
    assert await accounts.list_accounts() == []


@pytest.mark.asyncio
async def test_a_closed_guests_account_takes_no_move(
    accounts: AccountStore, redis_client: redis.asyncio.Redis
) -> None:
    await accounts.ensure_guest("g-1", 100, now_ms=1_000)
    closed = await GuestStore(redis_client).close("g-1", 2_000, 0, 3_000)
    assert closed.outcome is Closing.CLOSED
    for move in (Move.CREDIT, Move.DEBIT):
        with pytest.raises(MoveRefused) as refused:
            await accounts.operate(move, "g-1", amount=5, key="k", reason="r", by="a", create=True)
        assert refused.value.reason is Refusal.CLOSED
    assert await accounts.balance("g-1") == 0
    await clean(redis_client)
