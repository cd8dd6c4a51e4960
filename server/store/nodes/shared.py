"""What several nodes on one Redis keep there besides the tables: who is alive, where
each player is connected and seated, what the lobby shows of each table, and the
messages they publish to each other (docs/DESIGN.md, "Several nodes on one Redis").

Node registrations are timed by Redis's clock (``NODES_BEAT``), so that the nodes'
own clocks need not agree on who is alive. The seats and summaries are hints that a
table's holder keeps after each stored change (``PUBLISH_COMMIT``): the table's own
state, in its holder, stays the truth.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import redis.asyncio

from server.store.client.batching import ScriptBatcher
from server.store.client.replies import as_bytes, as_int, as_str
from server.store.errors import require_bytes_client, store_call, translated
from server.store.keys import DEFAULT_KEYS, Keys
from server.store.lua.nodes import (
    EVENTS_FOR,
    FORMATS_SWITCH,
    NODES_BEAT,
    PUBLISH_COMMIT,
    PUBLISH_ONE,
)
from server.store.nodes.formats import READS, FormatsAhead, read_by_all

PRESENCE_TTL_MS = 24 * 3600 * 1000
"""How long a player's entry of where they are connected outlives its last change (the
entries of a node that died are ignored at once, and deleted with the player's next
change or this)."""


@dataclass(frozen=True, slots=True)
class LiveNodes:
    """The live node instances and when each one's registration runs out, by Redis's
    clock (``now``), in epoch milliseconds."""

    now: int
    expires: Mapping[str, int]
    refused: bool = False
    """The registration was refused: another instance took the node's name."""
    set_aside: str | None = None
    """The instance that held the node's name before this registration took it (an
    earlier life of the node), unregistered by it; None if there was none."""

    @property
    def instances(self) -> list[str]:
        """The live instances, sorted."""
        return sorted(self.expires)


@dataclass(frozen=True, slots=True)
class Replay:
    """A table's events after some seq, for some players: ``(seq, public frame,
    {player: private frame})`` each."""

    events: list[tuple[int, bytes, dict[str, bytes]]]


class ClusterStore:
    """The cluster's keys and channels in one Redis (a bytes client). Its calls, and
    the futures of its publications, raise
    :class:`~server.store.errors.StoreUnavailable` where Redis failed."""

    def __init__(
        self,
        client: redis.asyncio.Redis,
        keys: Keys = DEFAULT_KEYS,
        beat_client: redis.asyncio.Redis | None = None,
    ) -> None:
        """``beat_client``: a client of the same Redis with connections of its own for
        the heartbeat, which must not wait for a connection of a busy pool (the
        default: ``client``)."""
        require_bytes_client(client)
        self.redis = client
        self.keys = keys
        self._beat = (beat_client or client).register_script(NODES_BEAT)
        self._publish_commit = client.register_script(PUBLISH_COMMIT)
        self._publish_one = client.register_script(PUBLISH_ONE)
        self._events_for = client.register_script(EVENTS_FOR)
        self._formats_switch = client.register_script(FORMATS_SWITCH)
        self.formats_on: frozenset[str] = frozenset()
        """The stored formats switched on, as last read
        (:mod:`server.store.nodes.formats`): a writer of a named format writes it only
        once it is here."""
        # Publications share round trips, and keep their order: one pipeline in flight.
        self._batch = ScriptBatcher(client)
        self._unsent: set[asyncio.Future[Any]] = set()  # publications not answered yet

    # --- nodes -----------------------------------------------------------------------

    @store_call
    async def beat(
        self,
        instance: str,
        ttl_ms: int,
        info: Mapping[str, str],
        *,
        name: str | None = None,
        take: bool = False,
    ) -> LiveNodes:
        """Register ``instance`` (or renew it) for ``ttl_ms`` with ``info``; the live nodes.

        With ``name``, one instance at a time holds the node's name: ``take`` (the
        first registration of a process) takes it, unregistering the instance that
        held it (its earlier life: :attr:`LiveNodes.set_aside`); a renewal is refused
        (:attr:`LiveNodes.refused`, nothing written) once another instance took it.
        """
        mode = "" if name is None else "take" if take else "renew"
        args: list[Any] = [instance, ttl_ms, mode]
        for field_name, value in info.items():
            args += [field_name, value]
        keys = [self.keys.nodes(), self.keys.node(instance), self.keys.node_name(name or "-")]
        # A call of its own, queued behind no publication: a registration that runs out
        # while the node is alive has it taken for dead.
        return _live(await self._beat(keys=keys, args=args))

    @store_call
    async def live_nodes(self) -> LiveNodes:
        """The live nodes (and forget the ones whose registration ran out)."""
        keys = [self.keys.nodes(), self.keys.node("-"), self.keys.node_name("-")]
        return _live(await self._beat(keys=keys, args=["", 0, ""]))

    @store_call
    async def leave(self, instance: str) -> None:
        """Unregister ``instance`` at once (it is stopping)."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zrem(self.keys.nodes(), instance)
            pipe.delete(self.keys.node(instance))
            await pipe.execute()

    @store_call
    async def node_info(self, instances: Sequence[str]) -> dict[str, dict[str, str]]:
        """What each instance said of itself at its last heartbeat."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for instance in instances:
                pipe.hgetall(self.keys.node(instance))
            replies = await pipe.execute()
        return {
            i: {as_str(k): as_str(v) for k, v in fields.items()}
            for i, fields in zip(instances, replies, strict=True)
        }

    # --- stored formats (server/store/nodes/formats.py) -------------------------------

    @store_call
    async def check_formats(self, reads: frozenset[str] = READS) -> frozenset[str]:
        """The formats switched on (kept in :attr:`formats_on`); raises
        :class:`~server.store.nodes.formats.FormatsAhead` if one is not in ``reads``."""
        on = frozenset(as_str(f) for f in await self.redis.smembers(self.keys.formats()))
        if on - reads:
            raise FormatsAhead(on - reads)
        self.formats_on = on
        return on

    @store_call
    async def switch_formats(self, wanted: frozenset[str] = READS) -> frozenset[str]:
        """Switch on each of ``wanted`` that every live node reads (as each announced
        in its registration), atomically with the live nodes read; the formats on
        (kept in :attr:`formats_on`). A node joining or leaving between the reads and
        the switch leaves it to the next call."""
        if wanted <= self.formats_on:
            return self.formats_on
        live = (await self.live_nodes()).instances
        infos = await self.node_info(live)
        candidates = sorted((wanted & read_by_all(infos.values())) - self.formats_on)
        keys = [self.keys.nodes(), self.keys.formats(), *(self.keys.node(i) for i in live)]
        reply = await self._formats_switch(keys=keys, args=[len(live), *live, *candidates])
        on = frozenset(as_str(f) for f in reply[1:])
        self.formats_on = on
        return on

    # --- publishing ------------------------------------------------------------------

    def publish(self, channel: str, message: bytes) -> asyncio.Future[Any]:
        """Publish ``message`` (in order with this store's other publications); the
        future's result is how many subscribers got it."""
        return self._track(self._batch.call(self._publish_one, [], [channel, message]))

    def publish_commit(
        self,
        table_id: str,
        summary: bytes | None,
        sat: Sequence[str],
        stood: Sequence[str],
        messages: Sequence[tuple[str, bytes]],
    ) -> asyncio.Future[Any]:
        """After a stored change of ``table_id``: write its ``summary`` (None: the same
        as before), add it to the seats of the players in ``sat``, remove it from
        those in ``stood``, and publish ``messages`` (channel, message) in order."""
        k = self.keys
        keys = [
            k.table_summary(table_id),
            *(k.player_seats(p) for p in sat),
            *(k.player_seats(p) for p in stood),
        ]
        args: list[Any] = [table_id, summary or b"", len(sat), len(stood)]
        for channel, message in messages:
            args += [channel, message]
        return self._track(self._batch.call(self._publish_commit, keys, args))

    def _track(self, future: asyncio.Future[Any]) -> asyncio.Future[Any]:
        self._unsent.add(future)
        future.add_done_callback(self._unsent.discard)
        return _translated(future)

    @store_call
    async def sent(self, seconds: float = 5.0) -> None:
        """Wait (up to ``seconds``) until every publication made so far is answered:
        before the client is closed, or one still queued would open a new connection."""
        if self._unsent:
            await asyncio.wait(set(self._unsent), timeout=seconds)

    # --- tables ----------------------------------------------------------------------

    @store_call
    async def events_for(self, table_id: str, after: int, players: Sequence[str]) -> Replay | None:
        """The table's events after ``after``, with the private frames of ``players``
        only; None if the replay buffer no longer reaches back to ``after + 1``."""
        if after < 0:
            return None
        k = self.keys
        reply = await self._events_for(
            keys=[k.table_state(table_id), k.table_events(table_id)], args=[after, *players]
        )
        last, oldest = int(reply[0]), int(reply[1])
        if after == last:
            return Replay([])
        if after > last or oldest == 0 or oldest > after + 1:
            return None
        width = 2 + len(players)
        events = []
        for i in range(2, len(reply), width):
            seq, public = int(reply[i]), as_bytes(reply[i + 1])
            private = {
                p: as_bytes(frame)
                for p, frame in zip(players, reply[i + 2 : i + width], strict=True)
                if frame
            }
            events.append((seq, public, private))
        return Replay(events)

    @store_call
    async def summaries(self, table_ids: Sequence[str]) -> dict[str, bytes]:
        """Each table's summary, as its holder last wrote it (absent: never written)."""
        if not table_ids:
            return {}
        values = await self.redis.mget([self.keys.table_summary(t) for t in table_ids])
        return {t: as_bytes(v) for t, v in zip(table_ids, values, strict=True) if v is not None}

    @store_call
    async def set_watchers(self, instance: str, counts: Mapping[str, int], ttl_ms: int) -> None:
        """Say how many connections watch each of ``counts``'s tables on ``instance``."""
        if not counts:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for table_id, n in counts.items():
                key = self.keys.table_watchers(table_id)
                if n:
                    pipe.hset(key, instance, n)
                    pipe.pexpire(key, ttl_ms)
                else:
                    pipe.hdel(key, instance)
            await pipe.execute()

    @store_call
    async def watchers(self, table_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """Table -> node instance -> connections watching it there."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for table_id in table_ids:
                pipe.hgetall(self.keys.table_watchers(table_id))
            replies = await pipe.execute()
        return {
            t: {as_str(i): as_int(n) for i, n in fields.items()}
            for t, fields in zip(table_ids, replies, strict=True)
        }

    # --- players ---------------------------------------------------------------------

    @store_call
    async def seated_tables(self, player: str) -> list[str]:
        """The tables where ``player`` sits, as their holders last said (a hint)."""
        members = await self.redis.smembers(self.keys.player_seats(player))
        return sorted(as_str(m) for m in members)

    @store_call
    async def connected(self, player: str, instance: str, connected: bool) -> None:
        """Say whether ``player`` has connections on ``instance``."""
        key = self.keys.player_nodes(player)
        if connected:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hset(key, instance, 1)
                pipe.pexpire(key, PRESENCE_TTL_MS)
                await pipe.execute()
        else:
            await self.redis.hdel(key, instance)

    @store_call
    async def connected_on(self, player: str) -> list[str]:
        """The node instances that said ``player`` has connections there (dead ones
        included: the caller checks them against the live nodes)."""
        return sorted(as_str(i) for i in await self.redis.hkeys(self.keys.player_nodes(player)))


def _translated(sent: asyncio.Future[Any]) -> asyncio.Future[Any]:
    """A future of ``sent``'s outcome, its Redis and socket errors raised as
    :class:`~server.store.errors.StoreUnavailable`; cancelling it cancels ``sent``."""
    answer: asyncio.Future[Any] = sent.get_loop().create_future()

    def settle(done: asyncio.Future[Any]) -> None:
        if answer.done():
            return
        if done.cancelled():
            answer.cancel()
            return
        failure = done.exception()
        if failure is None:
            answer.set_result(done.result())
            return
        try:
            with translated():
                raise failure
        except Exception as exc:
            answer.set_exception(exc)

    def cancel(done: asyncio.Future[Any]) -> None:
        if done.cancelled():
            sent.cancel()

    sent.add_done_callback(settle)
    answer.add_done_callback(cancel)
    return answer


def _live(reply: Iterable[Any]) -> LiveNodes:
    values = list(reply)
    now = as_int(values[0])
    status, aside = as_str(values[1]), as_str(values[2])
    # Scores come back as text of a double: exact for any time in milliseconds.
    expires = {
        as_str(values[i]): int(float(as_str(values[i + 1]))) for i in range(3, len(values), 2)
    }
    return LiveNodes(now, expires, refused=status == "refused", set_aside=aside or None)
