"""Redis's side of the archive: reading what is old enough to move, and removing it
once the archive holds it.

Moving is exactly-once because the two sides are idempotent and ordered: the archive
stores each ledger entry under its stream and entry id, and each game log under its
player and ordinal (a second copy is absorbed by the primary key); only after the
archive's transaction is committed does Redis drop what it copied, up to the last id
(or ordinal) copied. A crash between the two leaves records in both places, which the
next pass copies again (absorbed) and then removes (docs/DESIGN.md, "The archive").

Every call touches one key or one owner's keys (one slot of a Redis Cluster), or sends
such calls for many streams in one non-transactional pipeline (which a cluster client
sends to each key's node), but one: :meth:`ArchivingCalls.bounds` reads many streams'
ends in one read-only script (on a cluster, one call per slot). The streams are those
:mod:`server.store.chips.ledgers` lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import redis.asyncio
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

from server.store.archiving.lease import ArchiverLease
from server.store.archiving.records import (
    LedgerRow,
    StreamId,
    format_id,
    ledger_players,
    next_id,
    parse_id,
)
from server.store.chips.ledgers import LedgerSource, ledger_sources
from server.store.chips.records import read_logs
from server.store.client.connection import is_cluster, key_slot
from server.store.client.replies import as_bytes, as_int, as_str, stream_entries
from server.store.errors import store_call
from server.store.keys import DEFAULT_KEYS, Keys
from server.store.lua.archive import DROP_CLOSED_LEDGER, LEDGER_START, STREAM_ENDS, TRIM_LOG
from server.store.players.guests import GuestStore
from server.store.tables.gamelogs import ORDINAL_BYTES


@dataclass(frozen=True, slots=True)
class LedgerStart:
    """A ledger stream as of one instant, where the archive starts it: entries ever
    appended to it (its owner's ``n``), entries it holds, its last id ('' : none), and
    its owner's hash (a table's state and totals, or an account's)."""

    appended: int
    held: int
    last: str
    owner: dict[bytes | str, bytes | str]

    @property
    def complete(self) -> bool:
        """Whether the stream holds every entry ever appended to it."""
        return self.held == self.appended

    def account_totals(self) -> dict[str, int]:
        """An account owner's numbers (``balance``, ``in``, ``out``...), by name."""
        return {as_str(k): as_int(v) for k, v in self.owner.items() if k not in (b"guest", "guest")}


class ArchivingCalls:
    """What the archiver asks of Redis (a bytes client), the guests it closes
    (:attr:`guests`) and its lease (:meth:`lease`). Its calls raise
    :class:`~server.store.errors.StoreUnavailable` where Redis failed."""

    def __init__(self, client: redis.asyncio.Redis, *, keys: Keys = DEFAULT_KEYS) -> None:
        self.redis = client
        self.keys = keys
        self.guests = GuestStore(client, keys=keys)
        self._trim_log = client.register_script(TRIM_LOG)
        self._start = client.register_script(LEDGER_START)
        self._drop = client.register_script(DROP_CLOSED_LEDGER)
        self._ends = client.register_script(STREAM_ENDS)

    def lease(self, owner: str, ttl_ms: int) -> ArchiverLease:
        """The archiver's lease, for ``owner`` (held ``ttl_ms`` at a time)."""
        return ArchiverLease(self.redis, owner, ttl_ms, keys=self.keys)

    @store_call
    async def archive_of_record(self, identity: str) -> str:
        """The identity of the archive this Redis's records go to: ``identity`` if it
        had none yet (it has from now), else the one it had."""
        key = self.keys.archive_identity()
        await self.redis.set(key, identity, nx=True)
        theirs = await self.redis.get(key)
        return identity if theirs is None else as_str(theirs)

    @store_call
    async def ledger_sources(self) -> list[LedgerSource]:
        """Every ledger stream, and its owner
        (:func:`~server.store.chips.ledgers.ledger_sources`)."""
        return await ledger_sources(self.redis, self.keys)

    def _start_keys(self, source: LedgerSource) -> list[str]:
        k = self.keys
        owner = k.table_state(source.owner) if source.table else k.account(source.owner)
        return [owner, source.stream]

    @store_call
    async def ledger_start(self, source: LedgerSource) -> LedgerStart:
        """``source``'s stream as of one instant (one script in its owner's slot)."""
        return _ledger_start(await self._start(keys=self._start_keys(source)))

    @store_call
    async def ledger_starts(self, sources: Sequence[LedgerSource]) -> list[LedgerStart]:
        """Each of ``sources``' streams as of one instant (:meth:`ledger_start`), the
        scripts sent in one pipeline."""
        keys = [self._start_keys(source) for source in sources]
        return [_ledger_start(reply) for reply in await self._each(self._start, keys)]

    @store_call
    async def bounds(self, streams: Sequence[str]) -> list[tuple[StreamId | None, StreamId | None]]:
        """Each of ``streams``' first and last entry ids (None: the stream is empty or
        missing): one ``STREAM_ENDS`` script for them all (on a Redis Cluster, one per
        slot, sent in one pipeline); each answer is of its own instant."""
        if not streams:
            return []
        if not is_cluster(self.redis):
            return _pairs(await self._ends(keys=list(streams)))
        by_slot: dict[int, list[str]] = {}
        for stream in streams:
            by_slot.setdefault(key_slot(stream), []).append(stream)
        groups = list(by_slot.values())
        ends: dict[str, tuple[StreamId | None, StreamId | None]] = {}
        for group, reply in zip(groups, await self._each(self._ends, groups), strict=True):
            ends.update(zip(group, _pairs(reply), strict=True))
        return [ends[stream] for stream in streams]

    async def _each(self, script: AsyncScript, keys: Sequence[list[str]]) -> list[Any]:
        """``script``'s reply for each list of ``keys`` (each of one slot), the calls sent
        in one pipeline; a Redis (or node) that forgot the script loads it again. The
        first error reply is raised."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for each in keys:
                # As a command, not pipe.evalsha: a cluster's pipeline refuses that method.
                pipe.execute_command("EVALSHA", script.sha, len(each), *each)
            replies = await pipe.execute(raise_on_error=False)
        answers = []
        for each, reply in zip(keys, replies, strict=True):
            if isinstance(reply, NoScriptError):
                answers.append(await script(keys=each))
            elif isinstance(reply, Exception):
                raise reply
            else:
                answers.append(reply)
        return answers

    # --- the jackpots' ledgers ----------------------------------------------------

    @store_call
    async def jackpots(self) -> list[str]:
        """Every jackpot ever started, sorted."""
        return sorted(as_str(m) for m in await self.redis.smembers(self.keys.jackpots()))

    def jackpot_ledger(self, name: str) -> str:
        """Jackpot ``name``'s ledger stream."""
        return self.keys.jackpot_ledger(name)

    @store_call
    async def jackpot_starts(self, names: Sequence[str]) -> list[LedgerStart]:
        """Each of jackpot ``names``' ledgers as of one instant (its owner's hash: the
        meter and its totals), the scripts (one in each jackpot's slot) sent in one
        pipeline."""
        keys = [[self.keys.jackpot(n), self.keys.jackpot_ledger(n)] for n in names]
        return [_ledger_start(reply) for reply in await self._each(self._start, keys)]

    @store_call
    async def drop_closed_ledger(self, player: str) -> bool:
        """Delete ``player``'s ledger stream if the account is closed and the archive
        holds all of it (the stream is empty); whether it was deleted."""
        k = self.keys
        return bool(await self._drop(keys=[k.account(player), k.account_ledger(player)]))

    @store_call
    async def logs_on_their_way(self, table_ids: Iterable[str]) -> set[bytes]:
        """The game logs that these tables still have to deliver (their players may
        get them again: one of those is not to leave Redis yet, see
        :data:`~server.store.lua.accounts.LOG_WINDOW`)."""
        found: set[bytes] = set()
        for table_id in sorted(set(table_ids)):
            pending = await self.redis.hgetall(self.keys.logs_out(table_id))
            for name, raw in pending.items():  # a commit's logs, or one log (earlier)
                found.update(d.record for d in read_logs(as_str(name), raw))
        return found

    @store_call
    async def old_entries(self, stream: str, before_ms: int, count: int) -> list[LedgerRow]:
        """Up to ``count`` of the oldest entries of ``stream`` appended before
        ``before_ms`` (epoch ms: the entry ids' time), oldest first."""
        reply = await self.redis.xrange(stream, min="-", max=f"({before_ms}-0", count=count)
        return [LedgerRow.from_fields(stream, i, f) for i, f in stream_entries(reply)]

    @store_call
    async def players_after(
        self, streams: Sequence[tuple[str, StreamId]], count: int
    ) -> list[tuple[set[str], StreamId | None, int]]:
        """For each ``(stream, after)``, of up to ``count`` entries of ``stream`` after
        id ``after``: the players they name, the last one's id and how many were read
        (:func:`~server.store.archiving.records.ledger_players`); asked in one pipeline."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for stream, after in streams:
                pipe.xrange(stream, min="(" + format_id(after), max="+", count=count)
            replies = await pipe.execute()
        return [ledger_players(reply) for reply in replies]

    @store_call
    async def trim_stream(self, stream: str, through: StreamId) -> int:
        """Remove every entry of ``stream`` up to id ``through`` (exactly, not ``~``);
        how many were removed."""
        minid = format_id(next_id(through))
        return int(await self.redis.xtrim(stream, minid=minid, approximate=False))

    @store_call
    async def game_log(self, player: str) -> list[tuple[int, bytes]]:
        """``player``'s game logs in Redis, ``(ordinal, record)``, newest first."""
        return _game_log(await self.redis.lrange(self.keys.game_log(player), 0, -1))

    @store_call
    async def game_logs(self, players: Sequence[str]) -> list[list[tuple[int, bytes]]]:
        """Each of ``players``' game logs (:meth:`game_log`), read in one pipeline."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for player in players:
                pipe.lrange(self.keys.game_log(player), 0, -1)
            replies = await pipe.execute()
        return [_game_log(raw) for raw in replies]

    @store_call
    async def trim_game_log(self, player: str, through: int) -> int:
        """Remove ``player``'s game logs numbered up to ``through``, but never the newest
        one; how many were removed."""
        return int(await self._trim_log(keys=[self.keys.game_log(player)], args=[through]))


def _ledger_start(reply: Any) -> LedgerStart:
    appended, held, last, pairs = reply
    return LedgerStart(
        as_int(appended),
        as_int(held),
        as_str(last),
        dict(zip(pairs[::2], pairs[1::2], strict=True)),
    )


def _pairs(reply: Any) -> list[tuple[StreamId | None, StreamId | None]]:
    """``STREAM_ENDS``'s reply as (first, last) per stream."""
    flat = list(reply)
    return [
        (parse_id(as_str(first)), parse_id(as_str(last))) if first and last else (None, None)
        for first, last in zip(flat[::2], flat[1::2], strict=True)
    ]


def _game_log(raw: Iterable[Any]) -> list[tuple[int, bytes]]:
    return [
        (int.from_bytes(item[:ORDINAL_BYTES], "big"), item[ORDINAL_BYTES:])
        for item in map(as_bytes, raw)
    ]
