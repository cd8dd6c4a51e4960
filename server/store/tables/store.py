"""Tables in Redis: the table store, which holds one part per job.

A :class:`TableStore` keeps, for every table: its lease with a fencing token
(``leases``, :mod:`~server.store.tables.leases`), its state and the atomic commit of
each change with its ledger entries (:meth:`TableStore.commit`, written by ``commits``,
:mod:`~server.store.tables.commit`), the chips between it and the accounts
(``transfers``, :mod:`~server.store.chips.transfers`; those a failed step left under
way, ``leftovers``, :mod:`~server.store.tables.leftovers`), the client requests its
commits applied (``requests``, :mod:`~server.store.tables.applied`), its replay buffer
(``replay``, :mod:`~server.store.tables.replay`) and its players' game logs
(``history``, :mod:`~server.store.tables.gamelogs`). This module reads a table as
stored (:class:`StoredTable`).

A table's state is stored in parts, named bytes (the state's storage format,
:mod:`~server.store.tables.parts`): the table hash holds the latest of each (see
:data:`~server.store.keys.TABLE_PART_PREFIX`), and each commit writes only the parts
that differ from those stored, so a bet writes one seat and the header, not the whole
table (docs/DESIGN.md, "State in parts"). The store knows what it last stored of each
table it loaded (:meth:`TableStore.load_state`) or committed, and a table's host hands
it each change whole (a :class:`Change`).

The client given to :class:`TableStore` must return bytes (``decode_responses`` off):
parts and events are opaque bytes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import redis.asyncio
from redis.exceptions import RedisError

from server.store.chips.records import ClientRequest
from server.store.chips.transfers import Transfers
from server.store.client.batching import Replication, ScriptBatcher
from server.store.client.replies import as_bytes, as_int, as_str
from server.store.errors import (
    StoreFailure,
    WritesRefused,
    require_bytes_client,
    store_call,
    unavailable,
)
from server.store.keys import DEFAULT_KEYS, TABLE_PART_PREFIX, Keys
from server.store.tables.applied import Requests
from server.store.tables.commit import Commits
from server.store.tables.commit_args import CommitResult, Write
from server.store.tables.gamelogs import History
from server.store.tables.leases import Leases
from server.store.tables.leftovers import Leftovers
from server.store.tables.parts import is_current, stored_state, to_parts
from server.store.tables.replay import Replay
from server.table.ledger import LedgerEntry
from server.table.state import TableState

DEFAULT_EVENTS_CAP = 256
DEFAULT_LOG_CAP = 500
DEFAULT_LEDGER_MAXLEN = 1_000_000  # about 100 MB of Redis memory


@dataclass(frozen=True, slots=True)
class Change:
    """One change of a table, as its host hands it to :meth:`TableStore.commit`: made
    under lease ``token`` over version ``expected_version`` (0 for a new table), the
    new ``state`` (its version the new one), the ``events`` ``(seq, bytes)`` it sends,
    the ledger ``entries`` it applies, the game ``logs`` ``(player, record)`` it
    delivers, and the client ``request`` that caused it, if any."""

    table_id: str
    token: int
    expected_version: int
    state: TableState
    events: Sequence[tuple[int, bytes]] = ()
    entries: Sequence[LedgerEntry] = ()
    logs: Sequence[tuple[str, bytes]] = ()
    request: ClientRequest | None = None


@dataclass(frozen=True, slots=True)
class StoredTable:
    """A table as stored: its version, the state's parts (name -> bytes, every part
    any commit gave, each as last given), the last event seq and the fencing token of
    the process that wrote this version.

    ``whole``: the state in one value, as tables were stored before parts, in a table
    not committed since (its ``parts`` are then empty); else None.
    """

    version: int
    parts: Mapping[str, bytes]
    last_seq: int
    token: int
    whole: bytes | None = None


def stored_table(fields: Mapping[bytes | str, bytes | str]) -> StoredTable | None:
    """The table in ``fields``, its hash as HGETALL gives it, or None if it holds no
    stored state."""
    named = {as_str(name): value for name, value in fields.items()}
    version = named.get("v")
    whole = named.get("s")
    cut = len(TABLE_PART_PREFIX)
    parts = {
        name[cut:]: as_bytes(value)
        for name, value in named.items()
        if name.startswith(TABLE_PART_PREFIX)
    }
    if version is None or (not parts and whole is None):
        return None
    return StoredTable(
        version=as_int(version),
        parts=parts,
        last_seq=as_int(named.get("seq")),
        token=as_int(named.get("tok")),
        whole=None if whole is None else as_bytes(whole),
    )


@dataclass(frozen=True, slots=True)
class LoadedTable:
    """A table's state as stored, and the fencing token of the process that wrote it."""

    state: TableState
    token: int


class TableStore:
    """Table state, leases, events, game logs, and the chips between tables and
    accounts, in one Redis or a Redis Cluster (every script in one slot), in parts:
    ``leases``, ``commits``, ``transfers``, ``leftovers``, ``requests``, ``replay``,
    ``history``.

    ``events_cap``: commits whose events are kept per table for replay. ``log_cap``:
    game logs kept per player. ``ledger_maxlen``: approximate bound of the ledger
    stream. ``replication``:
    commits and lease takings are acknowledged once that many replicas hold them
    (:mod:`~server.store.client.batching`); None for a Redis without replicas.
    ``lease_client``: a client of the same Redis, with connections of its own, for the
    lease takings and renewals: they must not wait for a connection of a busy pool
    (the default: ``client``).

    Its methods and its parts' raise :class:`~server.store.errors.StoreUnavailable`
    where Redis failed.
    """

    def __init__(
        self,
        client: redis.asyncio.Redis,
        *,
        keys: Keys = DEFAULT_KEYS,
        events_cap: int = DEFAULT_EVENTS_CAP,
        log_cap: int = DEFAULT_LOG_CAP,
        ledger_maxlen: int = DEFAULT_LEDGER_MAXLEN,
        replication: Replication | None = None,
        lease_client: redis.asyncio.Redis | None = None,
    ) -> None:
        require_bytes_client(client)
        if events_cap < 1 or log_cap < 1 or ledger_maxlen < 1:
            raise ValueError("caps are positive")
        self.redis = client
        self.keys = keys
        self.replication = replication
        # Commits of many tables share round trips (see batching.py); the takings and
        # renewals of their leases have pipelines of their own, so that none waits
        # behind commits (server/host/lease_keeper.py).
        self._batch = ScriptBatcher(client, replication=replication)
        self.lease_client = lease_client or client
        """The client of the lease renewals (and the node's heartbeat)."""
        lease_batch = ScriptBatcher(self.lease_client, replication=replication)
        self.leases = Leases(client, keys, lease_batch)
        self.transfers = Transfers(
            client, keys, self._batch, ledger_maxlen=ledger_maxlen, log_cap=log_cap
        )
        self.requests = Requests(client, keys)
        self.leftovers = Leftovers()
        self.commits = Commits(
            client,
            keys,
            self._batch,
            self.transfers,
            self.requests,
            self.leftovers,
            events_cap=events_cap,
            ledger_maxlen=ledger_maxlen,
        )
        self.replay = Replay(client, keys)
        self.history = History(client, keys)
        # What each table's stored parts hold, as this store last loaded or committed
        # them: a commit writes only the parts of its state that differ. No entry: not
        # known (a table not loaded here, stored whole or in an older format, or whose
        # last commit failed), so the next commit writes every part.
        self._stored: dict[str, TableState] = {}

    def sent(self) -> tuple[int, int]:
        """(pipelines, script calls) sent so far by the commits' batcher: how many
        calls, on average, shared a round trip with Redis (not the leases' own)."""
        return self._batch.pipelines, self._batch.calls

    def turn(self) -> asyncio.Future[None] | None:
        """When a commit made now would go to Redis: None if at once, else a future done
        right before it would (see :meth:`ScriptBatcher.turn`): a host waits for it to
        gather every change that comes meanwhile into one commit."""
        return self._batch.turn()

    async def commit(self, change: Change) -> CommitResult:
        """Store ``change`` atomically, or nothing, with the parts of its state that
        differ from those stored (every part if they are not known); the rest as
        :meth:`~server.store.tables.commit.Commits.write` says, Redis's errors raised
        as :class:`~server.store.errors.StoreUnavailable`. Whatever fails, nothing is
        known of the table's parts until it is loaded or committed again."""
        table_id, state = change.table_id, change.state
        # Taken out until the outcome is known: a commit that fails may have been stored.
        last = self._stored.pop(table_id, None)
        # Not what the commit goes over: every part.
        before = last if last is not None and last.version == change.expected_version else None
        write = Write(
            table_id,
            change.token,
            change.expected_version,
            state.version,
            to_parts(state, before),
            change.entries,
            change.events,
            change.logs,
            change.request,
        )
        try:
            result = await self.commits.write(write)
        except WritesRefused:
            if last is not None:  # nothing was written
                self._stored[table_id] = last
            raise
        except StoreFailure:
            raise
        except (RedisError, OSError) as exc:
            # Redis's errors become the store's here, not by a wrapper around write():
            # this is every request's path, and a wrapper is one coroutine more.
            raise unavailable(exc) from exc
        if result.ok:
            self._stored[table_id] = state
        elif last is not None:  # refused: nothing was written
            self._stored[table_id] = last
        return result

    @store_call
    async def load(self, table_id: str) -> StoredTable | None:
        """The stored table, or None if it was never committed."""
        return stored_table(await self.redis.hgetall(self.keys.table_state(table_id)))

    async def load_state(self, table_id: str) -> LoadedTable | None:
        """The table's state as stored, or None if it was never committed; raises
        ValueError if unreadable. Its parts are known from then on (unless stored in
        an older format, or whole, which the next commit writes anew, every part)."""
        stored = await self.load(table_id)
        self._stored.pop(table_id, None)
        if stored is None:
            return None
        state = stored_state(stored)
        if is_current(stored):
            self._stored[table_id] = state
        return LoadedTable(state, stored.token)

    async def holds(self, change: Change) -> bool:
        """Whether the table in Redis is ``change``'s state, written under its token
        (a commit whose reply was lost); if so, its parts are known from then on."""
        stored = await self.load(change.table_id)
        state = change.state
        if stored is None or stored.version != state.version or stored.token != change.token:
            return False
        try:
            if stored_state(stored) != state:
                return False
        except ValueError:
            return False  # unreadable: not this state, whatever it is
        self._stored[change.table_id] = state
        return True

    def forget(self, table_id: str) -> None:
        """Stop knowing ``table_id``'s parts (its host gave it up)."""
        self._stored.pop(table_id, None)

    async def drain(self, within: float = 10.0) -> None:
        """Wait (at most ``within`` seconds) for the steps running in the background."""
        await self.commits.drain(within)

    @store_call
    async def table_ids(self) -> list[str]:
        """Every table with a stored state, sorted (the tables set also lists the ones
        that took a lease and have not committed yet)."""
        listed = sorted(as_str(m) for m in await self.redis.smembers(self.keys.tables()))
        async with self.redis.pipeline(transaction=False) as pipe:
            for table_id in listed:
                pipe.hexists(self.keys.table_state(table_id), "v")
            stored = await pipe.execute()
        return [t for t, found in zip(listed, stored, strict=True) if found]
