"""The audit's checks of the ledgers (:mod:`server.store.audit.check`, checks 3 and 4).

Each stream is replayed from the archive's checkpoint of it (zero without one) with
its entries after it: those in Redis, read first, and those in the archive after the
checkpoint (the archiver may move some meanwhile: they are in the archive when it is
read), each once by its id, up to the last entry of the audit's reading.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import redis.asyncio

from server.store.archiving.records import (
    CREDITED,
    REMOVED,
    AuditView,
    JackpotCheckpoint,
    LedgerRow,
    StreamCheckpoint,
    StreamId,
    format_id,
    parse_id,
)
from server.store.audit.report import AuditReport, listed
from server.store.chips.ledgers import read_ledger
from server.table.ledger import Pot

_MAX_ID: StreamId = (2**63 - 1, 2**63 - 1)


class ArchivedLedger(Protocol):
    """The archive, as the audit reads it (:class:`server.archive.Archive`)."""

    async def checkpoints(self) -> dict[str, StreamCheckpoint]: ...

    async def audit_view(
        self,
        after: Mapping[str, StreamId],
        through: Mapping[str, StreamId],
        keys: Mapping[str, Iterable[str]],
    ) -> AuditView: ...

    async def jackpot_checkpoints(self) -> dict[str, JackpotCheckpoint]: ...

    async def jackpot_rows(
        self, jackpot: str, after: StreamId, through: StreamId, stream: str = ""
    ) -> list[LedgerRow]: ...


@dataclass(slots=True)
class LedgerReading:
    """One ledger stream as of the audit's reading: whose it is (``owner``, a table if
    ``table``), the entries ever appended to it and its last id ('' : none), and the
    totals its replay must give (each pot's, :data:`~server.store.archiving.records.CREDITED`,
    :data:`~server.store.archiving.records.REMOVED`; None: unreadable, not checked)."""

    name: str
    owner: str
    table: bool
    appended: int
    last: str
    expected: dict[str, int] | None


@dataclass(slots=True)
class _Stream:
    reading: LedgerReading
    start: StreamCheckpoint  # the archive's checkpoint of it, or zero
    checkpointed: bool  # the archive has one
    rows: dict[StreamId, LedgerRow] = field(default_factory=dict)


async def check_ledgers(
    client: redis.asyncio.Redis,
    readings: list[LedgerReading],
    report: AuditReport,
    *,
    legacy: int,
    checkpoints: Mapping[str, StreamCheckpoint],
    archive: ArchivedLedger | None,
) -> None:
    """Checks 3 and 4 of the audit, each stream up to its last entry of the reading.
    ``legacy``: chips credited under the first key layout from a trimmed ledger (no
    replay is checked then)."""
    streams = []
    for r in readings:
        found = checkpoints.get(r.name)
        start = found.copy() if found is not None else StreamCheckpoint(r.name)
        streams.append(_Stream(r, start, found is not None))
    # Redis first: what the archiver moves meanwhile is in the archive when it is read.
    for st in streams:
        if st.reading.last:
            begin = st.start.position
            low = "-" if begin == (0, 0) else "(" + format_id(begin)
            name = st.reading.name
            async for found_id, fields in read_ledger(client, name, low, st.reading.last):
                row = LedgerRow.from_fields(name, found_id, fields)
                st.rows[row.entry_id] = row
    places: dict[str, dict[str, set[StreamId]]] = {r.name: defaultdict(set) for r in readings}
    if archive is not None:
        view = await archive.audit_view(
            {st.reading.name: st.start.position for st in streams},
            {r.name: parse_id(r.last) if r.last else _MAX_ID for r in readings},
            {st.reading.name: {row.key for row in st.rows.values()} for st in streams},
        )
        by_name = {st.reading.name: st for st in streams}
        for row in view.rows:
            by_name[row.stream].rows.setdefault(row.entry_id, row)
        for key, stream, entry_id in [*view.same_keys, *view.duplicates]:
            if stream in places:
                places[stream][key].add(entry_id)
    complete, lost, wrong = True, [], []
    tables = sum(r.table for r in readings)
    for st in streams:
        r = st.reading
        rows = [st.rows[i] for i in sorted(st.rows)]
        if not r.last:
            # Empty in Redis at the reading, read from the archive with no last id: those
            # appended up to the reading are the first ones after the checkpoint.
            rows = rows[: max(0, r.appended - st.start.entries)]
        for row in rows:
            places[r.name][row.key].add(row.entry_id)
        folded = st.start.copy()
        report.ledger_scanned += len(folded.fold(rows))
        report.ledger_entries += r.appended
        report.checkpoint_entries += st.start.entries
        if folded.entries != r.appended:
            complete = False
            if st.checkpointed:
                lost.append(
                    f"{r.name}: {r.appended} appended, the checkpoint ({st.start.entries}) "
                    f"and the entries after it ({len(rows)}) count {folded.entries}"
                )
        elif not legacy and r.expected is not None:
            wrong += _differences(r, folded, tables)
    _report_duplicates(report, places)
    if lost:
        report.problems.append(f"ledger entries lost: {listed(lost)}")
    if wrong:
        report.problems.append(f"balances differ from the ledgers: {listed(wrong)}")
    report.ledger_complete = complete and not legacy
    if not complete and not lost:
        report.notes.append(
            f"the ledger streams hold {report.ledger_scanned} of {report.ledger_entries} "
            "entries ever appended (trimmed): duplicates older than a stream's first entry "
            "and the replay of a trimmed stream are out of reach"
        )
    baselines = sum(st.start.baseline_ms is not None for st in streams)
    if baselines:
        report.notes.append(
            f"the replay of {baselines} ledger streams starts from their owners' totals, "
            "taken when the archive began (those streams had been trimmed before)"
        )
    if legacy:
        report.notes.append(
            f"{legacy} chips were credited before the ledgers were split by table and "
            "account, from a ledger already trimmed: the ledgers are not replayed"
        )


_ACCOUNT_TOTALS = ((Pot.ACCOUNT.value, "balance"), (CREDITED, "credited"), (REMOVED, "taken out"))


def _differences(r: LedgerReading, folded: StreamCheckpoint, tables: int) -> list[str]:
    """How the owner's totals differ from its stream's replay."""
    assert r.expected is not None
    pots, expected = folded.pots, r.expected
    if not r.table:
        return [
            f"{r.owner}: {what} {expected.get(pot, 0)}, ledger says {pots[pot]}"
            for pot, what in _ACCOUNT_TOTALS
            if pots[pot] != expected.get(pot, 0)
        ]
    return [
        f"{pot} total is {value} in the table states, the ledger says {pots[pot]}"
        if tables == 1
        else f"table {r.owner}: {pot} is {value}, its ledger says {pots[pot]}"
        for pot, value in expected.items()
        if pots[pot] != value
    ]


def _report_duplicates(
    report: AuditReport, places: Mapping[str, Mapping[str, set[StreamId]]]
) -> None:
    """Check 3: the keys found more than once in one stream."""
    duplicates: dict[str, list[str]] = defaultdict(list)
    for _, found in sorted(places.items()):
        for key, ids in sorted(found.items()):
            if len(ids) > 1:
                duplicates[key] += [format_id(i) for i in sorted(ids)]
    report.duplicates = dict(sorted(duplicates.items()))
    if duplicates:
        shown = [f"{k} ({', '.join(ids)})" for k, ids in report.duplicates.items()]
        report.problems.append(
            f"{len(duplicates)} ledger keys applied more than once: {listed(shown)}"
        )
