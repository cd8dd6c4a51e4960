"""The ``COMMIT`` script's side of a commit: a change as written (:class:`Write`)
checked, the transfers it starts or takes planned, the keys and arguments laid out as
the script's header (:mod:`server.store.lua.tables`) says, and its reply read back."""

from __future__ import annotations

import enum
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from server.auth.tokens import check_player
from server.store.chips.records import (
    LOG,
    ClientRequest,
    Delivery,
    Incoming,
    RequestRecord,
    pack_logs,
    read_record,
)
from server.store.client.replies import as_str
from server.store.errors import StoreError
from server.store.keys import (
    APPLIED_TTL_MS,
    REQUEST_TTL_MS,
    TABLE_PART_PREFIX,
    Keys,
    applied_bucket,
    consults_previous,
)
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
    INSUFFICIENT = "insufficient"  # an account could not pay; nothing written
    REPEATED = "repeated"  # the commit's request was already applied; nothing written
    REUSED = "reused"  # the request's rid was claimed by another request; nothing written


@dataclass(frozen=True, slots=True)
class CommitResult:
    """The outcome of a commit (:meth:`~server.store.tables.commit.Commits.write`).

    ``applied``/``skipped``: entries applied, and entries skipped because their key
    was already applied (OK only). ``stored_version``: the version found (for
    STALE_VERSION and DUPLICATE). ``lease_token``: the current lease's token, None if
    no lease (STALE_LEASE). ``player``, ``balance``, ``needed``: the account that could
    not pay, its balance and the amount the commit wanted of it (INSUFFICIENT).
    ``accounts``: player -> account balance, for the requester and every account the
    commit paid or took chips from: right after it (OK), as they are now
    (DUPLICATE); empty otherwise, and without the accounts a failed step left unknown.
    ``request``: the record of the request already applied (REPEATED).
    ``pending``: a step after the commit failed (an account not yet paid, say): the
    table's holder must recover its transfers
    (:meth:`~server.store.chips.transfers.Transfers.recover`).
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
    pending: bool = False
    taken: tuple[str, ...] = ()  # the transfers from accounts the commit took (OK)

    @property
    def ok(self) -> bool:
        """Whether the new state is stored (now or by an earlier identical commit)."""
        return self.status in (CommitStatus.OK, CommitStatus.DUPLICATE)

    @property
    def stale(self) -> bool:
        """Whether the caller lost the table (lease or version): reload before anything."""
        return self.status in (CommitStatus.STALE_LEASE, CommitStatus.STALE_VERSION)


@dataclass(frozen=True, slots=True)
class Write:
    """One change of a table as the store writes it (see
    :meth:`~server.store.tables.commit.Commits.write`): under lease ``token``, version
    ``new_version`` over ``expected_version`` (0 for a new table), ``parts`` of the state
    that differ from those stored, the ledger ``entries``, the ``events``
    ``(seq, bytes)``, the game ``logs`` ``(player, record)``, the client ``request``
    that caused it, the channel its events are published on (None: not published), and
    the id that names the commit (None: a new one)."""

    table_id: str
    token: int
    expected_version: int
    new_version: int
    parts: Mapping[str, bytes]
    entries: Sequence[LedgerEntry] = ()
    events: Sequence[tuple[int, bytes]] = ()
    logs: Sequence[tuple[str, bytes]] = ()
    request: ClientRequest | None = None
    publish_channel: str | None = None
    commit_id: str | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    """The transfers of one commit: one per entry (its id, and the packed delivery for
    chips to an account; ``('', b'')`` for an entry between the table's own pots, or a
    key met earlier in the commit), the ``incoming`` ones among them, the chips
    ``out``, the game ``logs``, and ``payout``, the requester's first chips out.
    ``log_entry``: the name of the entry of the table's ``logs`` hash that holds the
    game logs until delivered (the first one's transfer id; '' for none)."""

    per_entry: list[tuple[str, bytes]]
    incoming: list[Incoming]
    out: list[Delivery]
    logs: list[Delivery]
    payout: str = ""

    @property
    def log_entry(self) -> str:
        """See the class docstring."""
        return self.logs[0].transfer_id if self.logs else ""


def transfer_id(table_id: str, version: int, token: int, commit_id: str, index: int) -> str:
    """The id of a commit's ``index``-th transfer: the same for a retry of the same commit
    (so that each of its steps, done again, changes nothing), unique otherwise."""
    return f"{table_id}.{version}.{index}.{token}.{commit_id}"


def plan_transfers(w: Write, commit_id: str) -> Plan:
    """The transfers the commit ``commit_id`` of ``w`` starts or takes."""
    table_id, version, token, request = w.table_id, w.new_version, w.token, w.request
    per_entry: list[tuple[str, bytes]] = []
    incoming: list[Incoming] = []
    out: list[Delivery] = []
    seen: set[str] = set()
    index = 0
    for entry in w.entries:
        if entry.key in seen or Pot.ACCOUNT not in (entry.source, entry.dest):
            per_entry.append(("", b""))
            seen.add(entry.key)
            continue
        seen.add(entry.key)
        xid = transfer_id(table_id, version, token, commit_id, index)
        index += 1
        if entry.source is Pot.ACCOUNT:
            incoming.append(Incoming(xid, entry.player, entry.amount, entry.kind.value, entry.key))
            per_entry.append((xid, b""))
        else:
            d = Delivery(xid, entry.player, entry.kind.value, entry.amount, entry.key)
            out.append(d)
            per_entry.append((xid, d.pack()))
    log_items = []
    for player, record in w.logs:
        xid = transfer_id(table_id, version, token, commit_id, index)
        index += 1
        log_items.append(Delivery(xid, player, LOG, record=record))
    payout = ""
    if request is not None:
        payout = next((d.transfer_id for d in out if d.player == request.player), "")
    return Plan(per_entry, incoming, out, log_items, payout)


def check_arguments(w: Write) -> None:
    """Raise ``ValueError`` unless ``w`` keeps a commit's contract: the version grows,
    at least one named part, event numbers from 1 without a gap, a request with a
    fingerprint, amounts Lua can hold, and player names fit for keys."""
    state, events, request = w.parts, w.events, w.request
    if w.new_version <= w.expected_version or w.expected_version < 0:
        raise ValueError("the new version must be above the expected one")
    if not state or not all(state):
        raise ValueError("a commit writes at least one part, each with a name")
    for i in range(1, len(events)):
        if events[i][0] != events[i - 1][0] + 1:
            raise ValueError("event sequence numbers follow each other")
    if events and events[0][0] < 1:
        raise ValueError("event sequence numbers start at 1")
    for player, _ in w.logs:
        check_player(player)  # a name becomes part of a key
    if request is not None:
        if not request.fingerprint:
            raise ValueError("a request's fingerprint is not empty")
        check_player(request.player)
    for entry in w.entries:
        if entry.amount > MAX_AMOUNT:
            raise ValueError(f"amount above {MAX_AMOUNT}: {entry.amount}")
        if Pot.ACCOUNT in (entry.source, entry.dest):
            check_player(entry.player)


def script_keys(
    keys: Keys, table_id: str, new_version: int, request: ClientRequest | None
) -> list[str]:
    """The ``COMMIT`` script's keys: the table's own, every one in the table's slot."""
    names = list(_table_keys(keys, table_id, applied_bucket(new_version)))
    if request is not None:
        names.append(keys.table_request(table_id, request.player, request.rid))
    return names


@functools.lru_cache(maxsize=1 << 14)
def _table_keys(k: Keys, table_id: str, bucket: int) -> tuple[str, ...]:
    # Cached: the same ten names for every commit of a table within an applied window.
    return (
        k.table_lease(table_id),
        k.table_state(table_id),
        k.table_events(table_id),
        k.applied(table_id, bucket),
        k.applied(table_id, bucket - 1),
        k.applied(table_id, bucket - 2),
        k.table_ledger(table_id),
        k.transfers_in(table_id),
        k.transfers_out(table_id),
        k.logs_out(table_id),
    )


def script_args(
    w: Write,
    plan: Plan,
    *,
    account: int | None,
    caps: tuple[int, int],
    commit_id: str,
    now_ms: int,
) -> list[Arg]:
    """The ``COMMIT`` script's arguments for ``w``, planned as ``plan``, the requester's
    ``account`` balance if known, the store's ``caps`` (events kept per table, ledger
    stream length): 22 numbers and texts (the commit's own, the caps and time limits,
    how many of each item follow), then 8 per entry, 2 per event, 2 for the game logs,
    if any (:func:`~server.store.chips.records.pack_logs`), and 2 per part of the
    state."""
    state, entries, events, request = w.parts, w.entries, w.events, w.request
    expected_version, new_version = w.expected_version, w.new_version
    events_cap, ledger_maxlen = caps
    args: list[Arg] = [
        w.token,
        expected_version,
        new_version,
        len(state),
        w.table_id,
        events_cap,
        ledger_maxlen,
        w.publish_channel or "",
        APPLIED_TTL_MS,
        len(entries),
        len(events),
        1 if plan.logs else 0,
        request.fingerprint if request is not None else "",
        request.memo if request is not None else "",
        REQUEST_TTL_MS,
        "" if account is None else account,
        plan.payout,
        commit_id,
        "1" if applied_bucket(new_version) != applied_bucket(expected_version) else "",
        applied_bucket(new_version),
        now_ms,
        "1" if consults_previous(new_version) else "",
    ]
    for entry, (xid, packed) in zip(entries, plan.per_entry, strict=True):
        args += [
            entry.key,
            entry.kind.value,
            entry.player,
            entry.amount,
            entry.source.value,
            entry.dest.value,
            xid,
            packed,
        ]
    for seq, payload in events:
        args += [seq, payload]
    if plan.logs:
        args += [plan.log_entry, pack_logs(plan.logs)]
    for name, part in state.items():
        args += [TABLE_PART_PREFIX + name, part]
    return args


def read_reply(table_id: str, reply: Any) -> CommitResult:
    """The :class:`CommitResult` of the script's ``reply``; raises :class:`StoreError`
    for a reply that breaks the contract (``BAD_SEQ``: the events do not follow the
    stored ones; ``VOIDED``: a transfer the caller did not open)."""
    status = as_str(reply[0])
    if status == "OK":
        taken = tuple(as_str(x) for x in reply[3:])
        return CommitResult(
            CommitStatus.OK, applied=int(reply[1]), skipped=int(reply[2]), taken=taken
        )
    if status == "DUPLICATE":
        return CommitResult(CommitStatus.DUPLICATE, stored_version=int(reply[1]))
    if status == "REPEATED":
        return CommitResult(CommitStatus.REPEATED, request=read_record(table_id, reply[1:]))
    if status == "STALE_LEASE":
        current = as_str(reply[1])
        return CommitResult(CommitStatus.STALE_LEASE, lease_token=int(current) if current else None)
    if status == "STALE_VERSION":
        return CommitResult(CommitStatus.STALE_VERSION, stored_version=int(reply[1]))
    if status == "BAD_SEQ":
        raise StoreError(f"table {table_id}: events must continue after seq {int(reply[1])}")
    if status == "VOIDED":
        raise StoreError(f"table {table_id}: transfer {as_str(reply[1])} is not open")
    raise StoreError(f"unexpected commit reply {reply!r}")
