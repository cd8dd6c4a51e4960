"""Tables in Redis: the table store, assembled from one module per job.

A :class:`TableStore` keeps, for every table: its lease with a fencing token
(:mod:`~server.store.tables.leases`), its state and the atomic commit of each change with its
ledger entries (:mod:`~server.store.tables.commit`), the client requests those
commits applied (:mod:`~server.store.tables.applied`), its replay buffer
(:mod:`~server.store.tables.replay`) and its players' game logs
(:mod:`~server.store.tables.gamelogs`). This module reads a table as stored
(:class:`StoredTable`).

A table's state is stored in parts, named bytes this store does not read (the state's
storage format, ``to_parts``): each commit gives the parts it changes, and the table
hash holds the latest of each (see :data:`~server.store.keys.TABLE_PART_PREFIX`), so a
bet writes one seat, not the whole table (docs/DESIGN.md, "State in parts").

The client given to :class:`TableStore` must return bytes (``decode_responses`` off):
parts and events are opaque bytes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import redis.asyncio

from server.store.client.batching import Replication, ScriptBatcher
from server.store.client.replies import as_bytes, as_int, as_str
from server.store.errors import StoreError, require_bytes_client
from server.store.keys import DEFAULT_KEYS, TABLE_PART_PREFIX, Keys
from server.store.lua.accounts import CLAIM, DELIVER, DELIVER_MANY, REFUND, SETTLE
from server.store.lua.tables import (
    COMMIT,
    HISTORY,
    LEASE_ACQUIRE,
    LEASE_RELEASE,
    LEASE_RENEW,
    TRANSFERS_FORGET,
    TRANSFERS_OPEN,
    TRANSFERS_VOID,
)
from server.store.tables.applied import ClientRequest, RequestCalls, RequestRecord
from server.store.tables.commit import CommitCalls
from server.store.tables.commit_args import MAX_AMOUNT, CommitResult, CommitStatus
from server.store.tables.gamelogs import HistoryCalls, HistoryPage
from server.store.tables.leases import LeaseCalls
from server.store.tables.replay import ReplayCalls, decode_published, encode_published

__all__ = [  # what this module held before it was split, for its importers
    "DEFAULT_EVENTS_CAP",
    "DEFAULT_LEDGER_MAXLEN",
    "DEFAULT_LOG_CAP",
    "MAX_AMOUNT",
    "ClientRequest",
    "CommitResult",
    "CommitStatus",
    "HistoryPage",
    "RequestRecord",
    "StoreError",
    "StoredTable",
    "TableStore",
    "decode_published",
    "encode_published",
    "require_bytes_client",
    "stored_table",
]

DEFAULT_EVENTS_CAP = 256
DEFAULT_LOG_CAP = 500
DEFAULT_LEDGER_MAXLEN = 1_000_000  # about 100 MB of Redis memory


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


class TableStore(LeaseCalls, CommitCalls, RequestCalls, ReplayCalls, HistoryCalls):
    """Table state, leases, events, game logs, and the chips between tables and
    accounts, in one Redis or a Redis Cluster (every script in one slot).

    ``events_cap``: commits whose events are kept per table for replay. ``log_cap``:
    game logs kept per player. ``ledger_maxlen``: approximate bound of the ledger
    stream. ``replication``:
    commits and lease takings are acknowledged once that many replicas hold them
    (:mod:`~server.store.client.batching`); None for a Redis without replicas.
    ``lease_client``: a client of the same Redis, with connections of its own, for the
    lease takings and renewals: they must not wait for a connection of a busy pool
    (the default: ``client``).
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
        self.events_cap = events_cap
        self.log_cap = log_cap
        self.ledger_maxlen = ledger_maxlen
        self._acquire = client.register_script(LEASE_ACQUIRE)
        self._renew = client.register_script(LEASE_RENEW)
        self._release = client.register_script(LEASE_RELEASE)
        self._commit = client.register_script(COMMIT)
        self._history = client.register_script(HISTORY)
        self._open = client.register_script(TRANSFERS_OPEN)
        self._void = client.register_script(TRANSFERS_VOID)
        self._forget = client.register_script(TRANSFERS_FORGET)
        self._claim = client.register_script(CLAIM)
        self._refund = client.register_script(REFUND)
        self._settle = client.register_script(SETTLE)
        self._deliver = client.register_script(DELIVER)
        self._deliver_many = client.register_script(DELIVER_MANY)
        # Steps after a commit that nobody waits for (settling, forgetting), and the
        # tables whose transfers a failed step left under way.
        self._background: set[asyncio.Task[None]] = set()
        self._leftovers: set[str] = set()
        self._leftover_hooks: dict[str, list[Callable[[], None]]] = {}
        # Commits of many tables share round trips (see batching.py); the takings and
        # renewals of their leases have pipelines of their own, so that none waits
        # behind commits (server/host/lease_keeper.py).
        self._batch = ScriptBatcher(client, replication=replication)
        self.lease_client = lease_client or client
        """The client of the lease renewals (and the node's heartbeat)."""
        self._lease_batch = ScriptBatcher(self.lease_client, replication=replication)
        self.replication = replication

    def sent(self) -> tuple[int, int]:
        """(pipelines, script calls) sent so far by the commits' batcher: how many
        calls, on average, shared a round trip with Redis (not the leases' own)."""
        return self._batch.pipelines, self._batch.calls

    def commit_turn(self) -> asyncio.Future[None] | None:
        """When a commit made now would go to Redis: None if at once, else a future done
        right before it would (see :meth:`ScriptBatcher.turn`)."""
        return self._batch.turn()

    async def load(self, table_id: str) -> StoredTable | None:
        """The stored table, or None if it was never committed."""
        return stored_table(await self.redis.hgetall(self.keys.table_state(table_id)))

    async def drain(self, within: float = 10.0) -> None:
        """Wait (at most ``within`` seconds) for the steps running in the background."""
        if self._background:
            done, _ = await asyncio.wait(set(self._background), timeout=within)
            for task in done:  # a step stopped by anything but Redis: seen, not reraised
                if not task.cancelled():
                    task.exception()

    async def table_ids(self) -> list[str]:
        """Every table with a stored state, sorted (the tables set also lists the ones
        that took a lease and have not committed yet)."""
        listed = sorted(as_str(m) for m in await self.redis.smembers(self.keys.tables()))
        async with self.redis.pipeline(transaction=False) as pipe:
            for table_id in listed:
                pipe.hexists(self.keys.table_state(table_id), "v")
            stored = await pipe.execute()
        return [t for t, found in zip(listed, stored, strict=True) if found]
