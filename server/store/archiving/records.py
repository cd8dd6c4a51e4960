"""What the archive holds: ledger entries, game logs and the checkpoints, as plain records.

A ledger entry keeps its stream and its Redis entry id (``ms-seq``, compared as a pair
of integers): the id is the entry's primary key in the archive, so an entry copied
twice (a crash between the copy and the trim of Redis) is stored once. A game log
keeps its player and ordinal, its primary key for the same reason.

Each ledger stream (a table's or an account's, :meth:`server.store.keys.Keys.ledger_streams`)
has its own :class:`StreamCheckpoint`: the sum of its entries up to an id, as each pot's
net total, the chips credited from outside and taken back out, and how many entries it
folded. The audit starts each stream from it and replays only the entries after it
(docs/DESIGN.md, "The archive"). The archive itself is :mod:`server.archive`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgpack

from server.store.players.accounts import CREDIT_KIND, OUTSIDE

StreamId = tuple[int, int]
"""A Redis stream entry id ``ms-seq`` as two integers, ordered as Redis orders them."""

ZERO_ID: StreamId = (0, 0)

LEDGER_FIELDS = ("key", "kind", "player", "amount", "source", "dest", "table")

PACKED = "m"
"""The one field of a ledger entry written as an array (the ``COMMIT`` script's)."""

PACKED_FIELDS = (*LEDGER_FIELDS, "xfer")
"""What the array of a :data:`PACKED` entry holds, in order (``xfer`` only where the
entry moves chips to or from an account)."""
_PACKED_KEY = PACKED.encode()
_PLAYER_AT = PACKED_FIELDS.index("player")

CREDITED = "credited"
"""The total of a checkpoint's pots that counts chips credited from outside."""
REMOVED = "removed"
"""The total of a checkpoint's pots that counts chips taken back outside (a guest closed)."""


def parse_id(text: str) -> StreamId:
    """``"1700000000000-3"`` -> ``(1700000000000, 3)``."""
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


def format_id(entry_id: StreamId) -> str:
    """``(1700000000000, 3)`` -> ``"1700000000000-3"``."""
    return f"{entry_id[0]}-{entry_id[1]}"


def next_id(entry_id: StreamId) -> StreamId:
    """The smallest id after ``entry_id`` (what ``XTRIM MINID`` keeps from)."""
    return entry_id[0], entry_id[1] + 1


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One ledger entry of stream ``stream``, id ``entry_id``.

    ``extra``: the entry's other fields as JSON ("" when it has none): the transfer
    id ``xfer`` of a movement between an account and a table, for one.
    """

    stream: str
    entry_id: StreamId
    key: str
    kind: str
    player: str
    amount: int
    source: str
    dest: str
    table_id: str
    extra: str = ""

    @staticmethod
    def from_fields(stream: str, entry_id: str, fields: Mapping[str, bytes]) -> LedgerRow:
        """The row of a stream entry as XRANGE reads it: a field a value (``key``,
        ``kind``...), or one field ``m``, the msgpack array of :data:`PACKED_FIELDS`
        (the commits' entries since issue 16)."""
        packed = fields.get(PACKED)
        if packed is not None:
            values = msgpack.unpackb(packed, raw=False)
            text = dict(zip(PACKED_FIELDS, values, strict=False))
        else:
            text = {name: value.decode() for name, value in fields.items()}
        others = {k: v for k, v in text.items() if k not in LEDGER_FIELDS}
        return LedgerRow(
            stream=stream,
            entry_id=parse_id(entry_id),
            key=text.get("key", ""),
            kind=text.get("kind", ""),
            player=text.get("player", ""),
            amount=int(text.get("amount", "0")),
            source=text.get("source", ""),
            dest=text.get("dest", ""),
            table_id=text.get("table", ""),
            extra=json.dumps(others, sort_keys=True) if others else "",
        )


def ledger_players(reply: Any) -> tuple[set[str], StreamId | None, int]:
    """The players named by the ledger entries of an XRANGE reply (bytes), the last
    entry's id and how many entries it held: what the archive notes of every entry
    appended since its last pass, read without building a :class:`LedgerRow` each."""
    players: set[str] = set()
    last: bytes | None = None
    count = 0
    for entry_id, read in reply or ():
        if entry_id is None:
            continue
        count += 1
        last = entry_id
        fields = read or {}
        packed = fields.get(_PACKED_KEY)
        if packed is not None:
            values = msgpack.unpackb(packed, raw=False)
            players.add(values[_PLAYER_AT] if len(values) > _PLAYER_AT else "")
        else:  # as LedgerRow.from_fields reads it
            player = fields.get(b"player")
            players.add(player.decode() if player is not None else "")
    return players, (parse_id(last.decode()) if last is not None else None), count


@dataclass(frozen=True, slots=True)
class LogRow:
    """One game log: ``player``'s record number ``ordinal`` (a protocol ``RoundRecord``)."""

    player: str
    ordinal: int
    table_id: str
    ended_ms: int
    record: bytes


@dataclass(frozen=True, slots=True)
class AuditView:
    """What the audit reads from the archive, in one snapshot: the ledger rows after the
    checkpoints it was given (up to the ids asked for), every archived row of the same
    stream sharing a key with the ``keys`` asked about or with those rows, as ``(key,
    stream, id)``, and the duplicates found while archiving, likewise."""

    rows: list[LedgerRow]
    same_keys: list[tuple[str, str, StreamId]]
    duplicates: list[tuple[str, str, StreamId]]


@dataclass(slots=True)
class StreamCheckpoint:
    """The sum of ``stream``'s entries up to id ``position`` (``(0, 0)``: none yet).

    ``pots``: each pot's net total (chips in less chips out), and :data:`CREDITED` and
    :data:`REMOVED`. ``baseline_ms``: None when the sum starts from the stream's first
    entry; else when it was taken from the owner's own totals (its table state, or its
    account's balance and totals), the stream having been trimmed (by its length bound)
    before the archive began.
    """

    stream: str
    position: StreamId = ZERO_ID
    entries: int = 0
    pots: Counter[str] = field(default_factory=Counter)
    baseline_ms: int | None = None

    def fold(self, rows: Iterable[LedgerRow]) -> list[LedgerRow]:
        """Add this stream's rows after the position (in id order); those at or before
        it are skipped. Returns the rows added."""
        added = []
        for row in rows:
            if row.stream != self.stream or row.entry_id <= self.position:
                continue
            self.position = row.entry_id
            self.entries += 1
            self.pots[row.source] -= row.amount
            self.pots[row.dest] += row.amount
            if row.source == OUTSIDE and row.kind == CREDIT_KIND:
                self.pots[CREDITED] += row.amount
            if row.dest == OUTSIDE:
                self.pots[REMOVED] += row.amount
            added.append(row)
        return added

    def copy(self) -> StreamCheckpoint:
        """A copy to fold more rows into."""
        return StreamCheckpoint(
            self.stream, self.position, self.entries, Counter(self.pots), self.baseline_ms
        )

    def totals(self) -> str:
        """The pots as JSON (the archive keeps the rest in columns)."""
        return json.dumps({k: v for k, v in self.pots.items() if v}, sort_keys=True)

    @staticmethod
    def read_totals(text: str) -> Counter[str]:
        """The pots of :meth:`totals`."""
        return Counter({k: int(v) for k, v in json.loads(text).items()})


JACKPOT_KINDS = {"seed": "seeded", "contribution": "contributed", "hit": "paid"}
"""A jackpot ledger entry's kind -> the meter's total it adds to."""


@dataclass(slots=True)
class JackpotCheckpoint:
    """The sum of jackpot ``jackpot``'s ledger entries up to id ``position`` (``(0, 0)``:
    none yet), by the meter's totals (:data:`JACKPOT_KINDS`), and how many it folded.

    ``baseline_ms``: None when the sum starts from the ledger's first entry; else when
    it was taken from the meter's own totals, its ledger having been trimmed (by its
    length bound) before the archive began. An entry of another kind is counted in
    ``unknown`` (the audit reports it)."""

    jackpot: str
    position: StreamId = ZERO_ID
    entries: int = 0
    seeded: int = 0
    contributed: int = 0
    paid: int = 0
    unknown: int = 0
    baseline_ms: int | None = None

    def fold(self, rows: Iterable[LedgerRow]) -> list[LedgerRow]:
        """Add the rows after the position (in id order); those at or before it are
        skipped. Returns the rows added."""
        added = []
        for row in rows:
            if row.entry_id <= self.position:
                continue
            self.position = row.entry_id
            self.entries += 1
            total = JACKPOT_KINDS.get(row.kind)
            if total == "seeded":
                self.seeded += row.amount
            elif total == "contributed":
                self.contributed += row.amount
            elif total == "paid":
                self.paid += row.amount
            else:
                self.unknown += 1
            added.append(row)
        return added

    def copy(self) -> JackpotCheckpoint:
        """A copy to fold more rows into."""
        return JackpotCheckpoint(
            self.jackpot,
            self.position,
            self.entries,
            self.seeded,
            self.contributed,
            self.paid,
            self.unknown,
            self.baseline_ms,
        )
