"""What the store's tests share: one table, ledger entries, its lease, its next commit, and
a store that dies between two steps of a transfer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import redis.asyncio

from server.store.chips.ledgers import ledger_streams
from server.store.chips.records import Incoming
from server.store.tables.applied import ClientRequest
from server.store.tables.commit_args import CommitResult
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
    token = await store.acquire_lease(T, "n", 10_000)
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
    under lease ``token``; the rest as :meth:`TableStore.commit` takes it."""
    return await store.commit(
        table,
        token=token,
        expected_version=after,
        new_version=after + 1,
        state=state,
        entries=entries,
        events=events,
        logs=logs,
        publish_channel=publish_channel,
        request=request,
        commit_id=commit_id,
    )


async def expired(store: TableStore) -> bool:
    """Whether table ``T`` has no lease (it expired)."""
    return await store.lease_holder(T) is None


async def ledger_len(client: redis.asyncio.Redis) -> int:
    """Entries in every ledger stream (each table's and each account's)."""
    return sum([int(await client.xlen(s)) for s in await ledger_streams(client)])


class Crash(BaseException):
    """The process dies here."""


class CrashingStore(TableStore):
    """The real store, dying at ``crash_at`` (the name of the step it would run next)."""

    crash_at = ""

    def _die(self, point: str) -> None:
        if self.crash_at == point:
            raise Crash(point)

    async def _claim_all(self, *args: Any) -> Any:
        self._die("claim")
        return await super()._claim_all(*args)

    async def _store_change(self, table_id: str, **kwargs: Any) -> CommitResult:
        self._die("commit")
        return await super()._store_change(table_id, **kwargs)

    async def _after(self, *args: Any) -> CommitResult:
        self._die("after")
        return await super()._after(*args)

    async def deliver(self, table_id: str, player: str, items: Any) -> list[int]:
        self._die("deliver")
        return await super().deliver(table_id, player, items)

    async def deliver_all(self, table_id: str, by_player: Any) -> Any:
        self._die("deliver")
        return await super().deliver_all(table_id, by_player)

    async def settle(self, transfer: Incoming) -> str:
        self._die("settle")
        return await super().settle(transfer)

    async def refund(self, table_id: str, transfer: Incoming) -> str:
        self._die("refund")
        return await super().refund(table_id, transfer)

    async def forget_transfers(self, table_id: str, *args: Any, **kwargs: Any) -> None:
        self._die("forget")
        await super().forget_transfers(table_id, *args, **kwargs)
