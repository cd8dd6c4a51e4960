"""The requests that move chips: ``join``, ``leave``, ``rebuy`` and ``cash_out``.

Each is applied at most once per (session, rid) (protocol/PROTOCOL.md, section 3): a
repeat moves nothing and gets the first reply again. What a reply needs from the
change, besides the account balance the commit left, is its *memo*, stored with the
request for repeats (``MoneyRequest``).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import msgpack

from protocol.codec import encode
from protocol.errors import ErrorCode
from protocol.messages import CashOut, Join, Leave, OkReply, Rebuy
from protocol.structs import Balances, Joined, Result, TableBalance
from server.gateway.connection import Connection
from server.gateway.context import REPLIED, Context, Outcome, Replied
from server.gateway.presence import check_table_limit
from server.host import MoneyRequest
from server.table import events as ev
from server.table.errors import TableError
from server.table.machine import Transition, step

MoneyMessage = Join | Leave | Rebuy | CashOut


async def join(ctx: Context, conn: Connection, msg: Join) -> Outcome:
    """Seat the player; a join also watches the table (``join`` in protocol/PROTOCOL.md,
    section 6).

    The connection is attached before the commit, so that its snapshot comes before
    the ``ok`` and the ``seat`` event the join causes. A join that gets no ``ok``
    (refused, or failed) and left the player unseated leaves the connection as it
    found it: not watching the table unless it already was.
    """
    presence = ctx.presence
    host = presence.host(msg.table_id)
    player = conn.player
    table_id = msg.table_id
    watching = table_id in conn.tables
    check_table_limit(conn, table_id)
    wanted = conn.wanted.get(table_id)
    if not watching:
        await presence.attach(conn, host, None)
    # With no seat asked for, the state machine takes the first free one.
    event = ev.SitDown(player, conn.session.name, msg.seat, msg.buy_in, secrets.token_bytes(32))
    answered = False

    def memo(t: Transition) -> bytes:
        seat = t.state.seat_of(player)
        assert seat is not None
        return _pack(seat)

    def joined(memo: bytes, account: int) -> Result:
        nonlocal answered
        answered = True
        seat = _unpack(memo)
        assert isinstance(seat, int)
        return Joined(table_id=table_id, seat=seat, table_balance=msg.buy_in, account=account)

    try:
        return await _money(ctx, conn, msg, event, memo, joined)
    except BaseException:
        # Seated all the same (stored, but its answer failed): the player must keep
        # the table's events, their own cards among them.
        seated = host.state is not None and host.state.seat_of(player) is not None
        if not watching and not answered and not seated:
            presence.detach(conn, host)
            if wanted is not None:  # still to be attached by table_ready, as before
                conn.wanted[table_id] = wanted
        raise


async def leave(ctx: Context, conn: Connection, msg: Leave) -> Outcome:
    """Stand up, the table balance going back to the account."""
    return await _balance_reply(ctx, conn, msg, ev.StandUp(conn.player))


async def rebuy(ctx: Context, conn: Connection, msg: Rebuy) -> Outcome:
    """Move chips from the account to the table."""
    return await _balance_reply(ctx, conn, msg, ev.Rebuy(conn.player, msg.amount))


async def cash_out(ctx: Context, conn: Connection, msg: CashOut) -> Outcome:
    """Move chips from the table to the account."""
    return await _balance_reply(ctx, conn, msg, ev.CashOut(conn.player, msg.amount))


async def _balance_reply(
    ctx: Context, conn: Connection, msg: MoneyMessage, event: ev.Event
) -> Replied:
    """Submit a money move whose reply is ``balance``: the account as the commit left
    it, this table's balance after the change, the others' as they are."""
    player = conn.player
    table_id = msg.table_id
    # The other tables' balances as they are now (some may be held by other nodes).
    others = await ctx.presence.table_balances(player, table_id)

    def memo(t: Transition) -> bytes:
        tables = [(b.table_id, b.balance) for b in others]
        index = t.state.seat_of(player)
        seat = t.state.seats[index] if index is not None else None
        if seat is not None:
            tables.append((table_id, seat.balance))
        return _pack(tables)

    def balances(memo: bytes, account: int) -> Result:
        pairs = _unpack(memo)
        assert isinstance(pairs, list)
        tables = tuple(TableBalance(table_id=t, balance=b) for t, b in pairs)
        return Balances(account=account, tables=tables)

    return await _money(ctx, conn, msg, event, memo, balances)


async def _money(
    ctx: Context,
    conn: Connection,
    msg: MoneyMessage,
    event: ev.Event,
    memo: Callable[[Transition], bytes],
    result: Callable[[bytes, int], Result],
) -> Replied:
    """Submit a money request (see the module docstring); ``result`` makes the ``ok``'s
    result from the memo and the account balance."""

    def answer(memo: bytes, account: int) -> None:
        conn.send_bytes(encode(OkReply(rid=msg.rid, result=result(memo, account))))

    request = MoneyRequest(
        player=conn.player,
        session=conn.session.session_id,
        rid=msg.rid,
        # The request itself, but for its rid: a retry sends the same fields.
        fingerprint=encode(replace(msg, rid="-")),
        memo=memo,
        answer=answer,
    )
    host = ctx.presence.host(msg.table_id)
    wallet = ctx.wallet
    if wallet is None or conn.session.guest:
        await host.submit(event, request=request)
        return REPLIED
    # Wallet mode: a buy-in's chips come from the operator's wallet into the account
    # just before the table takes them; whatever the account keeps after the request
    # goes back to the wallet (docs/DESIGN.md, "The operator's wallet").
    hold = None
    if isinstance(msg, Join | Rebuy):
        # The table's own checks first (protocol/PROTOCOL.md, section 10, the order:
        # the account, here the wallet, comes last): a join or rebuy the table refuses
        # asks the wallet nothing. (A state changed meanwhile may still refuse it: the
        # debit then goes back.)
        if host.state is None:
            raise TableError(ErrorCode.UNAVAILABLE, "the table is not ready; try again")
        step(host.state, event, host.clock())
        amount = msg.buy_in if isinstance(msg, Join) else msg.amount
        reason = "buy_in" if isinstance(msg, Join) else "rebuy"
        hold = await wallet.debit(conn.player, request.key, amount, reason)
    taken = False
    try:
        await host.submit(event, request=request)
        taken = True
    finally:
        if hold is not None:
            await wallet.release(hold, taken=taken)
        else:
            wallet.kick(conn.player)
    return REPLIED


def _pack(value: object) -> bytes:
    """A reply's memo (stored with its request) as bytes."""
    packed: bytes = msgpack.packb(value, use_bin_type=True)
    return packed


def _unpack(memo: bytes) -> Any:
    """The inverse of :func:`_pack`."""
    return msgpack.unpackb(memo, raw=False)
