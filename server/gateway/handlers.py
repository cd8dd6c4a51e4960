"""The request handlers: :data:`HANDLERS` maps each request type to one small function.

A handler gets the gateway's :class:`~server.gateway.context.Context`, the connection
and the decoded request. It returns the ``ok``'s result (the gateway sends it), or
:data:`~server.gateway.context.REPLIED` when it sent the ``ok`` itself so that it
precedes the table events the request causes (protocol/PROTOCOL.md, section 3); or it
raises ``TableError``, which the gateway turns into the ``error`` reply. The money
requests are in :mod:`server.gateway.money`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from protocol.codec import encode
from protocol.errors import ErrorCode
from protocol.messages import (
    Bet,
    CashOut,
    Clear,
    ClientMessage,
    GetBalance,
    GetHistory,
    GetServerInfo,
    GetTableInfo,
    HouseWay,
    Join,
    Leave,
    ListTables,
    OkReply,
    Ping,
    Pong,
    Rebet,
    Rebuy,
    SetHand,
    SitOut,
    Unwatch,
    UnwatchJackpots,
    Watch,
    WatchJackpots,
)
from protocol.structs import Balances, JackpotList, Result, ServerInfo
from protocol.version import MAX_SUPPORTED_VERSION, MIN_SUPPORTED_VERSION, PROTOCOL_MINOR
from server.archive.history import history_page
from server.gamelog import unpack_records
from server.gateway import money
from server.gateway.connection import Connection
from server.gateway.context import REPLIED, Context, Handler, Outcome, Replied
from server.gateway.presence import check_table_limit
from server.host import now_ms
from server.table import events as ev
from server.table.errors import TableError
from server.table.machine import Transition, suggestion
from server.version import SERVER_VERSION

# --- the session and the lobby -------------------------------------------------------


async def ping(ctx: Context, conn: Connection, msg: Ping) -> Outcome:
    """``pong``, with the server's clock and the client's echoed."""
    conn.send_bytes(encode(Pong(rid=msg.rid, server_time_ms=now_ms(), time_ms=msg.time_ms)))
    return REPLIED


async def list_tables(ctx: Context, conn: Connection, msg: ListTables) -> Outcome:
    """The lobby: every table, and the meter of each jackpot one of them offers."""
    listed = await ctx.presence.list_tables()
    relay = ctx.jackpots
    if relay is None:
        return listed
    hosts = ctx.presence.hosts
    # The jackpot each table's settings offer (a store seeded before the tables file
    # named one, or a table changed since, offers what its settings say).
    tables = tuple(
        replace(t, jackpot=relay.jackpot_of(hosts[t.table_id].config)) if t.table_id in hosts else t
        for t in listed.tables
    )
    names = {t.jackpot for t in tables if t.jackpot is not None}
    return replace(listed, tables=tables, jackpots=relay.listed(sorted(names)))


async def watch_jackpots(ctx: Context, conn: Connection, msg: WatchJackpots) -> Outcome:
    """The jackpots' meters now, and a ``jackpot`` message for each change from now on."""
    if ctx.jackpots is None:
        return JackpotList(jackpots=())
    configs = [host.config for host in ctx.presence.hosts.values()]
    return JackpotList(jackpots=ctx.jackpots.watch(conn, configs))


async def unwatch_jackpots(ctx: Context, conn: Connection, msg: UnwatchJackpots) -> Outcome:
    """No more ``jackpot`` messages."""
    if ctx.jackpots is not None:
        ctx.jackpots.unwatch(conn)
    return None


async def watch(ctx: Context, conn: Connection, msg: Watch) -> Outcome:
    """Receive a table's events, after its ``ok`` and a snapshot."""
    host = ctx.presence.host(msg.table_id)
    check_table_limit(conn, msg.table_id)
    # The snapshot must follow the ok: attach sends the ok first.
    first = encode(OkReply(rid=msg.rid))
    await ctx.presence.attach(conn, host, None, again=True, first=first)
    return REPLIED


async def unwatch(ctx: Context, conn: Connection, msg: Unwatch) -> Outcome:
    """Stop a table's events (and not later either, if the hello asked for them)."""
    conn.wanted.pop(msg.table_id, None)
    ctx.presence.detach(conn, ctx.presence.host(msg.table_id))
    return None


async def balance(ctx: Context, conn: Connection, msg: GetBalance) -> Outcome:
    """The account's balance and the player's balance at each table."""
    account = await ctx.accounts.balance(conn.player) or 0
    tables = tuple(await ctx.presence.table_balances(conn.player))
    return Balances(account=account, tables=tables)


async def history(ctx: Context, conn: Connection, msg: GetHistory) -> Outcome:
    """A page of the player's settled rounds, newest first (at one table, or all), from
    Redis and then the archive."""
    cursor: int | None = None
    if msg.cursor is not None:
        try:
            cursor = int(msg.cursor)
        except ValueError:
            raise TableError(ErrorCode.BAD_CURSOR, "unknown history cursor") from None
    blobs, next_cursor = await history_page(
        ctx.tables, ctx.archive, conn.player, cursor, msg.limit, msg.table_id
    )
    return unpack_records(blobs, str(next_cursor) if next_cursor is not None else None)


async def table_info(ctx: Context, conn: Connection, msg: GetTableInfo) -> Outcome:
    """A table's rules, options and pay tables (its jackpot's with its meter)."""
    info = ctx.presence.table_info(msg.table_id)  # NO_SUCH_TABLE if none is hosted here
    if ctx.jackpots is None:
        return info
    config = ctx.presence.hosts[msg.table_id].config
    return replace(info, jackpot=ctx.jackpots.info(config))


async def server_info(ctx: Context, conn: Connection, msg: GetServerInfo) -> Outcome:
    """The server's name and version, and the protocol versions it speaks."""
    return ServerInfo(
        server_name=ctx.server_name,
        server_version=SERVER_VERSION,
        protocol_version=MAX_SUPPORTED_VERSION,
        protocol_minor=PROTOCOL_MINOR,
        protocol_min=MIN_SUPPORTED_VERSION,
        protocol_max=MAX_SUPPORTED_VERSION,
    )


# --- the round -----------------------------------------------------------------------


async def bet(ctx: Context, conn: Connection, msg: Bet) -> Outcome:
    """Place (or change) the bet and the bonus bet."""
    side = tuple((w.kind, w.amount) for w in msg.wagers if w.kind != "bonus")
    event = ev.PlaceBet(conn.player, msg.amount, msg.bonus, side)
    return await _submit(ctx, conn, msg.rid, msg.table_id, event)


async def rebet(ctx: Context, conn: Connection, msg: Rebet) -> Outcome:
    """Bet as in the last round."""
    return await _submit(ctx, conn, msg.rid, msg.table_id, ev.Rebet(conn.player))


async def clear(ctx: Context, conn: Connection, msg: Clear) -> Outcome:
    """Take the bet back."""
    return await _submit(ctx, conn, msg.rid, msg.table_id, ev.ClearBet(conn.player))


async def sit_out(ctx: Context, conn: Connection, msg: SitOut) -> Outcome:
    """Keep the seat without playing."""
    return await _submit(ctx, conn, msg.rid, msg.table_id, ev.SitOut(conn.player))


async def set_hand(ctx: Context, conn: Connection, msg: SetHand) -> Outcome:
    """Split the seven cards: the two named are the low hand."""
    event = ev.SetHand(conn.player, (msg.low[0], msg.low[1]))
    return await _submit(ctx, conn, msg.rid, msg.table_id, event, _reply)


async def house_way(ctx: Context, conn: Connection, msg: HouseWay) -> Outcome:
    """The house way's split: suggested only, or set."""
    host = ctx.presence.host(msg.table_id)
    if msg.mode == "suggest":
        assert host.state is not None
        return suggestion(host.state, conn.player)
    return await _submit(ctx, conn, msg.rid, msg.table_id, ev.UseHouseWay(conn.player), _reply)


def _reply(t: Transition) -> Result | None:
    return t.reply


def _no_result(t: Transition) -> Result | None:
    return None


async def _submit(
    ctx: Context,
    conn: Connection,
    rid: str,
    table_id: str,
    event: ev.Event,
    result: Callable[[Transition], Result | None] = _no_result,
) -> Replied:
    """Apply ``event``; its ``ok`` (with ``result``) is sent before the events it causes."""

    def reply(t: Transition) -> None:
        conn.send_bytes(encode(OkReply(rid=rid, result=result(t))))

    await ctx.presence.host(table_id).submit(event, reply)
    return REPLIED


HANDLERS: Mapping[type[ClientMessage], Handler] = {
    Ping: ping,
    ListTables: list_tables,
    Watch: watch,
    Unwatch: unwatch,
    Join: money.join,
    Leave: money.leave,
    GetBalance: balance,
    Rebuy: money.rebuy,
    CashOut: money.cash_out,
    Bet: bet,
    Rebet: rebet,
    Clear: clear,
    SitOut: sit_out,
    SetHand: set_hand,
    HouseWay: house_way,
    GetHistory: history,
    GetTableInfo: table_info,
    GetServerInfo: server_info,
    WatchJackpots: watch_jackpots,
    UnwatchJackpots: unwatch_jackpots,
}
"""Every request after the hello, by type (the hello is the session's)."""
