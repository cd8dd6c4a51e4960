"""The gateway's way to the tables held by other nodes: the cluster's ``Remote``
(``server/gateway/remote.py``).

A request for a table held elsewhere goes to its holder as the client sent it, with
who sent it (player, session, name), and the holder's own handlers answer it: a money
request is applied at most once per (session, rid) whichever node it came through
(protocol/PROTOCOL.md, section 3). The events the request causes may reach this node
before its reply: the connection's events are held back until the reply is sent, so
the ``ok`` comes before them as on one node. A connection is attached to a table held
elsewhere by listening to the table's events first, then asking its holder for a
snapshot (or the events missed), which only the holder may make: its state holds cards
this node may not see.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Mapping, Sequence

from protocol import limits as L
from protocol.codec import decode_server, encode
from protocol.errors import ErrorCode
from protocol.messages import (
    Bet,
    CashOut,
    Clear,
    ClientMessage,
    ErrorReply,
    HouseWay,
    Join,
    Leave,
    OkReply,
    Rebet,
    Rebuy,
    SetHand,
    SitOut,
    Unwatch,
    Watch,
)
from server.cluster import wire
from server.cluster.feed import Feeds
from server.cluster.forward import Forwarder, NoHolder
from server.cluster.lobby import Lobby
from server.gateway.connection import Connection
from server.gateway.presence import Presence, Settled
from server.host import TableHost
from server.store import ClusterStore, StoreUnavailable
from server.table.errors import TableError
from server.table.state import Phase
from server.tasks import Retries, cancel_and_wait

log = logging.getLogger(__name__)

CALLS: frozenset[type[ClientMessage]] = frozenset(
    {Join, Leave, Rebuy, CashOut, Bet, Rebet, Clear, SitOut, SetHand, HouseWay}
)
"""The requests answered by a table's holder (the others need no table state)."""


def _refused(frames: Sequence[bytes]) -> bool:
    """Whether the holder's answer is an ``error``."""
    return any(isinstance(decode_server(f), ErrorReply) for f in frames)


class Router:
    """The other nodes, as the gateway sees them (see the module docstring)."""

    def __init__(
        self,
        store: ClusterStore,
        instance: str,
        hosts: Mapping[str, TableHost],
        presence: Presence,
        feeds: Feeds,
        forwarder: Forwarder,
        lobby: Lobby,
        live: Callable[[], Sequence[str]],
    ) -> None:
        self.store = store
        self.instance = instance
        self.hosts = hosts
        self.presence = presence
        self.feeds = feeds
        self.forwarder = forwarder
        self._lobby = lobby
        self.live = live
        self._tasks: set[asyncio.Task[None]] = set()
        self._retries = Retries()

    # --- requests --------------------------------------------------------------------

    async def route(self, conn: Connection, message: ClientMessage) -> bool:
        """Answer ``message`` through the holder of its table if that is another node."""
        table_id = getattr(message, "table_id", None)
        host = self.hosts.get(table_id) if isinstance(table_id, str) else None
        if host is None or host.ready:
            return False
        assert table_id is not None
        if isinstance(message, Watch):
            if len(conn.tables) >= L.MAX_TABLES_PER_SESSION and table_id not in conn.tables:
                raise TableError(ErrorCode.BAD_MESSAGE, "watching too many tables")
            first = encode(OkReply(rid=message.rid))
            await self._attach(conn, table_id, None, first=first, again=True, wait=True)
            return True
        if isinstance(message, Unwatch):
            conn.wanted.pop(table_id, None)
            host.unsubscribe(conn)
            conn.tables.discard(table_id)
            conn.send_bytes(encode(OkReply(rid=message.rid)))
            return True
        if type(message) not in CALLS:
            return False
        await self._call(conn, host, message)
        return True

    async def _call(self, conn: Connection, host: TableHost, message: ClientMessage) -> None:
        table_id = host.table_id
        joining = isinstance(message, Join) and table_id not in conn.tables
        if joining:
            # As on one node: the snapshot comes before the join's ok and seat event.
            await self._attach(conn, table_id, None, wait=True)
        session = conn.session
        frame = encode(message)
        fan = host.subscribers
        held = fan.hold(conn)
        frames: tuple[bytes, ...] = ()
        try:
            reply = await self.forwarder.ask(
                table_id,
                lambda req: wire.call(
                    req, self.instance, conn.player, session.session_id, session.name, frame
                ),
            )
            frames = reply.frames
        except BaseException:
            if joining:
                self._detach(conn, host)
            raise
        finally:
            if held:
                fan.release(conn, frames)
            else:
                for f in frames:
                    conn.send_bytes(f)
        if joining and _refused(frames):
            self._detach(conn, host)

    def _detach(self, conn: Connection, host: TableHost) -> None:
        host.unsubscribe(conn)
        conn.tables.discard(host.table_id)

    async def _attach(
        self,
        conn: Connection,
        table_id: str,
        last_seq: int | None,
        *,
        first: bytes | None = None,
        again: bool = False,
        wait: bool = False,
    ) -> None:
        host = self.hosts[table_id]
        fan = host.subscribers
        if table_id in conn.tables and conn in fan and not again:
            return
        await self.feeds.relay_table(table_id)
        # Held from now: whatever comes before the holder's answer waits behind it.
        fan.add(conn, 0, held=True)
        conn.tables.add(table_id)
        try:
            reply = await self.forwarder.ask(
                table_id,
                lambda req: wire.attach(req, self.instance, conn.player, last_seq),
                wait=wait,
            )
        except BaseException:
            self._detach(conn, host)
            raise
        if conn not in self.presence.connections:
            self._detach(conn, host)  # closed meanwhile
            return
        fan.release(conn, (first, *reply.frames) if first else reply.frames, upto=reply.seq)
        conn.wanted.pop(table_id, None)

    # --- presence --------------------------------------------------------------------

    async def arrived(self, conn: Connection) -> None:
        """``conn`` is its player's first connection here."""
        player = conn.player
        await self.feeds.listen_player(player)
        await self.store.connected(player, self.instance, True)

    def resumed(self, session_id: str) -> None:
        """A connection here resumed ``session_id``: the other nodes close theirs."""
        future = self.store.publish(
            self.store.keys.nodes_channel(), wire.resumed(self.instance, session_id)
        )
        future.add_done_callback(lambda f: f.cancelled() or f.exception())

    def heard_resumed(self, data: bytes) -> None:
        """Another node's connection resumed a session: close this node's of it."""
        sender, session_id = wire.read_resumed(data)
        if sender != self.instance:
            self.presence.replaced(session_id)

    async def left(self, player: str) -> None:
        """``player``'s last connection here closed. A store error saying so is logged
        and tried again in the background, the seats held elsewhere then settled: the
        holders would count the player connected here meanwhile."""
        try:
            await self.store.connected(player, self.instance, False)
        except StoreUnavailable as exc:
            log.warning("player %s: not said gone from here, trying again: %s", player, exc)
            self._retries.start(("left", player), lambda: self._left_again(player))
        await self.feeds.forget_player(player)

    async def _left_again(self, player: str) -> bool:
        if player in self.presence.by_player:
            return True  # back meanwhile: their arrival said where they are
        try:
            await self.store.connected(player, self.instance, False)
            table_ids = await self.seated_elsewhere(player)
        except StoreUnavailable as exc:
            log.info("player %s: still not said gone from here: %s", player, exc)
            return False
        for table_id in table_ids:
            await self.settle(table_id, player)
        return True

    async def connected_elsewhere(self, player: str) -> bool:
        """Whether another live node says ``player`` has a connection there."""
        live = set(self.live())
        return any(i != self.instance and i in live for i in await self.store.connected_on(player))

    async def attach(self, conn: Connection, table_id: str, last_seq: int | None) -> bool:
        """Attach ``conn`` to ``table_id``, held elsewhere; False if nobody holds it now."""
        try:
            await self._attach(conn, table_id, last_seq)
        except NoHolder:
            return False
        return True

    async def seated_elsewhere(self, player: str) -> list[str]:
        """The tables held elsewhere where ``player`` sits (as their holders say)."""
        return [
            t
            for t in await self.store.seated_tables(player)
            if t in self.hosts and not self.hosts[t].ready
        ]

    async def settle(self, table_id: str, player: str) -> None:
        """Have ``table_id``'s holder settle ``player``'s seat; nothing more if no node
        holds it (its next holder settles it on taking it). A store error, or a holder
        that does not answer, is logged and the holder asked again in the background
        until one answers or none holds the table (the holder itself tries again a
        settling that failed there: ``Presence.settle``)."""
        if not await self._ask_settle(table_id, player):
            self._retries.start(
                ("settle", table_id, player), lambda: self._ask_settle(table_id, player)
            )

    async def _ask_settle(self, table_id: str, player: str) -> bool:
        """Ask ``table_id``'s holder to settle ``player``'s seat: whether it is done with."""
        try:
            await self.forwarder.ask(
                table_id, lambda req: wire.presence(req, self.instance, player), wait=False
            )
        except NoHolder:
            return True
        except (StoreUnavailable, TableError) as exc:
            log.warning("table %s: seat of %s not settled, asking again: %s", table_id, player, exc)
            return False
        return True

    async def stop(self) -> None:
        """Stop the settling in progress, and the retries."""
        await cancel_and_wait(*self._tasks)
        await self._retries.stop()

    def resettle(self) -> None:
        """This node was taken for dead meanwhile: say again where its players are,
        and have their seats settled."""
        task = asyncio.create_task(self._resettle(), name="resettle")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _resettle(self) -> None:
        for player in list(self.presence.by_player):
            try:
                done = await self._resettle_player(player)
            except Exception:
                log.exception("player %s not settled", player)
                continue
            if not done:
                again = functools.partial(self._resettle_player, player)
                self._retries.start(("resettle", player), again)

    async def _resettle_player(self, player: str) -> bool:
        """Say again that ``player`` is connected here and have their seats settled:
        whether that is done with (False: a store error, to try again)."""
        if player not in self.presence.by_player:
            return True  # gone meanwhile: left() said so
        try:
            await self.store.connected(player, self.instance, True)
            table_ids = await self.seated_elsewhere(player)
        except StoreUnavailable as exc:
            log.warning("player %s not said connected here, trying again: %s", player, exc)
            return False
        for host in self.presence.seated_hosts(player):
            await self.presence.settle(host, player)  # tried again there if need be
        for table_id in table_ids:
            await self.settle(table_id, player)
        return True

    def nodes_changed(self, *, came: bool, gone: bool) -> None:
        """Other nodes count live from now (``came``: registered, or back) or no longer
        (``gone``: dead, or drained): at every table held here, have the seats of
        players with no connection here that may change settled, the away ones if
        some came, the connected ones if some went (docs/DESIGN.md, "Several nodes on
        one Redis"). A table that stays where it is has no taking over to do it, a
        taking over done while a dead node still counted as live counted its players
        connected, and a node back may have asked for its players' seats before it
        counted here."""
        task = asyncio.create_task(self._settle_held(came, gone), name="nodes-changed")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _settle_held(self, came: bool, gone: bool) -> None:
        for host in list(self.hosts.values()):
            state = host.state
            if not host.ready or state is None:
                continue
            players = [
                seat.player
                for _, seat in state.occupied()
                if (gone if seat.connected else came) and seat.player not in self.presence.by_player
            ]
            for player in players:
                try:
                    if await self.presence.settle(host, player) is Settled.NOT_HERE:
                        break  # no longer held here: its next holder settles it
                except Exception:
                    log.exception("table %s: player %s not settled", host.table_id, player)

    async def held_elsewhere(self, table_id: str) -> None:
        """Another node holds ``table_id`` now: attach the connections waiting for it."""
        await self.presence.held_elsewhere(table_id)

    # --- the lobby and balances ------------------------------------------------------

    async def table_balances(self, player: str, table_ids: Sequence[str]) -> dict[str, int]:
        """``player``'s balance at each of ``table_ids`` where the holder says they sit."""
        return await self._lobby.balances(player, table_ids)

    async def lobby(self, table_ids: Sequence[str]) -> dict[str, tuple[Phase, int]]:
        """Phase and players of each of ``table_ids``, as their holders last said."""
        await self._lobby.refresh(list(self.hosts))
        out = {}
        for table_id in table_ids:
            found = self._lobby.summary(table_id)
            if found is not None:
                out[table_id] = (found.phase, len(found.balances))
        return out

    def watchers_elsewhere(self, table_id: str) -> int:
        """Connections watching ``table_id`` on the other live nodes, as last read."""
        return self._lobby.watchers(table_id)
