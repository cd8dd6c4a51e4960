"""One Redis round trip for the script calls of many tables.

Every table commits its own changes, one at a time; with hundreds of tables, their
commits and lease renewals are sent together in one pipeline (not a transaction: each
script is atomic by itself, and fencing inside the scripts keeps each table's writes
correct whatever their order).

One pipeline is in flight at a time (group commit): the calls made while it awaits its
replies go together in the next one, sent as soon as those replies are in. On a Redis
Cluster the pipeline is redis-py's cluster pipeline, which sends each node the calls
of its slots, one pipeline per node, all at once, and follows a slot that moved. Under load
the pipelines grow instead of multiplying. Measured at 10,000 players acting at a
human pace (``bench/scenarios/server.py``), letting each loop pass send its own pipeline kept up
to 18 of them in flight, and 5 to 9 % of commits waited over 25 ms; with one in
flight, none did, for the same CPU.

With :class:`Replication`, each pipeline that holds a durable call ends with one
``WAIT``: its calls are acknowledged once a replica holds them (one ``WAIT`` per
pipeline, not per commit). If none does in time while the primary has replicas, the
durable calls fail with :class:`~server.store.errors.Unreplicated` (their replies
attached); a primary with no replica at all has nothing to fail over to, and its
writes are acknowledged as a lone Redis's are (docs/DESIGN.md, "Redis failures").
A ``WAIT`` on such a primary would only wait out its timeout, so once one was found
alone, a pipeline ends with ``INFO replication`` instead, and waits only if the server
that took its writes has a replica again. Whether the primary is alone is asked on the
pipeline's own connection, of that server: across a failover another connection of the
pool may reach the other primary. :class:`Replication` needs one Redis: a ``WAIT``
covers the writes one connection made to one server, and a cluster's pipeline writes to
several nodes (the server refuses ``--redis-replicas`` on a cluster).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from dataclasses import dataclass
from typing import Any

import redis.asyncio
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.sentinel import SentinelConnectionPool
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError, RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.store.client.connection import is_cluster
from server.store.errors import Unreplicated, WritesRefused

_Call = tuple[AsyncScript, list[Any], list[Any], "asyncio.Future[Any]", bool]

log = logging.getLogger(__name__)

_ONE_REDIS = "waiting for replicas needs one Redis, not a cluster"
"""Why a cluster's batcher takes no :class:`Replication` (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class Replication:
    """Acknowledge durable writes once ``replicas`` replicas hold them, waiting at most
    ``timeout_ms`` (``WAIT``)."""

    replicas: int
    timeout_ms: int

    def __post_init__(self) -> None:
        if self.replicas < 1 or self.timeout_ms < 1:
            raise ValueError("wait for at least one replica, for some time")

    def held_by(self, acked: Any) -> bool:
        """Whether ``acked``, a ``WAIT``'s reply (or the error it failed with), says
        enough replicas hold the writes before it."""
        return not isinstance(acked, Exception) and int(acked) >= self.replicas


class ScriptBatcher:
    """Queues script calls and sends them in pipelines, at most ``in_flight`` at once.

    A call made while that many pipelines await their replies waits for the next free
    one, with every other call made meanwhile. Each call gets its own reply or error.
    ``replication``: see the module docstring; a Redis Cluster client takes none
    (``ValueError``).
    """

    def __init__(
        self,
        client: redis.asyncio.Redis,
        in_flight: int = 1,
        replication: Replication | None = None,
    ) -> None:
        if in_flight < 1:
            raise ValueError("at least one pipeline in flight")
        if replication is not None and is_cluster(client):
            raise ValueError(_ONE_REDIS)
        self.client = client
        self.in_flight = in_flight
        self.replication = replication
        self._pending: list[_Call] = []
        self._turns: list[asyncio.Future[None]] = []  # see turn()
        self._scheduled = False
        self._running: set[asyncio.Task[None]] = set()
        self._alone = False  # the primary had no replica when last asked
        # Connections kept between round trips (see _round_trip), and their pool.
        self._held: list[AbstractConnection] = []
        self._held_pool: Any = None
        self.pipelines = 0
        """Pipelines sent so far."""
        self.calls = 0
        """Script calls sent so far, in those pipelines."""
        self.waits = 0
        """``WAIT`` commands sent so far."""
        self.unreplicated = 0
        """Durable calls failed with :class:`Unreplicated` so far."""

    def call(
        self, script: AsyncScript, keys: list[Any], args: list[Any], durable: bool = False
    ) -> asyncio.Future[Any]:
        """The script's reply (or error), once the pipeline holding this call is answered.

        ``durable``: with :attr:`replication`, the reply comes once a replica holds the
        write, else the call fails with :class:`Unreplicated`.

        Cancelling the future before its pipeline is sent drops the call; once sent,
        the script runs in Redis whatever becomes of the future.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append((script, keys, args, future, durable))
        if not self._scheduled and len(self._running) < self.in_flight:
            self._scheduled = True
            loop.call_soon(self._flush)
        return future

    def turn(self) -> asyncio.Future[None] | None:
        """When a call made now would be sent: None if at once (in the next pass of the
        loop), else a future done right before the calls made while the pipelines in
        flight await their replies are gathered into the next one. A caller whose call
        would wait anyway may wait for its turn and make it then, with whatever it
        gathered meanwhile (a table applies the events that came while it waited in
        one commit: server/host/applying.py). Cancelling the future leaves the others'."""
        if len(self._running) < self.in_flight:
            return None
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._turns.append(future)
        return future

    def _flush(self) -> None:
        self._scheduled = False
        if len(self._running) >= self.in_flight:
            return
        batch = [call for call in self._pending if not call[3].done()]  # not cancelled
        self._pending = []
        if not batch:
            return
        self.pipelines += 1
        self.calls += len(batch)
        task = asyncio.get_running_loop().create_task(self._send(batch))
        self._running.add(task)  # keep a reference until it is done
        task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task[None]) -> None:
        # Whatever the outcome of that pipeline, the calls queued meanwhile go next.
        self._running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("script pipeline failed", exc_info=task.exception())
        # Those waiting for their turn run before the next pipeline is gathered (the
        # loop runs its callbacks in the order they were scheduled): their calls go in it.
        turns, self._turns = self._turns, []
        for turn in turns:
            if not turn.done():
                turn.set_result(None)
        if self._pending and not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    async def _send(self, batch: list[_Call]) -> None:
        wait = self.replication if any(call[4] for call in batch) else None
        commands = [
            ("EVALSHA", script.sha, len(keys), *keys, *args) for script, keys, args, *_ in batch
        ]
        try:
            results, replicated = await self._round_trip(commands, wait)
        except BaseException as exc:  # the connection failed: every call in it did
            failure = exc if isinstance(exc, Exception) else RuntimeError("pipeline cancelled")
            for _, _, _, future, _ in batch:
                if not future.done():
                    future.set_exception(failure)
            if not isinstance(exc, Exception):
                raise
            return
        forgotten: list[_Call] = []
        for call, result in zip(batch, results, strict=True):
            future = call[3]
            if future.done():  # the caller was cancelled meanwhile
                continue
            if isinstance(result, NoScriptError):
                forgotten.append(call)
            elif isinstance(result, Exception):
                future.set_exception(WritesRefused.of(result) or result)
            elif call[4] and not replicated:
                self.unreplicated += 1
                future.set_exception(Unreplicated(result))
            else:
                future.set_result(result)
        if forgotten:
            await self._load_again(forgotten)

    async def _round_trip(
        self, commands: list[tuple[Any, ...]], wait: Replication | None
    ) -> tuple[list[Any], bool]:
        """Each command's reply (an error reply as its exception), in one round trip,
        and whether the writes count as replicated (``wait``; see the module docstring).

        On a Redis Cluster, redis-py's cluster pipeline (it sends each node its slots'
        commands and follows a slot that moved). Else the commands are written on one
        connection of the pool and their replies read back, retried as redis-py retries
        a pipeline (its connection's ``retry``, on a connection error or a timeout),
        with one time limit for the write and all the replies: redis-py's pipeline
        spent as long again per command on bookkeeping a list of script calls needs
        none of, and set a timer for each reply. The connection may be one the batcher
        kept (:meth:`_connection`); whether its server has replicas is asked on it
        (:meth:`_exchange_durably`)."""
        if is_cluster(self.client):
            if wait is not None:  # replication set (or a client swapped) after __init__
                raise ValueError(_ONE_REDIS)
            return await self._cluster_round_trip(commands), True
        pool = self.client.connection_pool
        conn = await self._connection(pool)
        try:
            outcome: tuple[list[Any], bool] = await conn.retry.call_with_retry(
                lambda: self._exchange_durably(conn, commands, wait),
                lambda error: conn.disconnect(),
            )
        except BaseException:
            try:
                # Replies may be left unread on it: never hand it to another caller.
                await conn.disconnect(nowait=True)
            finally:
                # Shielded: a cancellation in the middle would leave the connection
                # counted as taken, and the bounded pool one smaller for good.
                await asyncio.shield(pool.release(conn))
            raise
        keep = (
            pool is self._held_pool  # not a client changed meanwhile
            and len(self._held) < self.in_flight
            and _spares(pool, self.in_flight)
        )
        if keep:
            self._held.append(conn)  # every reply read: clean for the next round trip
        else:
            await asyncio.shield(pool.release(conn))
        return outcome

    async def _connection(self, pool: Any) -> AbstractConnection:
        """A connection kept from an earlier round trip, else one from ``pool``.

        Taking one from redis-py's pool and giving it back (two locks, a timer, a check
        that nothing is left to read, a task for the shielded release) cost 31 µs of
        the server's CPU a round trip, measured: at a human pace, every commit's. So
        up to ``in_flight`` connections stay with the batcher between round trips, when
        the pool has more besides for its other users (:func:`_spares`); one that
        fails is dropped and given back."""
        if pool is not self._held_pool:  # the client changed: its pool's, from now on
            old, old_pool = self._held, self._held_pool
            self._held, self._held_pool = [], pool
            await asyncio.shield(_release_all(old_pool, old))
        while self._held:
            kept = self._held.pop()
            # Checked as the pool checks a connection it hands out: still open, nothing
            # unread (a Redis that restarted meanwhile closed it), and not marked by
            # redis-py to reconnect (a maintenance notice), else given back.
            with contextlib.suppress(RedisError, OSError):
                marked = kept.should_reconnect()  # type: ignore[no-untyped-call]
                if kept.is_connected and not marked and not await kept.can_read():
                    return kept
            await kept.disconnect(nowait=True)
            await asyncio.shield(pool.release(kept))
        taken: AbstractConnection = await pool.get_connection()
        return taken

    async def _exchange_durably(
        self, conn: AbstractConnection, commands: list[tuple[Any, ...]], wait: Replication | None
    ) -> tuple[list[Any], bool]:
        """:func:`_exchange` of ``commands`` on ``conn``, and whether their writes count as
        replicated (with ``wait``; else True).

        The writes are followed, on ``conn``, by one ``WAIT``; or, once a primary was
        found alone, by ``INFO replication``, and by a ``WAIT`` only if the server that
        took them has a replica after all. A ``WAIT`` that falls short is followed by
        ``INFO replication`` too. So whether the primary is alone is always asked of the
        server that took the writes: another connection of the pool may reach another
        server (Sentinel's pool moves its idle connections to a new primary, not one in
        use), and a new primary alone for a while would have had the old one's
        unreplicated writes acknowledged. An exchange after the writes that fails counts
        as not replicated; the writes' replies stand, and nothing is sent again."""
        if wait is None:
            return await _exchange(conn, commands), True
        wait_command = ("WAIT", wait.replicas, wait.timeout_ms)
        if self._alone:
            replies = await _exchange(conn, [*commands, INFO_REPLICATION])
            if _says_alone(replies.pop()):
                return replies, True  # a lone Redis's writes
            self._note_alone(False)
            acked = await _after_writes(conn, wait_command)
        else:
            replies = await _exchange(conn, [*commands, wait_command])
            acked = replies.pop()
        self.waits += 1
        if wait.held_by(acked):
            return replies, True
        alone = conn.is_connected and _says_alone(await _after_writes(conn, INFO_REPLICATION))
        self._note_alone(alone)
        if not alone:
            log.warning("no replica acknowledged a write within %d ms", wait.timeout_ms)
        return replies, alone

    async def _cluster_round_trip(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        """:meth:`_round_trip` on a Redis Cluster: redis-py's cluster pipeline, each
        node sent its slots' commands (as commands, not ``pipe.evalsha``: a cluster's
        pipeline refuses that method, yet sends the command to its keys' node)."""
        async with self.client.pipeline(transaction=False) as pipe:
            for command in commands:
                pipe.execute_command(*command)
            return list(await pipe.execute(raise_on_error=False))

    def _note_alone(self, alone: bool) -> None:
        if alone != self._alone:
            if alone:
                log.warning("the Redis primary has no replica: writes are acknowledged alone")
            else:
                log.warning("the Redis primary has a replica again: writes wait for it")
        self._alone = alone

    async def _load_again(self, calls: list[_Call]) -> None:
        """A restarted Redis forgot the scripts: load each once, then send ``calls``
        again at the head of the next pipeline (one round trip per script, not per call)."""
        try:
            for source in {call[0].script for call in calls}:
                await self.client.script_load(source)
        except Exception as exc:
            for _, _, _, future, _ in calls:
                if not future.done():
                    future.set_exception(exc)
            return
        self._pending[:0] = calls


def _spares(pool: Any, kept: int) -> bool:
    """Whether the batcher may keep ``kept`` connections of ``pool``: it still has some
    for its other users (the node's heartbeat on the leases' pool of two, say), and it
    is not Sentinel's. Sentinel's pool moves its idle connections to a new primary after
    a failover, not those in use: a kept one would stay on the old primary, and every
    pipeline would go on there."""
    if isinstance(pool, SentinelConnectionPool):
        return False
    return int(getattr(pool, "max_connections", 0)) > kept + 1


async def _release_all(pool: Any, conns: list[AbstractConnection]) -> None:
    """Give every one of ``conns`` back to ``pool`` (shielded as one by the caller)."""
    for conn in conns:
        await pool.release(conn)


INFO_REPLICATION = ("INFO", "replication")


def _says_alone(info: Any) -> bool:
    """Whether ``info`` (the reply to :data:`INFO_REPLICATION`) is a primary's with no
    replica. One that does not say (an error, a replica's, no ``connected_slaves``)
    counts as not: a write is then not acknowledged, and its retry is safe."""
    if isinstance(info, Exception):
        return False
    text = info.decode() if isinstance(info, bytes) else str(info)
    found = re.search(r"^connected_slaves:(\d+)", text, re.MULTILINE)
    primary = re.search(r"^role:master\s*$", text, re.MULTILINE) is not None
    return primary and found is not None and int(found.group(1)) == 0


async def _after_writes(conn: AbstractConnection, command: tuple[Any, ...]) -> Any:
    """One more exchange on ``conn`` once the pipeline's writes are answered: its reply,
    or the error it failed with, the connection then dropped (a reply may be left
    unread on it), so that the writes' replies are not lost with it."""
    try:
        (reply,) = await _exchange(conn, [command])
    except (RedisError, OSError) as exc:
        await conn.disconnect(nowait=True)
        return exc
    return reply


async def _exchange(conn: AbstractConnection, commands: list[tuple[Any, ...]]) -> list[Any]:
    """Write ``commands`` on ``conn`` at once, then read a reply for each, all within
    the connection's own time limit (``socket_timeout``)."""
    limit = conn.socket_timeout
    # One limit for the write and all the replies, not a timer per reply: the
    # connection writes and reads without one meanwhile. With its own, redis-py sends
    # through ``asyncio.wait_for``, a task each time on Python 3.11 (every commit's
    # pipeline) that may also swallow a cancellation (server/tasks.py).
    conn.socket_timeout = None
    try:
        async with asyncio.timeout(limit):
            await conn.send_packed_command(conn.pack_commands(commands))
            replies: list[Any] = []
            for _ in commands:
                try:
                    replies.append(await conn.read_response())
                except ResponseError as exc:
                    replies.append(exc)
    except TimeoutError as exc:  # as redis-py says it, so that its retry policy applies
        raise RedisTimeoutError(f"no round trip with Redis within {limit} s") from exc
    finally:
        # Unless redis-py changed it meanwhile: a maintenance notice relaxes the
        # connection's limit (a number) until the maintenance ends, and the end puts
        # the original back; either is kept. (The limit of this round trip stays.)
        if conn.socket_timeout is None:
            conn.socket_timeout = limit
    return replies
