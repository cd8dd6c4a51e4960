"""What the archive holds: ledger entries, game logs and the checkpoint, as plain records.

A ledger entry keeps its stream and its Redis entry id (``ms-seq``, compared as a pair
of integers): the id is the entry's primary key in the archive, so an entry copied
twice (a crash between the copy and the trim of Redis) is stored once. A game log
keeps its player and ordinal, its primary key for the same reason.

The :class:`Checkpoint` sums every ledger entry up to a position in each stream: each
account's balance, each pot's total, the chips credited from outside and taken back
out, and how many entries it folded. The audit starts from it and replays only the
entries after it (docs/DESIGN.md, "The archive"). The archive itself is :mod:`server.archive`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from server.store.accounts import CREDIT_KIND, OUTSIDE
from server.table.ledger import Pot

StreamId = tuple[int, int]
"""A Redis stream entry id ``ms-seq`` as two integers, ordered as Redis orders them."""

ZERO_ID: StreamId = (0, 0)

ACCOUNT = Pot.ACCOUNT.value
LEDGER_FIELDS = ("key", "kind", "player", "amount", "source", "dest", "table")


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

    ``extra``: the entry's other fields as JSON ("" when it has none), so that a
    stream with more fields (a transfer between streams, say) archives them too.
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
        """The row of a stream entry as XRANGE reads it."""
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
    checkpoint it was given (up to the ids asked for), every archived row sharing a key
    with the ``keys`` asked about or with those rows, as ``(key, stream, id)``, and the
    duplicates found while archiving, likewise."""

    rows: list[LedgerRow]
    same_keys: list[tuple[str, str, StreamId]]
    duplicates: list[tuple[str, str, StreamId]]


@dataclass(slots=True)
class Checkpoint:
    """The sum of the ledger up to ``positions`` (stream -> last id folded in; a stream
    not named is folded from its start).

    ``baseline_ms``: None when the sum starts from the first entry ever appended; else
    when it was taken from Redis's own totals, the ledger before it having been trimmed
    (by its length bound) before the archive existed.
    """

    positions: dict[str, StreamId] = field(default_factory=dict)
    entries: int = 0
    credited: int = 0
    removed: int = 0
    pots: Counter[str] = field(default_factory=Counter)
    balances: Counter[str] = field(default_factory=Counter)
    baseline_ms: int | None = None

    def position(self, stream: str) -> StreamId:
        """The last id folded in from ``stream``."""
        return self.positions.get(stream, ZERO_ID)

    def fold(self, rows: Iterable[LedgerRow]) -> list[LedgerRow]:
        """Add the rows after this checkpoint's positions (each stream's rows in id
        order); those at or before are skipped. Returns the rows added."""
        added = []
        for row in rows:
            if row.entry_id <= self.position(row.stream):
                continue
            self.positions[row.stream] = row.entry_id
            self.entries += 1
            self.pots[row.source] -= row.amount
            self.pots[row.dest] += row.amount
            if row.source == ACCOUNT:
                self.balances[row.player] -= row.amount
            if row.dest == ACCOUNT:
                self.balances[row.player] += row.amount
            if row.source == OUTSIDE and row.kind == CREDIT_KIND:
                self.credited += row.amount
            if row.dest == OUTSIDE:
                self.removed += row.amount
            added.append(row)
        return added

    def header(self) -> str:
        """Everything but the balances, as JSON (the archive keeps balances in rows)."""
        return json.dumps(
            {
                "positions": {s: format_id(i) for s, i in self.positions.items()},
                "entries": self.entries,
                "credited": self.credited,
                "removed": self.removed,
                "pots": dict(self.pots),
                "baseline_ms": self.baseline_ms,
            },
            sort_keys=True,
        )

    @staticmethod
    def from_header(text: str, balances: Mapping[str, int]) -> Checkpoint:
        """The checkpoint of a :meth:`header` and its balances."""
        data = json.loads(text)
        return Checkpoint(
            positions={s: parse_id(i) for s, i in data["positions"].items()},
            entries=int(data["entries"]),
            credited=int(data["credited"]),
            removed=int(data["removed"]),
            pots=Counter({k: int(v) for k, v in data["pots"].items()}),
            balances=Counter(dict(balances)),
            baseline_ms=data["baseline_ms"],
        )
