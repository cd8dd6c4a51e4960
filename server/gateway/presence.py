"""The lobby and presence: who is connected, which tables each connection watches, and
the seats' connected/away state kept in line with both.

A connection is attached to a table (subscribed to its events, after a snapshot or the
events it missed) when it watches or joins, when its hello resumes a session at the
table, and when a table is hosted here later (:meth:`Presence.table_ready`). A seated
player's last connection closing makes the seat away (``Disconnect``); their next
hello makes it connected again (``Reconnect``).

With other nodes on the same Redis (:attr:`Presence.remote`), a table held elsewhere
is attached through them, and a seat counts as connected while its player has a
connection on any live node: the seat is changed by whoever holds the table, from what
every node says (:meth:`Presence.settle`).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import functools
import logging
from collections.abc import Iterable

from protocol import limits as L
from protocol.codec import encode
from protocol.errors import CloseCode, ErrorCode
from protocol.structs import (
    TableBalance,
    TableInfo,
    TableList,
    TableSeq,
    TableSummary,
)
from server.gateway.connection import Connection
from server.gateway.remote import Remote
from server.gateway.session import Close
from server.gateway.table_info import table_info
from server.host import TableHost, TableNotWritable, TableUnavailable, now_ms
from server.seating import Seating
from server.store import StoreUnavailable
from server.table import events as ev
from server.table.errors import TableError
from server.table.state import Phase
from server.table.views import snapshot
from server.tasks import Retries

log = logging.getLogger(__name__)

HostSeating = Seating[TableHost]
"""The process's index of who sits at which of its hosts (made by the app, shared
with every host)."""

REPLACED = Close(CloseCode.SESSION_REPLACED, "session resumed elsewhere")


class Settled(enum.Enum):
    """What :meth:`Presence.settle` did."""

    DONE = "done"
    """The seat is in line with where its player is (or is gone, or the table refused
    the change because the seat changed meanwhile): nothing more to do."""
    NOT_HERE = "not here"
    """The table is not (or no longer) held here: its next holder settles it when it
    takes the table (:meth:`Presence.table_ready`)."""
    RETRYING = "retrying"
    """A store error: the settling is tried again in the background until it is
    ``DONE`` or ``NOT_HERE``."""


class NotSettled(Exception):
    """A settling failed on a store error: ``(table_id, player, error)``."""


def check_table_limit(conn: Connection, table_id: str) -> None:
    """Refuse a table beyond the tables a session may watch (protocol/PROTOCOL.md,
    section 12: ``too_large``)."""
    if len(conn.tables) >= L.MAX_TABLES_PER_SESSION and table_id not in conn.tables:
        raise TableError(
            ErrorCode.TOO_LARGE,
            f"a session watches at most {L.MAX_TABLES_PER_SESSION} tables: unwatch one first",
        )


class Presence:
    """Who is connected to this process, and where; see the module docstring."""

    def __init__(self, hosts: dict[str, TableHost], seating: HostSeating) -> None:
        self.hosts = hosts
        self.seating = seating
        self.connections: set[Connection] = set()
        self.by_player: dict[str, set[Connection]] = {}
        # Connections whose hello asked for tables not hosted here yet (Connection.wanted).
        self._wanting: set[Connection] = set()
        self.remote: Remote | None = None
        """The other nodes on the same Redis (None: this process is alone)."""
        # One settling of seats at a time per table (see settle()).
        self._settling: dict[str, asyncio.Lock] = {}
        self.retries = Retries()
        """The settlings that failed on a store error, tried again until done."""

    async def stop(self) -> None:
        """Stop the settlings being tried again."""
        await self.retries.stop()

    def host(self, table_id: str) -> TableHost:
        """The host of ``table_id``, ready for requests (else a ``TableError``)."""
        host = self.hosts.get(table_id)
        if host is None:
            raise TableError(ErrorCode.NO_SUCH_TABLE, f"there is no table {table_id!r}")
        if not host.ready:
            raise TableError(ErrorCode.UNAVAILABLE, f"table {table_id!r} is starting; retry")
        return host

    def seated_hosts(self, player: str) -> list[TableHost]:
        """The hosts seating ``player`` (ready or not)."""
        return self.seating.hosts_of(player)

    # --- arrivals and departures ----------------------------------------------------

    def resumed_here(self, conn: Connection) -> None:
        """``conn`` resumed its session: any other connection of it is closed (4005),
        here and on the other nodes."""
        self.replaced(conn.session.session_id, but=conn)
        if self.remote is not None:
            self.remote.resumed(conn.session.session_id)

    def replaced(self, session_id: str, but: Connection | None = None) -> None:
        """Close (4005) this node's connections of ``session_id``, except ``but``."""
        for other in list(self.connections):
            if other is not but and other.session.session_id == session_id:
                other.close_soon(REPLACED)

    async def arrived(self, conn: Connection, last_seq: Iterable[TableSeq]) -> None:
        """``conn`` was welcomed: attach it to the tables it resumes (``last_seq``, from
        a resumed session's hello) and to those where its player is seated, and say the
        player is back there.

        A table not hosted here yet (this process is starting, or taking it over from a
        dead one) is remembered, and :meth:`table_ready` attaches the connection once
        it is; no await between this and joining :attr:`by_player`, so that
        :meth:`table_ready` sees both or neither.
        """
        player = conn.player
        conn.wanted = {e.table_id: e.seq for e in last_seq if e.table_id in self.hosts}
        if conn.wanted:
            self._wanting.add(conn)
        first = player not in self.by_player
        self.by_player.setdefault(player, set()).add(conn)
        if first and self.remote is not None:
            # Said before anything is asked of the player's tables: a holder that
            # settles their seat from now on counts this connection.
            await self.remote.arrived(conn)
        for table_id, seq in list(conn.wanted.items()):
            await self._attach_wanted(conn, table_id, seq)
        for host in self.seated_hosts(player):
            if not host.ready:
                continue  # table_ready attaches this connection and says the player is back
            with contextlib.suppress(TableError):
                await self.attach(conn, host, None)  # nothing if attached just above
                await host.submit(ev.Reconnect(player))
        if self.remote is not None:
            for table_id in await self.remote.seated_elsewhere(player):
                with contextlib.suppress(TableError):
                    if table_id not in conn.tables:
                        await self.remote.attach(conn, table_id, None)
                    await self.remote.settle(table_id, player)

    async def _attach_wanted(self, conn: Connection, table_id: str, seq: int) -> None:
        """Attach ``conn`` to ``table_id``, which its hello asked for, if some node
        holds the table (else it waits in ``wanted``)."""
        host = self.hosts[table_id]
        if host.ready:
            with contextlib.suppress(TableUnavailable):
                await self.attach(conn, host, seq)
        elif self.remote is not None:
            with contextlib.suppress(TableError):
                await self.remote.attach(conn, table_id, seq)

    def waiting_for(self, table_id: str) -> list[Connection]:
        """The connections whose hello asked for ``table_id`` and wait for it."""
        return [c for c in self._wanting if table_id in c.wanted]

    async def held_elsewhere(self, table_id: str) -> None:
        """Another node holds ``table_id`` now: attach the connections waiting for it."""
        for conn in self.waiting_for(table_id):
            if table_id not in conn.tables and conn in self.connections:
                await self._attach_wanted(conn, table_id, conn.wanted[table_id])

    async def departed(self, conn: Connection) -> None:
        """``conn`` closed: detach it; the player's last connection makes their seats away."""
        self.connections.discard(conn)
        self._wanting.discard(conn)
        for table_id in list(conn.tables):
            host = self.hosts.get(table_id)
            if host is not None:
                host.unsubscribe(conn)
        player = conn.player_id
        if player is None:
            return
        others = self.by_player.get(player, set())
        others.discard(conn)
        if others:
            return
        self.by_player.pop(player, None)
        if self.remote is not None:
            await self.remote.left(player)
        for host in self.seated_hosts(player):
            if player in self.by_player:
                return  # back on a new connection meanwhile: not away after all
            await self.settle(host, player)
        if self.remote is not None and not await self._settle_elsewhere(player):
            # Redis away: tried again in the background, until it answers.
            again = functools.partial(self._settle_elsewhere, player)
            self.retries.start(("elsewhere", player), again)

    async def _settle_elsewhere(self, player: str) -> bool:
        """Have the seats ``player`` holds at tables held elsewhere settled (they are
        away): False if where they sit could not be read (a store error, logged)."""
        assert self.remote is not None
        if player in self.by_player:
            return True  # back on a new connection meanwhile: not away after all
        try:
            table_ids = await self.remote.seated_elsewhere(player)
        except StoreUnavailable as exc:
            log.warning("player %s: seats elsewhere not read, trying again: %s", player, exc)
            return False
        for table_id in table_ids:
            if player in self.by_player:
                return True
            await self.remote.settle(table_id, player)
        return True

    # --- attaching ------------------------------------------------------------------

    def detach(self, conn: Connection, host: TableHost) -> None:
        """Stop sending ``host``'s events to ``conn``."""
        host.unsubscribe(conn)
        conn.tables.discard(host.table_id)

    async def attach(
        self,
        conn: Connection,
        host: TableHost,
        last_seq: int | None,
        *,
        again: bool = False,
        first: bytes | None = None,
    ) -> None:
        """Subscribe ``conn`` to the table and bring it up to date: ``first`` (a
        request's ``ok``) if given, then the events it missed after ``last_seq``, else a
        snapshot.

        A connection already attached is left as it is, unless ``again`` (a new
        ``watch`` gets a new snapshot), so that two paths attaching one connection at
        once (its hello and :meth:`table_ready`) never send it the events twice. A
        connection closed meanwhile is not attached. Raises :class:`TableUnavailable`
        (and sends nothing) when the table is not hosted here.
        """
        table_id = host.table_id
        async with host.lock:
            if not host.ready or host.state is None:
                raise TableUnavailable(table_id)
            if table_id in conn.tables and not again:
                return
            host.unsubscribe(conn)
            frames = None
            if last_seq is not None:
                try:
                    frames = await host.missed(conn, last_seq)
                except StoreUnavailable as exc:
                    # The replay buffer is out of reach: a snapshot (from memory) is
                    # always a valid answer, and the connection carries on.
                    log.warning("table %s: events since %d unread (%s)", table_id, last_seq, exc)
            if frames is None:
                frames = [encode(snapshot(host.state, conn.player_id, now_ms()))]
            # After the last await: a connection that closed while we waited has been
            # through departed() already, and subscribing it now would leak it.
            if conn not in self.connections:
                return
            if first is not None:
                conn.send_bytes(first)
            for frame in frames:
                conn.send_bytes(frame)
            host.subscribe(conn)
            conn.tables.add(table_id)
            conn.wanted.pop(table_id, None)

    async def table_ready(self, host: TableHost) -> None:
        """The hosts' on-ready hook: bring a table just taken (at start, after a reload,
        or over from a dead process) in line with the connections of this process.

        First attaches every connection (past its hello) of a player seated there, and
        every one that asked for the table in its hello while it was not hosted, that
        is not attached yet. Then settles each seat (:meth:`settle`): ``Reconnect`` for
        a seated player with a connection on a live node whose seat says away, and
        ``Disconnect`` for one without whose seat says connected: the stored state
        cannot know that their connections died with the previous owner, and nobody
        else will tell it. The grace time then runs from that ``Disconnect``, and a
        round dealt before it, the player counted as connected, is not held against
        them (docs/RULES.md, "Disconnection"). When the table is lost again the rest
        waits for the next call.
        """
        # Who sits where is asked of the presence's index, which the hosts keep.
        assert host.seating is self.seating, "a host must share the gateway's seating"
        table_id = host.table_id
        state = host.state
        seated = [seat.player for _, seat in state.occupied()] if state is not None else []
        # From the table's seats and the few connections still waiting, not from every
        # connection: with 10,000 of them and 1,667 tables taken at once, that counts.
        candidates = [c for p in seated for c in self.by_player.get(p, ())]
        candidates += [c for c in self._wanting if table_id in c.wanted]
        for conn in dict.fromkeys(candidates):
            if table_id in conn.tables:
                continue
            try:
                await self.attach(conn, host, conn.wanted.get(table_id))
            except TableUnavailable:
                return
        state = host.state
        players = [seat.player for _, seat in state.occupied()] if state is not None else []
        for player in players:
            if await self.settle(host, player) is Settled.NOT_HERE:
                return

    async def settle(self, host: TableHost, player: str) -> Settled:
        """Bring ``player``'s seat at ``host``'s table in line with where they are
        connected: ``Reconnect`` if they have a connection on some live node and the
        seat says away, ``Disconnect`` if they have none and it says connected.

        One settling at a time per table, each reading where the player is connected
        when its turn comes: a node says a player arrived before it asks for their
        seats to be settled, so the last settling always sees the latest arrival. An
        event the table refuses (the seat is gone meanwhile) is logged: the seat needs
        nothing more. A store error (reading where the player is, or storing the event)
        is logged, and the settling is tried again in the background, with a backoff,
        until it is done, the table is no longer held here or the seat needs nothing
        (:attr:`retries`): nobody else would, and a seat left connected keeps a player
        with no connection anywhere in play.
        """
        try:
            return await self._settle(host, player)
        except NotSettled as exc:
            log.warning("table %s: seat of %s not settled, trying again: %s", *exc.args)
        self.retries.start(("settle", host.table_id, player), lambda: self._settled(host, player))
        return Settled.RETRYING

    async def _settled(self, host: TableHost, player: str) -> bool:
        """One more try of a settling that failed: whether it needs no other one."""
        try:
            await self._settle(host, player)
        except NotSettled as exc:
            log.info("table %s: seat of %s still not settled: %s", *exc.args)
            return False
        return True

    async def _settle(self, host: TableHost, player: str) -> Settled:
        """:meth:`settle` once: ``DONE`` or ``NOT_HERE``; :class:`NotSettled` on a store
        error."""
        table_id = host.table_id
        lock = self._settling.setdefault(table_id, asyncio.Lock())
        async with lock:
            state = host.state
            if not host.ready or state is None:
                return Settled.NOT_HERE
            index = state.seat_of(player)
            seat = state.seats[index] if index is not None else None
            if seat is None:
                return Settled.DONE  # stood up meanwhile
            try:
                here = await self.connected(player)
            except StoreUnavailable as exc:
                raise NotSettled(table_id, player, exc) from exc
            state = host.state
            index = state.seat_of(player) if state is not None else None
            seat = state.seats[index] if state is not None and index is not None else None
            if seat is None or here == seat.connected:
                return Settled.DONE
            event = ev.Reconnect(player) if here else ev.Disconnect(player)
            try:
                await host.submit(event)
            except TableUnavailable:
                return Settled.NOT_HERE
            except (StoreUnavailable, TableNotWritable) as exc:
                raise NotSettled(table_id, player, exc) from exc
            except TableError as exc:
                if exc.code is ErrorCode.INTERNAL:
                    # Failed with a commit of other events (or a fault): not refused.
                    raise NotSettled(table_id, player, exc) from exc
                log.info("table %s: %s refused: %s", table_id, type(event).__name__, exc)
            return Settled.DONE

    async def connected(self, player: str) -> bool:
        """Whether ``player`` has a connection here or on another live node."""
        if player in self.by_player:
            return True
        return self.remote is not None and await self.remote.connected_elsewhere(player)

    # --- the lobby ------------------------------------------------------------------

    async def table_balances(self, player: str, but: str | None = None) -> list[TableBalance]:
        """``player``'s balance at each table where they are seated (except ``but``):
        from the tables held here, and from the other nodes for the rest."""
        tables = {}
        for host in self.seated_hosts(player):
            state = host.state
            if not host.ready or state is None or host.table_id == but:
                continue
            index = state.seat_of(player)
            seat = state.seats[index] if index is not None else None
            if seat is not None:
                tables[host.table_id] = seat.balance
        if self.remote is not None:
            elsewhere = [t for t in await self.remote.seated_elsewhere(player) if t != but]
            tables.update(await self.remote.table_balances(player, elsewhere))
        return [TableBalance(table_id=t, balance=b) for t, b in tables.items()]

    async def list_tables(self) -> TableList:
        """Every table, in short (those held elsewhere as their holders last said)."""
        summaries = []
        elsewhere: dict[str, tuple[Phase, int]] = {}
        if self.remote is not None:
            away = [t for t, h in self.hosts.items() if not h.ready]
            elsewhere = await self.remote.lobby(away)
        for host in self.hosts.values():
            c = host.config
            state = host.state
            phase = state.phase if state is not None else Phase.IDLE
            players = len(state.occupied()) if state is not None else 0
            watchers = len(host.subscribers)
            if not host.ready and c.table_id in elsewhere:
                phase, players = elsewhere[c.table_id]
            if self.remote is not None:
                watchers += self.remote.watchers_elsewhere(c.table_id)
            summaries.append(
                TableSummary(
                    table_id=c.table_id,
                    name=c.name[: L.MAX_NAME_LEN],
                    phase=phase.value,
                    seats=c.seats,
                    players=players,
                    watchers=watchers,
                    min_bet=c.min_bet,
                    max_bet=c.max_bet,
                    max_bonus=c.bonus_max,
                    buy_in_min=c.min_buy_in,
                    buy_in_max=c.max_buy_in,
                    closing=host.closing,
                )
            )
        return TableList(tables=tuple(summaries))

    def table_info(self, table_id: str) -> TableInfo:
        """A table's rules, options and bonus pay table, told to every client who asks
        (docs/RULES.md, "Information"); hosted here, ready or not."""
        host = self.hosts.get(table_id)
        if host is None:
            raise TableError(ErrorCode.NO_SUCH_TABLE, f"there is no table {table_id!r}")
        return table_info(host)
