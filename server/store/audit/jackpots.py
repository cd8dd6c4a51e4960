"""The audit of the progressive jackpots (:mod:`server.store.jackpot.meters`).

Each jackpot is read as of one instant (``JACKPOT_SNAPSHOT``, in its slot): its meter
and totals, the hits on their way to accounts, its ledger's last id. The audit checks:

- the meter is what its totals say: ``seeded + contributed - paid`` (a meter changed
  behind the scripts' back fails this, or the replay below);
- its ledger, replayed up to that last id from the archive's checkpoint of it (the sum
  of its archived entries; zero without an archive), with its entries after it in
  Redis and in the archive, gives the same totals and counts every entry ever appended
  (``n``), with no ledger key twice among the entries replayed;
- and, for the conservation of the whole store (:mod:`server.store.audit.check`): the
  chips on the meter are held, the seeds and contributions are the house's result
  (negative: the house gave them), a hit whose account does not have it yet is in
  transit to the account.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis.asyncio

from server.store.archiving.records import (
    JACKPOT_KINDS,
    JackpotCheckpoint,
    LedgerRow,
    StreamId,
    format_id,
    parse_id,
)
from server.store.audit.ledgers import ArchivedLedger
from server.store.audit.report import AuditReport, listed
from server.store.chips.ledgers import read_ledger
from server.store.client.replies import as_str
from server.store.jackpot.meters import Meter, PendingHit, read_meter, read_pending
from server.store.keys import Keys


@dataclass(slots=True)
class JackpotReading:
    """One jackpot as of one instant."""

    meter: Meter
    out: list[PendingHit]
    last: str  # its ledger's last id ('' : none)


async def read_jackpots(
    client: redis.asyncio.Redis, keys: Keys, snapshot_sha: str
) -> dict[str, JackpotReading]:
    """Every jackpot ever started, each as of one instant."""
    names = sorted(as_str(m) for m in await client.smembers(keys.jackpots()))
    out = {}
    for name in names:
        jk = [keys.jackpot(name), keys.jackpot_out(name), keys.jackpot_ledger(name)]
        fields, pending, last = await client.evalsha(snapshot_sha, len(jk), *jk)
        out[name] = JackpotReading(
            read_meter(name, _pairs(fields)), read_pending(_pairs(pending)), as_str(last)
        )
    return out


def _pairs(flat: Any) -> dict[bytes, bytes]:
    return dict(zip(flat[::2], flat[1::2], strict=True))


def sign(jackpots: dict[str, JackpotReading]) -> tuple[Any, ...]:
    """What changes whenever a hit's chips cross from a jackpot to an account."""
    return tuple(
        (name, r.meter.paid, tuple(sorted(h.transfer_id for h in r.out)))
        for name, r in sorted(jackpots.items())
    )


def count_jackpots(
    report: AuditReport, jackpots: dict[str, JackpotReading], markers: dict[str, dict[str, str]]
) -> None:
    """The jackpots' part of the conservation check; ``markers``: player -> transfer id
    -> the account's marker of it ('' : none)."""
    report.jackpots = len(jackpots)
    for name, r in sorted(jackpots.items()):
        m = r.meter
        report.meters_total += m.meter
        report.jackpot_house_total -= m.seeded + m.contributed
        if m.meter != m.seeded + m.contributed - m.paid:
            report.problems.append(
                f"jackpot {name}: the meter shows {m.meter}, but {m.seeded} seeded + "
                f"{m.contributed} contributed - {m.paid} paid = "
                f"{m.seeded + m.contributed - m.paid}"
            )
        if m.meter < 0 or m.frac < 0 or m.frac >= 10_000:
            report.problems.append(f"jackpot {name}: meter {m.meter}, fraction {m.frac}")
        for h in r.out:
            if not markers.get(h.player, {}).get(h.transfer_id, "").startswith("applied:"):
                report.to_accounts += h.amount


async def check_jackpot_ledgers(
    client: redis.asyncio.Redis,
    keys: Keys,
    jackpots: dict[str, JackpotReading],
    report: AuditReport,
    *,
    checkpoints: Mapping[str, JackpotCheckpoint] | None = None,
    archive: ArchivedLedger | None = None,
) -> None:
    """Each jackpot's ledger replayed against its totals: from the archive's checkpoint
    of it (``checkpoints``, read before the jackpots were; zero without one), its entries
    after it in Redis and then in ``archive`` (what the archiver moved meanwhile is
    there when it is read), each once by its id, up to the reading's last id."""
    wrong: list[str] = []
    for name, r in sorted(jackpots.items()):
        m = r.meter
        report.ledger_entries += m.entries
        cp = (checkpoints or {}).get(name)
        if not r.last:
            if m.entries:
                wrong.append(f"jackpot {name}: {m.entries} entries appended, its ledger is empty")
            continue
        stream = keys.jackpot_ledger(name)
        replay = cp.copy() if cp is not None else JackpotCheckpoint(name)
        through = parse_id(r.last)
        rows: dict[StreamId, LedgerRow] = {}
        low = "(" + format_id(replay.position)
        async for entry_id, fields in read_ledger(client, stream, low, r.last):
            row = LedgerRow.from_fields(stream, entry_id, fields)
            rows[row.entry_id] = row
        if archive is not None:  # a first checkpoint made since it was read: from zero
            for row in await archive.jackpot_rows(name, replay.position, through, stream):
                rows.setdefault(row.entry_id, row)
        report.ledger_scanned += len(rows)
        report.checkpoint_entries += cp.entries if cp is not None else 0
        ordered = [rows[i] for i in sorted(rows)]
        replay.fold(ordered)
        wrong.extend(
            f"jackpot {name}: an entry of unknown kind {row.kind!r}"
            for row in ordered
            if row.kind not in JACKPOT_KINDS
        )
        seen = Counter(row.key for row in ordered)
        twice = sorted(k for k, n in seen.items() if n > 1)
        if twice:
            report.problems.append(
                f"jackpot {name}: ledger keys applied more than once: {listed(twice)}"
            )
        if replay.entries != m.entries:
            if cp is None:
                # Trimmed by its bound before the archive held any of it.
                report.notes.append(
                    f"jackpot {name}: its ledger holds {replay.entries} of {m.entries} "
                    "entries ever appended (trimmed): its replay is out of reach"
                )
            else:
                wrong.append(
                    f"jackpot {name}: {m.entries} entries appended, the archive and Redis "
                    f"hold {replay.entries}"
                )
            continue
        for total, stored, replayed in (
            ("seeded", m.seeded, replay.seeded),
            ("contributed", m.contributed, replay.contributed),
            ("paid", m.paid, replay.paid),
        ):
            if replayed != stored:
                wrong.append(f"jackpot {name}: {total} {stored}, its ledger says {replayed}")
    if wrong:
        report.problems.append(f"jackpots differ from their ledgers: {listed(wrong)}")
