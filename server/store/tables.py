"""Tables in Redis: leases with fencing tokens, atomic commits, replay buffer, game logs.

A process owns a table while it holds the table's lease; each new owner gets a
larger fencing token. :meth:`TableStore.commit` writes a new state only if the
caller's token is the current lease's and the stored version is the one the caller
started from, and applies the state change's ledger entries in the same atomic
step (one Lua script), so a stale owner can never overwrite a newer state, and a
retried commit never moves chips twice. A commit may also carry the client request
that caused it (:class:`ClientRequest`): the request is recorded in the same step,
and a later commit carrying the same player and request key is refused, so a request the
client sends again (it never heard the reply) never moves chips twice either.

A table's state is stored in parts, named bytes the store does not read (the state
machine's :func:`~server.table.state.to_parts`): each commit gives the parts it
changes, and the table hash holds the latest of each (see
:data:`~server.store.keys.TABLE_PART_PREFIX`), so a bet writes one seat, not the
whole table.

The client given to :class:`TableStore` must return bytes (``decode_responses``
off): parts and events are opaque bytes.
"""

from __future__ import annotations

import enum
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio

from server.auth.tokens import check_player
from server.store.batching import ScriptBatcher
from server.store.keys import (
    APPLIED_TTL_MS,
    DEFAULT_KEYS,
    REQUEST_TTL_MS,
    TABLE_PART_PREFIX,
    Keys,
    applied_bucket,
)
from server.store.replies import as_bytes, as_int, as_str, stream_entries
from server.store.scripts import COMMIT, HISTORY, LEASE_ACQUIRE, LEASE_RELEASE, LEASE_RENEW
from server.table.ledger import LedgerEntry, Pot

MAX_AMOUNT = 10**15
"""The largest chip amount of one ledger entry (amounts cross into Lua as doubles)."""

DEFAULT_EVENTS_CAP = 256
DEFAULT_LOG_CAP = 500
DEFAULT_LEDGER_MAXLEN = 1_000_000  # about 100 MB of Redis memory
_ORDINAL_BYTES = 8


class StoreError(RuntimeError):
    """A call that breaks the store's contract (a programming error, not a race)."""


def require_bytes_client(client: redis.asyncio.Redis) -> None:
    """Raise :class:`StoreError` if ``client`` decodes responses to ``str``."""
    kwargs = client.connection_pool.connection_kwargs
    if kwargs.get("decode_responses"):
        raise StoreError("the store needs a Redis client with decode_responses=False")


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


class CommitStatus(enum.Enum):
    """What became of a commit."""

    OK = "ok"  # written
    DUPLICATE = "duplicate"  # this very commit was already stored; nothing written
    STALE_LEASE = "stale_lease"  # the token is not the current lease's; nothing written
    STALE_VERSION = "stale_version"  # the stored version differs; nothing written
    INSUFFICIENT = "insufficient"  # an account would go negative; nothing written
    REPEATED = "repeated"  # the commit's request was already applied; nothing written


@dataclass(frozen=True, slots=True)
class ClientRequest:
    """The client request a commit carries: ``player``'s request ``rid``.

    Rids are chosen by clients, so they are unique per player at best (the server
    passes one scoped by session): the record is keyed by both. ``fingerprint`` (not
    empty) says what was asked, so that a repeat can be told from another request
    reusing the rid; ``memo`` is what the reply needs besides the player's account
    balance (opaque to the store).
    """

    player: str
    rid: str
    fingerprint: bytes
    memo: bytes = b""


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """A request as recorded by the commit that applied it: its ``fingerprint`` and
    ``memo``, ``account`` (the player's balance right after that commit) and the
    commit's ``table_id`` and ``version``."""

    fingerprint: bytes
    memo: bytes
    account: int
    table_id: str
    version: int


@dataclass(frozen=True, slots=True)
class CommitResult:
    """The outcome of :meth:`TableStore.commit`.

    ``applied``/``skipped``: entries applied, and entries skipped because their key
    was already applied (OK only). ``stored_version``: the version found (for
    STALE_VERSION and DUPLICATE). ``lease_token``: the current lease's token, None if
    no lease (STALE_LEASE). ``player``, ``balance``, ``needed``: the account that
    would go negative, its balance and the net amount the commit takes from it
    (INSUFFICIENT). ``accounts``: player -> account balance for every account an
    entry of the commit touches and the requester's, read inside the commit: right
    after it for OK, as stored now for DUPLICATE; empty otherwise. ``request``: the
    record of the request already applied (REPEATED).
    """

    status: CommitStatus
    applied: int = 0
    skipped: int = 0
    stored_version: int | None = None
    lease_token: int | None = None
    player: str | None = None
    balance: int | None = None
    needed: int | None = None
    accounts: Mapping[str, int] = field(default_factory=dict)
    request: RequestRecord | None = None

    @property
    def ok(self) -> bool:
        """Whether the new state is stored (now or by an earlier identical commit)."""
        return self.status in (CommitStatus.OK, CommitStatus.DUPLICATE)

    @property
    def stale(self) -> bool:
        """Whether the caller lost the table (lease or version): reload before anything."""
        return self.status in (CommitStatus.STALE_LEASE, CommitStatus.STALE_VERSION)


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """A page of a player's game logs, newest first.

    Each item is ``(ordinal, record)``; ordinals grow by one per log of the player.
    ``next_cursor`` continues with older logs; None when there are no more.
    """

    items: list[tuple[int, bytes]]
    next_cursor: int | None


def encode_published(seq: int, event: bytes) -> bytes:
    """The pub/sub message of an event: ``seq`` as 8 bytes big endian, then the event."""
    return seq.to_bytes(_ORDINAL_BYTES, "big") + event


def decode_published(message: bytes) -> tuple[int, bytes]:
    """The inverse of :func:`encode_published`."""
    if len(message) < _ORDINAL_BYTES:
        raise ValueError("a published event starts with an 8-byte sequence number")
    return int.from_bytes(message[:_ORDINAL_BYTES], "big"), message[_ORDINAL_BYTES:]


class TableStore:
    """Table state, leases, events and game logs in one Redis.

    ``events_cap``: events kept per table for replay. ``log_cap``: game logs kept per
    player. ``ledger_maxlen``: approximate bound of the ledger stream.
    """

    def __init__(
        self,
        client: redis.asyncio.Redis,
        *,
        keys: Keys = DEFAULT_KEYS,
        events_cap: int = DEFAULT_EVENTS_CAP,
        log_cap: int = DEFAULT_LOG_CAP,
        ledger_maxlen: int = DEFAULT_LEDGER_MAXLEN,
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
        # Commits and renewals of many tables share round trips (see batching.py).
        self._batch = ScriptBatcher(client)

    # --- leases -----------------------------------------------------------------

    async def acquire_lease(self, table_id: str, owner: str, ttl_ms: int) -> int | None:
        """Take the table if nobody holds it: the new fencing token, else None.

        Tokens of a table only grow. Holding the lease already also gives None (use
        :meth:`renew_lease`).
        """
        k = self.keys
        token = await self._acquire(
            keys=[k.table_lease(table_id), k.table_fence(table_id)], args=[owner, ttl_ms]
        )
        return None if token is None else int(token)

    async def renew_leases(
        self, owner: str, leases: Sequence[tuple[str, int]], ttl_ms: int
    ) -> list[bool]:
        """Extend each ``(table_id, token)`` lease of ``owner`` to ``ttl_ms`` from now, in
        one script call; per lease, whether it was still ours (if not, nothing is done)."""
        if not leases:
            return []
        keys = [self.keys.table_lease(table_id) for table_id, _ in leases]
        args: list[Any] = [f"{token}:{owner}" for _, token in leases]
        done = await self._batch.call(self._renew, keys, [*args, ttl_ms])
        return [bool(ours) for ours in done]

    async def renew_lease(self, table_id: str, owner: str, token: int, ttl_ms: int) -> bool:
        """:meth:`renew_leases` for one lease."""
        return (await self.renew_leases(owner, [(table_id, token)], ttl_ms))[0]

    async def release_lease(self, table_id: str, owner: str, token: int) -> bool:
        """Give the table up; False if the lease was no longer ours (nothing done)."""
        done = await self._release(
            keys=[self.keys.table_lease(table_id)], args=[f"{token}:{owner}"]
        )
        return bool(done)

    async def lease_holder(self, table_id: str) -> tuple[int, str] | None:
        """``(token, owner)`` of the current lease, or None."""
        raw = await self.redis.get(self.keys.table_lease(table_id))
        if raw is None:
            return None
        token, _, owner = as_str(raw).partition(":")
        return int(token), owner

    # --- state ------------------------------------------------------------------

    async def load(self, table_id: str) -> StoredTable | None:
        """The stored table, or None if it was never committed."""
        return stored_table(await self.redis.hgetall(self.keys.table_state(table_id)))

    async def table_ids(self) -> list[str]:
        """Every table with a stored state, sorted."""
        members = await self.redis.smembers(self.keys.tables())
        return sorted(as_str(m) for m in members)

    async def commit(
        self,
        table_id: str,
        *,
        token: int,
        expected_version: int,
        new_version: int,
        state: Mapping[str, bytes],
        entries: Sequence[LedgerEntry] = (),
        events: Sequence[tuple[int, bytes]] = (),
        logs: Sequence[tuple[str, bytes]] = (),
        publish_channel: str | None = None,
        request: ClientRequest | None = None,
        commit_id: str | None = None,
    ) -> CommitResult:
        """Store one state change atomically, or nothing.

        ``state``: the parts of the new state that differ from those stored (at
        least one; a name is any non-empty text), written over them: the stored
        parts then add up to the new state. The first commit over a table stored
        whole (:attr:`StoredTable.whole`) gives every part: it deletes the whole.

        ``commit_id`` names this commit; None draws a new one, so each call is a
        commit of its own (a pipeline redis-py sends again carries the same).

        In order: if version ``new_version`` is already stored, written with
        ``token`` under ``commit_id``, DUPLICATE (this very commit, retried after its
        reply was lost). Else STALE_LEASE unless ``token`` is the
        current lease's; else STALE_VERSION unless the stored version (0 for a new
        table) is ``expected_version``. Else, if ``request`` is given and its
        player's request with its rid is recorded (by a commit of any table within
        :data:`~server.store.keys.REQUEST_TTL_MS`), REPEATED with that record. The
        ``entries`` whose key was not applied yet (within the last
        :data:`~server.store.keys.APPLIED_WINDOW` versions at least) are applied:
        those with an ``account`` side change that player's balance, and
        INSUFFICIENT is returned if any balance would end negative; each goes to the
        ledger stream. Then the parts and version are written, ``events`` (seq
        numbers following the stored last seq without a gap) are appended to the
        replay buffer and published on ``publish_channel`` (see
        :func:`encode_published`), and each ``(player, record)`` in ``logs`` is
        pushed to the player's capped game log; ``request`` is recorded, with the
        requester's balance after the commit, for :data:`REQUEST_TTL_MS`. OK and
        DUPLICATE carry the balance of every account the entries touch and of the
        requester (:attr:`CommitResult.accounts`).

        Raises ``ValueError`` for arguments that break this contract and
        :class:`StoreError` if the event numbers do not follow the stored ones.
        """
        if new_version <= expected_version or expected_version < 0:
            raise ValueError("the new version must be above the expected one")
        if not state or not all(state):
            raise ValueError("a commit writes at least one part, each with a name")
        for i in range(1, len(events)):
            if events[i][0] != events[i - 1][0] + 1:
                raise ValueError("event sequence numbers follow each other")
        if events and events[0][0] < 1:
            raise ValueError("event sequence numbers start at 1")
        for player, _ in logs:
            check_player(player)  # a name becomes part of a key
        players: list[str] = []
        index: dict[str, int] = {}
        if request is not None:
            if not request.fingerprint:
                raise ValueError("a request's fingerprint is not empty")
            # The requester's balance is part of every reply, moved or not.
            players.append(check_player(request.player))
            index[request.player] = 1
        entry_args: list[str | int | bytes] = []
        for entry in entries:
            if entry.amount > MAX_AMOUNT:
                raise ValueError(f"amount above {MAX_AMOUNT}: {entry.amount}")
            slot = 0
            if Pot.ACCOUNT in (entry.source, entry.dest):
                if entry.player not in index:
                    players.append(check_player(entry.player))
                    index[entry.player] = len(players)
                slot = index[entry.player]
            entry_args += [
                entry.key,
                entry.kind.value,
                entry.player,
                entry.amount,
                entry.source.value,
                entry.dest.value,
                slot,
            ]
        k = self.keys
        bucket = applied_bucket(new_version)
        script_keys = [
            k.table_lease(table_id),
            k.table_state(table_id),
            k.table_events(table_id),
            k.applied(table_id, bucket),
            k.applied(table_id, bucket - 1),
            k.applied(table_id, bucket - 2),
            k.ledger_stream(),
            k.money(),
            k.tables(),
            k.accounts(),
            *(k.account(p) for p in players),
            *(k.game_log(p) for p, _ in logs),
        ]
        if request is not None:
            script_keys.append(k.request(request.player, request.rid))
        args: list[str | int | bytes] = [
            token,
            expected_version,
            new_version,
            len(state),
            table_id,
            self.events_cap,
            self.ledger_maxlen,
            self.log_cap,
            publish_channel or "",
            APPLIED_TTL_MS,
            len(players),
            len(entries),
            len(events),
            len(logs),
            request.fingerprint if request is not None else "",
            request.memo if request is not None else "",
            REQUEST_TTL_MS,
            1 if request is not None else 0,
            commit_id if commit_id is not None else secrets.token_hex(8),
            *players,
            *entry_args,
        ]
        for seq, payload in events:
            args += [seq, payload]
        args += [record for _, record in logs]
        for name, part in state.items():
            args += [TABLE_PART_PREFIX + name, part]
        reply = await self._batch.call(self._commit, script_keys, args)
        status = as_str(reply[0])
        if status == "OK":
            return CommitResult(
                CommitStatus.OK,
                applied=int(reply[1]),
                skipped=int(reply[2]),
                accounts=_balances(players, reply[3:]),
            )
        if status == "DUPLICATE":
            return CommitResult(
                CommitStatus.DUPLICATE,
                stored_version=int(reply[1]),
                accounts=_balances(players, reply[2:]),
            )
        if status == "REPEATED":
            return CommitResult(
                CommitStatus.REPEATED,
                request=RequestRecord(
                    fingerprint=as_bytes(reply[1]),
                    memo=as_bytes(reply[2]),
                    account=int(reply[3]),
                    table_id=as_str(reply[4]),
                    version=int(reply[5]),
                ),
            )
        if status == "STALE_LEASE":
            current = as_str(reply[1])
            return CommitResult(
                CommitStatus.STALE_LEASE, lease_token=int(current) if current else None
            )
        if status == "STALE_VERSION":
            return CommitResult(CommitStatus.STALE_VERSION, stored_version=int(reply[1]))
        if status == "INSUFFICIENT":
            return CommitResult(
                CommitStatus.INSUFFICIENT,
                player=as_str(reply[1]),
                balance=int(reply[2]),
                needed=int(reply[3]),
            )
        if status == "BAD_SEQ":
            raise StoreError(f"table {table_id}: events must continue after seq {int(reply[1])}")
        raise StoreError(f"unexpected commit reply {reply!r}")

    # --- requests and accounts --------------------------------------------------

    async def request(self, player: str, rid: str) -> RequestRecord | None:
        """``player``'s request ``rid`` as recorded by the commit that applied it, or
        None if no commit did (within :data:`~server.store.keys.REQUEST_TTL_MS`)."""
        raw = await self.redis.hmget(self.keys.request(player, rid), ["f", "m", "a", "t", "v"])
        fingerprint, memo, account, table_id, version = raw
        if fingerprint is None:
            return None
        return RequestRecord(
            fingerprint=as_bytes(fingerprint),
            memo=as_bytes(memo or b""),
            account=as_int(account),
            table_id=as_str(table_id or b""),
            version=as_int(version),
        )

    # --- events -----------------------------------------------------------------

    async def events_since(self, table_id: str, seq: int) -> list[tuple[int, bytes]] | None:
        """The events after ``seq``, oldest first; None if the replay buffer no longer
        reaches back to ``seq + 1`` (or ``seq`` is not one of this table's): the caller
        then sends a snapshot.
        """
        if seq < 0:
            return None
        k = self.keys
        # One transaction: the last seq, the oldest kept and the newer ones agree.
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hget(k.table_state(table_id), "seq")
            pipe.xrange(k.table_events(table_id), min="-", max="+", count=1)
            pipe.xrange(k.table_events(table_id), min=f"{seq + 1}-0", max="+")
            last_raw, oldest, newer = await pipe.execute()
        last = as_int(last_raw)
        if seq == last:
            return []
        first = stream_entries(oldest)
        if seq > last or not first or _stream_seq(first[0][0]) > seq + 1:
            return None
        return [(_stream_seq(entry_id), fields["e"]) for entry_id, fields in stream_entries(newer)]

    # --- game logs --------------------------------------------------------------

    async def history(self, player: str, cursor: int | None = None, limit: int = 20) -> HistoryPage:
        """Up to ``limit`` of ``player``'s game logs, newest first, older than ``cursor``
        (None: from the newest). Pages are stable while new logs arrive.
        """
        if limit < 1:
            raise ValueError("limit is positive")
        if cursor is not None and cursor < 1:
            return HistoryPage([], None)
        raw = await self._history(keys=[self.keys.game_log(player)], args=[cursor or 0, limit + 1])
        items = [
            (int.from_bytes(item[:_ORDINAL_BYTES], "big"), item[_ORDINAL_BYTES:])
            for item in map(as_bytes, raw)
        ]
        if len(items) > limit:
            return HistoryPage(items[:limit], items[limit - 1][0])
        return HistoryPage(items, None)


def _balances(players: Sequence[str], values: Sequence[object]) -> dict[str, int]:
    """The script's account balances (one per player, in order) by player."""
    if len(values) != len(players):
        raise StoreError(f"expected {len(players)} balances from the commit, got {len(values)}")
    return {p: as_int(v) for p, v in zip(players, values, strict=True)}


def _stream_seq(entry_id: str) -> int:
    return int(entry_id.split("-", 1)[0])
