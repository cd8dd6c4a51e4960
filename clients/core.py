"""The client core: a :class:`Client` is a session with one method per request.

:class:`Client` adds to :class:`~clients.session.Session` (the connection, replies
matched to requests, the tables' models, the events) the requests of PROTOCOL.md, each
a typed method returning its typed result. The names callers use are all here:
``from clients.core import Client, ClientError, Connected, ...``; each is defined in the
module of its job (:mod:`clients.session`, :mod:`clients.pending`,
:mod:`clients.events`, :mod:`clients.errors`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeVar

from clients.errors import ClientError, ConnectionLost, ServerError, SessionEnded, plain_error
from clients.events import ClientEvent, Connected, Disconnected, Notice, Verified
from clients.session import CLIENT_NAME, DEFAULT_URL, MONEY_ATTEMPTS, Session
from protocol.messages import (
    Bet,
    CashOut,
    Clear,
    GetBalance,
    GetHistory,
    GetServerInfo,
    GetTableInfo,
    HouseWay,
    Join,
    Leave,
    ListTables,
    Rebet,
    Rebuy,
    SetHand,
    SitOut,
    WatchJackpots,
)
from protocol.structs import (
    Balances,
    HandChoice,
    HistoryPage,
    JackpotList,
    JackpotMeter,
    Joined,
    Result,
    ServerInfo,
    TableInfo,
    TableList,
    TableSummary,
    Wager,
)

__all__ = [
    "CLIENT_NAME",
    "DEFAULT_URL",
    "MONEY_ATTEMPTS",
    "Client",
    "ClientError",
    "ClientEvent",
    "Connected",
    "ConnectionLost",
    "Disconnected",
    "Notice",
    "ServerError",
    "SessionEnded",
    "Verified",
    "plain_error",
]

R = TypeVar("R")


def _expect(result: Result | None, kind: type[R]) -> R:
    if not isinstance(result, kind):
        raise ClientError(f"expected a {kind.__name__} result, got {type(result).__name__}")
    return result


class Client(Session):
    """One session with a server and its requests; use as ``async with Client(url) as c:``.

    The options are :class:`~clients.session.Session`'s. Requests raise
    :class:`ServerError` for an ``error`` reply, :class:`ConnectionLost` when the
    connection drops first, and ``TimeoutError`` after ``request_timeout_s``.
    """

    async def list_tables(self) -> tuple[TableSummary, ...]:
        """The lobby: every table."""
        return (await self.lobby()).tables

    async def lobby(self) -> TableList:
        """The lobby: every table, and the meters of the jackpots they offer (minor 7;
        kept in :attr:`jackpots`)."""
        listed = _expect(await self.request(lambda rid: ListTables(rid=rid)), TableList)
        self.jackpots.update((m.name, m.meter) for m in listed.jackpots)
        return listed

    async def watch_jackpots(self) -> tuple[JackpotMeter, ...]:
        """The jackpots' meters now, and a ``jackpot`` event for each change from now on
        (minor 7): :attr:`jackpots` stays up to date. A new connection asks again. Raises
        :class:`ServerError` ``unknown_type`` from a server of an earlier minor."""
        listed = _expect(await self.request(lambda rid: WatchJackpots(rid=rid)), JackpotList)
        self.jackpots.update((m.name, m.meter) for m in listed.jackpots)
        return listed.jackpots

    async def join(self, table_id: str, buy_in: int, seat: int | None = None) -> Joined:
        """Sit at a table with ``buy_in`` chips (also watches it). A join the server
        refuses watches nothing: a table not watched before has no model after it."""
        watched = table_id in self.tables
        model = self.model(table_id)
        try:
            joined = _expect(
                await self._money(
                    lambda rid: Join(rid=rid, table_id=table_id, buy_in=buy_in, seat=seat)
                ),
                Joined,
            )
        except ServerError:
            # The server does not send this table's events after a refused join: a
            # model kept would go stale, and the next hello would ask for the table.
            if not watched:
                self.tables.pop(table_id, None)
            raise
        model.your_seat = joined.seat
        return joined

    async def leave(self, table_id: str) -> Balances:
        """Leave the seat; the table balance goes back to the account."""
        return _expect(await self._money(lambda rid: Leave(rid=rid, table_id=table_id)), Balances)

    async def balance(self) -> Balances:
        """The account balance and the balance at each table."""
        return _expect(await self.request(lambda rid: GetBalance(rid=rid)), Balances)

    async def rebuy(self, table_id: str, amount: int) -> Balances:
        """Move chips from the account to the table, between rounds."""
        return _expect(
            await self._money(lambda rid: Rebuy(rid=rid, table_id=table_id, amount=amount)),
            Balances,
        )

    async def cash_out(self, table_id: str, amount: int = 0) -> Balances:
        """Move chips from the table back to the account (0: all), keeping the seat."""
        return _expect(
            await self._money(lambda rid: CashOut(rid=rid, table_id=table_id, amount=amount)),
            Balances,
        )

    async def bet(
        self, table_id: str, amount: int, bonus: int = 0, side: Sequence[tuple[str, int]] = ()
    ) -> None:
        """Place or replace this round's bet (0 removes it). The bonus bet goes in
        ``bonus`` and in ``wagers`` too, so that a server of any minor takes it; every
        other side bet staked (``side``: kind and stake) in ``wagers`` alone
        (protocol/PROTOCOL.md, section 6, ``bet``)."""
        wagers = ((Wager("bonus", bonus),) if bonus else ()) + tuple(
            Wager(kind, stake) for kind, stake in side if stake
        )
        await self.request(
            lambda rid: Bet(rid=rid, table_id=table_id, amount=amount, bonus=bonus, wagers=wagers)
        )

    async def rebet(self, table_id: str) -> None:
        """Bet as in the last round played."""
        await self.request(lambda rid: Rebet(rid=rid, table_id=table_id))

    async def clear(self, table_id: str) -> None:
        """Remove this round's bet and bonus."""
        await self.request(lambda rid: Clear(rid=rid, table_id=table_id))

    async def sit_out(self, table_id: str) -> None:
        """Skip this round."""
        await self.request(lambda rid: SitOut(rid=rid, table_id=table_id))

    async def set_hand(self, table_id: str, low: tuple[int, int]) -> HandChoice:
        """Set the hand with these two cards in the low hand; the reply names both hands."""
        return _expect(
            await self.request(lambda rid: SetHand(rid=rid, table_id=table_id, low=low)),
            HandChoice,
        )

    async def house_way(self, table_id: str, *, apply: bool = False) -> HandChoice:
        """The house way split: a suggestion, or (``apply``) set that way."""
        mode: Literal["set", "suggest"] = "set" if apply else "suggest"
        return _expect(
            await self.request(lambda rid: HouseWay(rid=rid, table_id=table_id, mode=mode)),
            HandChoice,
        )

    async def history(
        self, cursor: str | None = None, limit: int = 20, table_id: str | None = None
    ) -> HistoryPage:
        """A page of the player's past rounds, newest first."""
        return _expect(
            await self.request(
                lambda rid: GetHistory(rid=rid, cursor=cursor, limit=limit, table_id=table_id)
            ),
            HistoryPage,
        )

    async def table_info(self, table_id: str) -> TableInfo:
        """A table's rules, limits, chip denominations and bonus pay table."""
        return _expect(
            await self.request(lambda rid: GetTableInfo(rid=rid, table_id=table_id)), TableInfo
        )

    async def server_info(self) -> ServerInfo:
        """The server's name, version and protocol versions."""
        return _expect(await self.request(lambda rid: GetServerInfo(rid=rid)), ServerInfo)
