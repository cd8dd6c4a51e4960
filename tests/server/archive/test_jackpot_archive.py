"""The jackpots' ledgers in the archive, against SQLite and a real PostgreSQL: their old
entries move once (stored and summed in a checkpoint, then trimmed from Redis), a crash
between the steps repeats nothing, and the audit replays each meter from its checkpoint
and what remains in Redis, so that a meter changed behind the scripts' back is still
caught once its ledger is archived."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import redis.asyncio

from server.archive import Archive
from server.archive.mover import JACKPOT_CRASH_POINTS
from server.store.jackpot.meters import JackpotStore, Meter
from tests.server.archive.helpers import Casino
from tests.server.archive.test_migrations import build_release_0_1

J = "grand"
SEED = 1000


class Crash(Exception):
    """The archiver's process dies here."""


def crash_at(point: str) -> Callable[[str], None]:
    """A crash hook failing the first time ``point`` is reached."""

    def crash(reached: str) -> None:
        if reached == point:
            raise Crash(point)

    return crash


async def feed(jackpots: JackpotStore, first_round: int, rounds: int) -> None:
    """``rounds`` rounds of table t1: ann and bob each wager 100 at 50% to the meter;
    ann hits a tenth of the meter in the last one."""
    for r in range(first_round, first_round + rounds):
        for seat, player in enumerate(("ann", "bob")):
            await jackpots.contribute(
                J,
                seed=SEED,
                contribution_bps=5000,
                table_id="t1",
                round_no=r,
                seat=seat,
                player=player,
                wager=100,
            )
    last = first_round + rounds - 1
    hit = await jackpots.hit(
        J, seed=SEED, share_bps=1000, table_id="t1", round_no=last, seat=0, player="ann"
    )
    assert hit.paid > 0


async def started(redis_client: redis.asyncio.Redis) -> tuple[Casino, JackpotStore, Meter]:
    casino = Casino(redis_client)
    await casino.open()
    jackpots = JackpotStore(redis_client)
    await feed(jackpots, 1, 4)  # a seed, 8 contributions, a hit
    meter = await jackpots.read(J)
    assert meter.entries == 10
    report = await casino.audit(None)
    assert report.ok, report.explain()
    return casino, jackpots, meter


async def in_redis(casino: Casino) -> int:
    return int(await casino.redis.xlen(casino.keys.jackpot_ledger(J)))


async def check_archived_once(casino: Casino, archive: Archive, meter: Meter) -> None:
    """Every entry of the jackpot's ledger is in the archive once, summed once in its
    checkpoint, none left in Redis; the audit replays it."""
    assert await in_redis(casino) == 0
    assert await archive.jackpot_ledger_count() == meter.entries
    cp = (await archive.jackpot_checkpoints())[J]
    assert (cp.entries, cp.seeded, cp.contributed, cp.paid, cp.unknown) == (
        meter.entries,
        meter.seeded,
        meter.contributed,
        meter.paid,
        0,
    )
    assert cp.baseline_ms is None
    report = await casino.audit(archive)
    assert report.ok, report.explain()


@pytest.mark.asyncio
async def test_old_jackpot_entries_move_once_and_the_audit_replays_them(
    redis_client: redis.asyncio.Redis, archive: Archive
) -> None:
    casino, jackpots, meter = await started(redis_client)

    report = await casino.archiver(archive, batch=3).run_once()
    assert (report.jackpot_ledger, report.jackpot_trimmed) == (10, 10)
    await check_archived_once(casino, archive, meter)

    # Once more: nothing left to move, nothing counted twice.
    again = await casino.archiver(archive).run_once()
    assert (again.jackpot_ledger, again.jackpot_trimmed) == (0, 0)

    # New entries stay in Redis (within the window): the audit sums both parts.
    await feed(jackpots, 5, 2)
    assert await in_redis(casino) == 5
    both = await casino.audit(archive)
    assert both.ok, both.explain()
    # Without the archive the replay is out of reach: a note, not a finding.
    alone = await casino.audit(None)
    assert alone.ok, alone.explain()
    assert any(f"jackpot {J}" in note for note in alone.notes)


@pytest.mark.asyncio
@pytest.mark.parametrize("point", JACKPOT_CRASH_POINTS)
async def test_a_crash_between_the_copy_and_the_trim_archives_nothing_twice(
    redis_client: redis.asyncio.Redis, archive: Archive, point: str
) -> None:
    casino, _, meter = await started(redis_client)
    with pytest.raises(Crash):
        await casino.archiver(archive, batch=4, crash=crash_at(point)).run_once()
    if point == "jackpot-stored":  # the first batch in both places, counted once
        assert await archive.jackpot_ledger_count() == 4
        assert await in_redis(casino) == 10
    mid = await casino.audit(archive)
    assert mid.ok, mid.explain()

    report = await casino.archiver(archive, batch=4).run_once()
    already = {"jackpot-started": 0, "jackpot-stored": 4, "jackpot-trimmed": 4}[point]
    assert report.jackpot_ledger == 10 - already
    assert report.jackpot_trimmed == 10 - (already if point == "jackpot-trimmed" else 0)
    await check_archived_once(casino, archive, meter)


@pytest.mark.asyncio
async def test_a_meter_changed_after_archiving_is_still_caught(
    redis_client: redis.asyncio.Redis, archive: Archive
) -> None:
    casino, _, _ = await started(redis_client)
    await casino.archiver(archive).run_once()
    assert await in_redis(casino) == 0
    key = casino.keys.jackpot(J)

    # The meter and its totals moved together: only the archived ledger disagrees.
    await redis_client.hincrby(key, "meter", 500)
    await redis_client.hincrby(key, "seeded", 500)
    report = await casino.audit(archive)
    assert not report.ok
    assert f"jackpot {J}: seeded" in report.explain()
    await redis_client.hincrby(key, "meter", -500)
    await redis_client.hincrby(key, "seeded", -500)
    assert (await casino.audit(archive)).ok

    # An entry lost from the archived part (the count of entries ever appended says so).
    await redis_client.hincrby(key, "n", 1)
    lost = await casino.audit(archive)
    assert not lost.ok
    assert "the archive and Redis hold 10" in lost.explain()


@pytest.mark.asyncio
async def test_a_jackpot_ledger_trimmed_before_the_archive_starts_from_the_meter(
    redis_client: redis.asyncio.Redis, archive: Archive
) -> None:
    casino, jackpots, meter = await started(redis_client)
    stream = casino.keys.jackpot_ledger(J)
    await redis_client.xtrim(stream, maxlen=3, approximate=False)  # as its bound would
    assert (await casino.audit(None)).notes

    report = await casino.archiver(archive).run_once()
    assert report.jackpot_trimmed == 3
    assert report.jackpot_ledger == 0  # all at or before the first checkpoint
    cp = (await archive.jackpot_checkpoints())[J]
    assert cp.baseline_ms is not None
    assert (cp.entries, cp.seeded, cp.contributed, cp.paid) == (
        meter.entries,
        meter.seeded,
        meter.contributed,
        meter.paid,
    )
    await feed(jackpots, 5, 1)
    after = await casino.audit(archive)
    assert after.ok, after.explain()
    assert not any(f"jackpot {J}" in note for note in after.notes)


@pytest.mark.asyncio
async def test_a_database_of_0_1_0_gains_the_jackpot_tables(archive_url: str) -> None:
    build_release_0_1(archive_url)
    opened = Archive(archive_url)
    try:
        assert await opened.jackpot_checkpoints() == {}
        assert await opened.jackpot_ledger_count() == 0
        assert (await opened.stats()).ledger == 1  # 0.1.0's entry kept
    finally:
        await opened.close()
