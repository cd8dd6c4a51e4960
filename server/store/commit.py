"""Storing one state change of a table, atomically: the commit, in a few named steps.

:meth:`CommitCalls.commit` checks its arguments, gathers the accounts the change
touches, builds the ``COMMIT`` script's keys and arguments (their layout is the
script's header in :mod:`server.store.scripts`) and reads its reply into a
:class:`CommitResult`. The script writes the new state only if the caller's token is
the current lease's and the stored version is the one the caller started from, and
applies the change's ledger entries in the same step, so a stale owner never
overwrites a newer state and a retried commit never moves chips twice
(docs/DESIGN.md, "The commit: one Lua script").
"""

from __future__ import annotations

import enum
import secrets
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.commands.core import AsyncScript

from server.auth.tokens import check_player
from server.store.batching import ScriptBatcher
from server.store.errors import StoreError, Unreplicated
from server.store.keys import (
    APPLIED_TTL_MS,
    REQUEST_TTL_MS,
    TABLE_PART_PREFIX,
    Keys,
    applied_bucket,
)
from server.store.replies import as_bytes, as_int, as_str
from server.store.requests import ClientRequest, RequestRecord
from server.table.ledger import LedgerEntry, Pot

MAX_AMOUNT = 10**15
"""The largest chip amount of one ledger entry (amounts cross into Lua as doubles)."""

Arg = str | int | bytes
"""One argument of a script call."""


class CommitStatus(enum.Enum):
    """What became of a commit."""

    OK = "ok"  # written
    DUPLICATE = "duplicate"  # this very commit was already stored; nothing written
    STALE_LEASE = "stale_lease"  # the token is not the current lease's; nothing written
    STALE_VERSION = "stale_version"  # the stored version differs; nothing written
    INSUFFICIENT = "insufficient"  # an account would go negative; nothing written
    REPEATED = "repeated"  # the commit's request was already applied; nothing written


@dataclass(frozen=True, slots=True)
class CommitResult:
    """The outcome of :meth:`CommitCalls.commit`.

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


class CommitCalls:
    """The commit method of :class:`~server.store.tables.TableStore`, which sets the
    key names, the caps, the batcher and the ``COMMIT`` script declared here."""

    keys: Keys
    events_cap: int
    log_cap: int
    ledger_maxlen: int
    _batch: ScriptBatcher
    _commit: AsyncScript

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
        whole (:attr:`~server.store.tables.StoredTable.whole`) gives every part: it
        deletes the whole.

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
        :func:`~server.store.replay.encode_published`), and each ``(player, record)``
        in ``logs`` is pushed to the player's capped game log; ``request`` is
        recorded, with the requester's balance after the commit, for
        :data:`~server.store.keys.REQUEST_TTL_MS`. OK and DUPLICATE carry the balance
        of every account the entries touch and of the requester
        (:attr:`CommitResult.accounts`).

        Raises ``ValueError`` for arguments that break this contract,
        :class:`~server.store.errors.StoreError` if the event numbers do not follow
        the stored ones, and :class:`~server.store.errors.Unreplicated` (its ``reply``
        the OK or DUPLICATE result) if the store waits for replicas and none
        acknowledged the commit in time: it is stored on the primary, not safe from a
        failover, and must not be acknowledged.
        """
        check_arguments(expected_version, new_version, state, entries, events, logs, request)
        accounts = touched_accounts(entries, request)
        keys = script_keys(self.keys, table_id, new_version, accounts, logs, request)
        args = script_args(
            table_id,
            token=token,
            expected_version=expected_version,
            new_version=new_version,
            state=state,
            accounts=accounts,
            entries=entries,
            events=events,
            logs=logs,
            request=request,
            events_cap=self.events_cap,
            ledger_maxlen=self.ledger_maxlen,
            log_cap=self.log_cap,
            publish_channel=publish_channel,
            commit_id=commit_id,
        )
        try:
            reply = await self._batch.call(self._commit, keys, args, durable=True)
        except Unreplicated as exc:
            result = read_reply(table_id, accounts, exc.reply)
            if result.ok:
                raise Unreplicated(result) from None
            return result  # a refusal wrote nothing
        return read_reply(table_id, accounts, reply)


def check_arguments(
    expected_version: int,
    new_version: int,
    state: Mapping[str, bytes],
    entries: Sequence[LedgerEntry],
    events: Sequence[tuple[int, bytes]],
    logs: Sequence[tuple[str, bytes]],
    request: ClientRequest | None,
) -> None:
    """Raise ``ValueError`` unless a commit's arguments keep its contract: the version
    grows, at least one named part, event numbers from 1 without a gap, a request with
    a fingerprint, amounts Lua can hold, and player names fit for keys."""
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
    if request is not None:
        if not request.fingerprint:
            raise ValueError("a request's fingerprint is not empty")
        check_player(request.player)
    for entry in entries:
        if entry.amount > MAX_AMOUNT:
            raise ValueError(f"amount above {MAX_AMOUNT}: {entry.amount}")
        if Pot.ACCOUNT in (entry.source, entry.dest):
            check_player(entry.player)


def touched_accounts(
    entries: Sequence[LedgerEntry], request: ClientRequest | None
) -> dict[str, int]:
    """Player -> index (from 1) of each account the commit reads or changes, in the
    order the script receives them: the requester's first (their balance is part of
    every reply, moved or not), then each player of an entry with an account side."""
    accounts: dict[str, int] = {}
    if request is not None:
        accounts[request.player] = 1
    for entry in entries:
        if entry.player not in accounts and Pot.ACCOUNT in (entry.source, entry.dest):
            accounts[entry.player] = len(accounts) + 1
    return accounts


def script_keys(
    keys: Keys,
    table_id: str,
    new_version: int,
    accounts: Collection[str],
    logs: Sequence[tuple[str, bytes]],
    request: ClientRequest | None,
) -> list[str]:
    """The ``COMMIT`` script's keys: the table's, the product's, then one per account,
    one per game log and the request's record."""
    k = keys
    bucket = applied_bucket(new_version)
    names = [
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
        *(k.account(p) for p in accounts),
        *(k.game_log(p) for p, _ in logs),
    ]
    if request is not None:
        names.append(k.request(request.player, request.rid))
    return names


def script_args(
    table_id: str,
    *,
    token: int,
    expected_version: int,
    new_version: int,
    state: Mapping[str, bytes],
    accounts: Mapping[str, int],
    entries: Sequence[LedgerEntry],
    events: Sequence[tuple[int, bytes]],
    logs: Sequence[tuple[str, bytes]],
    request: ClientRequest | None,
    events_cap: int,
    ledger_maxlen: int,
    log_cap: int,
    publish_channel: str | None,
    commit_id: str | None,
) -> list[Arg]:
    """The ``COMMIT`` script's arguments: 19 numbers and texts (the commit's own, the
    store's caps and time limits, and how many of each item follow), then the account
    players, 7 per entry, 2 per event, 1 per game log and 2 per part of the state."""
    args: list[Arg] = [
        token,
        expected_version,
        new_version,
        len(state),
        table_id,
        events_cap,
        ledger_maxlen,
        log_cap,
        publish_channel or "",
        APPLIED_TTL_MS,
        len(accounts),
        len(entries),
        len(events),
        len(logs),
        request.fingerprint if request is not None else "",
        request.memo if request is not None else "",
        REQUEST_TTL_MS,
        1 if request is not None else 0,  # the requester's account index
        commit_id if commit_id is not None else secrets.token_hex(8),
        *accounts,
    ]
    for entry in entries:
        has_account = Pot.ACCOUNT in (entry.source, entry.dest)
        args += [
            entry.key,
            entry.kind.value,
            entry.player,
            entry.amount,
            entry.source.value,
            entry.dest.value,
            accounts[entry.player] if has_account else 0,
        ]
    for seq, payload in events:
        args += [seq, payload]
    args += [record for _, record in logs]
    for name, part in state.items():
        args += [TABLE_PART_PREFIX + name, part]
    return args


def read_reply(table_id: str, accounts: Collection[str], reply: Any) -> CommitResult:
    """The :class:`CommitResult` of the script's ``reply`` (with the balances of
    ``accounts``, in order); raises :class:`StoreError` for a reply that breaks the
    contract (``BAD_SEQ``: the events do not follow the stored ones)."""
    status = as_str(reply[0])
    if status == "OK":
        return CommitResult(
            CommitStatus.OK,
            applied=int(reply[1]),
            skipped=int(reply[2]),
            accounts=_balances(accounts, reply[3:]),
        )
    if status == "DUPLICATE":
        return CommitResult(
            CommitStatus.DUPLICATE,
            stored_version=int(reply[1]),
            accounts=_balances(accounts, reply[2:]),
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
        return CommitResult(CommitStatus.STALE_LEASE, lease_token=int(current) if current else None)
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


def _balances(accounts: Collection[str], values: Sequence[object]) -> dict[str, int]:
    """The script's account balances (one per account, in order) by player."""
    if len(values) != len(accounts):
        raise StoreError(f"expected {len(accounts)} balances from the commit, got {len(values)}")
    return {p: as_int(v) for p, v in zip(accounts, values, strict=True)}
