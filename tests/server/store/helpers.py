"""What the store's tests share: one table, ledger entries, its lease, its next commit, and
a store that dies between two steps of a transfer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import redis.asyncio

from server.store.chips.ledgers import ledger_streams
from server.store.chips.records import ClientRequest
from server.store.tables.commit_args import CommitResult, Write
from server.store.tables.store import TableStore
from server.table.ledger import Kind, LedgerEntry, Pot

T = "t1"
PARTS = {"h": b"s"}  # a state in one part: the store does not read them


def buy_in(key: str, player: str, amount: int) -> LedgerEntry:
    return LedgerEntry(key, Kind.BUY_IN, player, amount, Pot.ACCOUNT, Pot.TABLE)


def cash_out(key: str, player: str, amount: int) -> LedgerEntry:
    return LedgerEntry(key, Kind.CASH_OUT, player, amount, Pot.TABLE, Pot.ACCOUNT)


def bet(key: str, player: str, amount: int) -> LedgerEntry:
    return LedgerEntry(key, Kind.BET, player, amount, Pot.TABLE, Pot.HELD)


async def lease(store: TableStore) -> int:
    """The lease of table ``T`` for owner ``n``: its fencing token."""
    token = await store.leases.acquire(T, "n", 10_000)
    assert token is not None
    return token


async def next_commit(
    store: TableStore,
    token: int,
    *,
    after: int = 0,
    state: Mapping[str, bytes] = PARTS,
    entries: Sequence[LedgerEntry] = (),
    events: Sequence[tuple[int, bytes]] = (),
    logs: Sequence[tuple[str, bytes]] = (),
    publish_channel: str | None = None,
    request: ClientRequest | None = None,
    table: str = T,
    commit_id: str | None = None,
) -> CommitResult:
    """``table``'s commit of version ``after + 1`` over ``after`` (0: its first commit)
    under lease ``token``; the rest as :class:`Write` has it."""
    return await store.commits.write(
        Write(
            table,
            token=token,
            expected_version=after,
            new_version=after + 1,
            parts=state,
            entries=entries,
            events=events,
            logs=logs,
            publish_channel=publish_channel,
            request=request,
            commit_id=commit_id,
        )
    )


async def expired(store: TableStore) -> bool:
    """Whether table ``T`` has no lease (it expired)."""
    return await store.leases.holder(T) is None


async def ledger_len(client: redis.asyncio.Redis) -> int:
    """Entries in every ledger stream (each table's and each account's)."""
    return sum([int(await client.xlen(s)) for s in await ledger_streams(client)])


class Crash(BaseException):
    """The process dies here."""


class CrashingStore(TableStore):
    """The real store, dying at ``crash_at`` (the name of the step it would run next)."""

    crash_at = ""

    def __init__(self, client: redis.asyncio.Redis, **kwargs: Any) -> None:
        super().__init__(client, **kwargs)
        steps: list[tuple[object, str, str]] = [
            (self.commits, "_claim_all", "claim"),
            (self.commits, "_store_change", "commit"),
            (self.commits, "_after", "after"),
            (self.transfers, "deliver", "deliver"),
            (self.transfers, "deliver_all", "deliver"),
            (self.transfers, "settle", "settle"),
            (self.transfers, "refund", "refund"),
            (self.transfers, "forget", "forget"),
        ]
        for part, name, point in steps:
            setattr(part, name, self._dying(point, getattr(part, name)))

    def _dying(self, point: str, step: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
        async def call(*args: Any, **kwargs: Any) -> Any:
            if self.crash_at == point:
                raise Crash(point)
            return await step(*args, **kwargs)

        return call
