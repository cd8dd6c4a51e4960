"""Money requests: applied at most once, a repeat answered as the first time.

A request that moves chips (:class:`MoneyRequest`) is recorded by the commit that
applies it; a repeat (the client never heard the reply) finds the record and gets the
very reply the first one got (:class:`Repeats`), and the same rid used for another
request is refused (:func:`rid_reused`). docs/DESIGN.md, "Money and idempotency".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from protocol.errors import ErrorCode
from server.store import AccountStore, RequestRecord, TableStore
from server.table.errors import TableError
from server.table.machine import Transition


@dataclass(frozen=True, slots=True)
class MoneyRequest:
    """A client's request that moves chips (join, rebuy, cash_out, leave), applied at
    most once per ``(session, rid)`` (protocol/PROTOCOL.md, section 3): a session
    survives a dropped connection (resumed with its token), and a client's request ids
    are its own only within one session (a counter may start again in a new one).

    ``fingerprint`` says what was asked: the same rid with another fingerprint is
    refused (``rid_reused``). ``memo(t)`` is what the reply needs from the change
    ``t`` besides the account balance; it is stored with the request.
    ``answer(memo, account)`` queues the ``ok`` from a memo and the player's account
    balance right after the change: the first time, and for every repeat with the
    stored ones, so that a repeat gets the very reply the first one got.
    """

    player: str
    session: str
    rid: str
    fingerprint: bytes
    memo: Callable[[Transition], bytes]
    answer: Callable[[bytes, int], None]

    @property
    def key(self) -> str:
        """What the request is stored under, for its player."""
        return f"{self.session}:{self.rid}"


def rid_reused(request: MoneyRequest) -> TableError:
    """The error of a rid used before for another request."""
    return TableError(
        ErrorCode.RID_REUSED,
        f"rid {request.rid!r} was used for another request of yours; a new request needs a new rid",
    )


class Repeats:
    """The commit path's answers to money requests applied before, at ``table_id``."""

    def __init__(self, table_id: str, store: TableStore, accounts: AccountStore) -> None:
        self.table_id = table_id
        self.store = store
        self.accounts = accounts

    async def repeated(self, request: MoneyRequest) -> bool:
        """Whether ``request`` was applied already (then it is answered as then); raises
        ``rid_reused`` if its rid was claimed by another request, here or elsewhere."""
        record = await self.store.requests.record(self.table_id, request.player, request.key)
        if record is not None:
            await self.answer(request, record)
            return True
        claimed = await self.store.transfers.claimed(request.player, request.key)
        if claimed is not None and claimed[0] != request.fingerprint:
            raise rid_reused(request)
        return False

    async def answer(self, request: MoneyRequest, record: RequestRecord) -> None:
        """Answer a request already applied as it was answered then, if it is the same."""
        if record.fingerprint != request.fingerprint:
            raise rid_reused(request)
        request.answer(record.memo, await self.balance(request, record))

    async def balance(self, request: MoneyRequest, record: RequestRecord) -> int:
        """The requester's account balance right after the request was applied: in its
        record, or with the chips it paid out (delivered now if they were not yet)."""
        if record.account is not None:
            return record.account
        if record.payout:
            paid = await self.store.transfers.paid_balance(
                self.table_id, request.player, record.payout
            )
            if paid is not None:
                return paid
        return await self.accounts.balance(request.player) or 0
