"""The lobby and presence: who is connected, which tables each connection watches, and
the seats' connected/away state kept in line with both.

A connection is attached to a table (subscribed to its events, after a snapshot or the
events it missed) when it watches or joins, when its hello resumes a session at the
table, and when a table is hosted here later (:meth:`Presence.table_ready`). A seated
player's last connection closing makes the seat away (``Disconnect``); their next
hello makes it connected again (``Reconnect``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable

from redis.exceptions import RedisError

from protocol import limits as L
from protocol.codec import encode
from protocol.errors import CloseCode, ErrorCode
from protocol.structs import PayLine, TableInfo, TableList, TableSeq, TableSummary
from server.gateway.connection import Connection
from server.gateway.session import Close
from server.host import TableHost, TableUnavailable, now_ms
from server.rules import bonus as bonus_rules
from server.seating import Seating
from server.table import events as ev
from server.table.errors import TableError
from server.table.state import Phase
from server.table.views import snapshot

log = logging.getLogger(__name__)

HostSeating = Seating[TableHost]
"""The process's index of who sits at which of its hosts (made by the app, shared
with every host)."""

REPLACED = Close(CloseCode.SESSION_REPLACED, "session resumed elsewhere")


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
        """``conn`` resumed its session: any other connection of it is closed (4005)."""
        session_id = conn.session.session_id
        for other in list(self.connections):
            if other is not conn and other.session.session_id == session_id:
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
        self.by_player.setdefault(player, set()).add(conn)
        for table_id, seq in list(conn.wanted.items()):
            host = self.hosts[table_id]
            if host.ready:
                with contextlib.suppress(TableUnavailable):
                    await self.attach(conn, host, seq)
        for host in self.seated_hosts(player):
            if not host.ready:
                continue  # table_ready attaches this connection and says the player is back
            with contextlib.suppress(TableError):
                await self.attach(conn, host, None)  # nothing if attached just above
                await host.submit(ev.Reconnect(player))

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
        for host in self.seated_hosts(player):
            if player in self.by_player:
                return  # back on a new connection meanwhile: not away after all
            with contextlib.suppress(TableError):
                await host.submit(ev.Disconnect(player))

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
                except (RedisError, OSError) as exc:
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
        is not attached yet. Then submits ``Reconnect`` for each seated player with a
        connection here whose seat says away, and ``Disconnect`` for each one without
        one whose seat says connected: the stored state cannot know that their
        connections died with the previous owner, and nobody else will tell it. The
        grace time then runs from that ``Disconnect``, and a round dealt before it, the
        player counted as connected, is not held against them (docs/RULES.md,
        "Disconnection"). An event the table refuses (the seat is gone meanwhile) or a
        store error is logged and skipped; when the table is lost again the rest waits
        for the next call.
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
        # Assumption: a seated player's connections are all in this process (each
        # process serves its own clients' tables). When several processes share tables,
        # "has a connection" must come from all of them, not from by_player alone.
        state = host.state
        players = [seat.player for _, seat in state.occupied()] if state is not None else []
        for player in players:
            state = host.state
            index = state.seat_of(player) if state is not None else None
            seat = state.seats[index] if state is not None and index is not None else None
            if seat is None:
                continue  # stood up meanwhile
            here = player in self.by_player
            if here == seat.connected:
                continue
            # Decided and queued on the table's lock with no await in between: a hello
            # or a close that changes ``here`` after this queues its own event behind.
            event = ev.Reconnect(player) if here else ev.Disconnect(player)
            try:
                await host.submit(event)
            except TableUnavailable:
                return
            except TableError as exc:
                log.info("table %s: %s refused: %s", table_id, type(event).__name__, exc)
            except (RedisError, OSError) as exc:
                log.warning("table %s: %s not stored: %s", table_id, type(event).__name__, exc)

    # --- the lobby ------------------------------------------------------------------

    def list_tables(self) -> TableList:
        """Every table hosted here, in short."""
        summaries = []
        for host in self.hosts.values():
            c = host.config
            state = host.state
            summaries.append(
                TableSummary(
                    table_id=c.table_id,
                    name=c.name[: L.MAX_NAME_LEN],
                    phase=(state.phase if state is not None else Phase.IDLE).value,
                    seats=c.seats,
                    players=len(state.occupied()) if state is not None else 0,
                    watchers=len(host.subscribers),
                    min_bet=c.min_bet,
                    max_bet=c.max_bet,
                    max_bonus=c.bonus_max,
                    buy_in_min=c.min_buy_in,
                    buy_in_max=c.max_buy_in,
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


def table_info(host: TableHost) -> TableInfo:
    """``host``'s table as ``table_info`` describes it."""
    c = host.config
    table = bonus_rules.pay_table(c.rules.bonus_pay_table)
    lines = tuple(
        PayLine(
            bonus_class=bonus_rules.BONUS_CLASS_CODES[cls],  # the wire's ids (<= 32 chars)
            label=bonus_rules.BONUS_CLASS_NAMES[cls][: L.MAX_NAME_LEN],
            pays=odds,
        )
        for cls, odds in table.odds.items()
        if odds
    )
    return TableInfo(
        table_id=c.table_id,
        name=c.name[: L.MAX_NAME_LEN],
        seats=c.seats,
        min_bet=c.min_bet,
        max_bet=c.max_bet,
        bet_unit=c.bet_unit,
        denominations=c.denominations,
        max_bonus=c.bonus_max,
        buy_in_min=c.min_buy_in,
        buy_in_max=c.max_buy_in,
        commission_pct=c.rules.commission_pct,
        foul=c.rules.foul.value,
        betting_ms=c.betting_ms,
        setting_ms=c.setting_ms,
        revealing_ms=c.revealing_ms,
        settling_ms=c.settling_ms,
        grace_ms=c.grace_ms,
        paytable=lines,
        rules_version=1,
        min_bonus=c.bonus_min,
    )
