"""Crash-safety of the archiver: a failure at each point between two steps, and the
process killed with SIGKILL in the middle of a pass, neither lose nor duplicate a record
(against SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from collections.abc import Callable

import pytest
import redis.asyncio

from server.archive import Archive
from server.archive.mover import CRASH_POINTS, Archiver
from server.store.players.accounts import AccountStore
from tests.helpers import until
from tests.server.archive.helpers import HOUR_MS, Casino
from tests.server.processes import ROOT


class Crash(Exception):
    """The archiver's process dies here."""


def crash_at(point: str, occurrence: int) -> tuple[list[int], Callable[[str], None]]:
    """A crash hook failing the ``occurrence``-th time ``point`` is reached."""
    seen = [0]

    def crash(reached: str) -> None:
        if reached == point:
            seen[0] += 1
            if seen[0] == occurrence:
                raise Crash(point)

    return seen, crash


async def scenario(casino: Casino) -> None:
    """Two players and six rounds, a guest who played and went idle, one who did not."""
    await casino.open()
    await casino.play(3)
    await casino.guest("g-idle")
    await casino.guest("g-busy")
    await casino.redis.lpush(casino.keys.game_log("g-idle"), (1).to_bytes(8, "big") + b"\x80")
    await casino.play(3)
    await casino.guests.touch("g-busy", 2**50)  # active far in the future: never idle


async def check_everything_moved_once(casino: Casino, archive: Archive, appended: int) -> None:
    """Every entry appended is in the archive once and none is left in Redis; every
    game log but each player's newest is archived once; the idle guest is closed."""
    stats = await archive.stats()
    assert stats.ledger == appended == await casino.entries()
    assert await casino.ledger_len() == 0
    report = await casino.audit(archive)
    assert report.ok, report.explain()
    assert report.ledger_complete
    assert not report.duplicates
    for player in ("ann", "bob"):
        assert await casino.log_ordinals(player) == [6]
        archived = [o for o, _ in await archive.history(player, None, 100)]
        assert archived == [5, 4, 3, 2, 1]
    assert await archive.history("g-idle", None, 100) == [(1, b"\x80")]
    keys = casino.keys
    assert await casino.redis.hget(keys.account("g-idle"), "closed") is not None
    assert not await casino.redis.exists(keys.game_log("g-idle"), keys.account_ledger("g-idle"))
    assert await casino.accounts.balance("g-busy") == 300


ONCE_A_PASS = {"checkpoint-started", "guest-logs-stored", "guest-closed"}
"""Points reached once in the scenario (one first checkpoint, one idle guest); the
others are reached at each batch or player, and fail the first or the second time."""


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("point", "occurrence"),
    [(p, n) for p in CRASH_POINTS for n in (1, 2) if n == 1 or p not in ONCE_A_PASS],
)
async def test_a_failure_between_two_steps_loses_and_repeats_nothing(
    redis_client: redis.asyncio.Redis, archive: Archive, point: str, occurrence: int
) -> None:
    casino = Casino(redis_client)
    await scenario(casino)
    seen, hook = crash_at(point, occurrence)
    crashing = casino.archiver(archive, guest_idle_ms=HOUR_MS, batch=5, crash=hook)
    with pytest.raises(Crash):
        await crashing.run_once()
    assert seen[0] == occurrence
    # Half-way, Redis and the archive together still hold every chip movement once.
    halfway = await casino.audit(archive)
    assert halfway.ok, halfway.explain()
    # A new process (a new archiver) carries on, and the closing entry of the guest is
    # archived by the pass after the one that closed it.
    appended = await casino.entries()
    await casino.archiver(archive, guest_idle_ms=HOUR_MS, batch=5).run_once()
    await casino.archiver(archive, guest_idle_ms=HOUR_MS, batch=5).run_once()
    await check_everything_moved_once(casino, archive, appended + (point != "guest-closed"))


@pytest.mark.asyncio
async def test_a_pass_in_steps_of_two_streams_moves_each_record_once(
    redis_client: redis.asyncio.Redis, archive: Archive
) -> None:
    """Every step over several batches of streams (pipelines, transactions), and
    streams read past their cursor a page at a time, with a failure in the second
    batch of first checkpoints."""
    casino = Casino(redis_client)
    await scenario(casino)
    seen, hook = crash_at("checkpoint-started", 2)
    crashing = casino.archiver(archive, guest_idle_ms=HOUR_MS, batch=2, streams=2, crash=hook)
    with pytest.raises(Crash):
        await crashing.run_once()
    assert seen[0] == 2
    assert len((await archive.stats()).checkpoints) == 4  # two batches of two
    appended = await casino.entries()
    for _ in range(2):
        await casino.archiver(archive, guest_idle_ms=HOUR_MS, batch=2, streams=2).run_once()
    await check_everything_moved_once(casino, archive, appended + 1)


@pytest.mark.asyncio
async def test_two_archivers_at_once_move_each_record_once(
    redis_client: redis.asyncio.Redis, archive: Archive, archive_url: str
) -> None:
    casino = Casino(redis_client)
    await scenario(casino)
    other = Archive(archive_url)
    try:
        first = casino.archiver(archive, guest_idle_ms=HOUR_MS, batch=3)
        second: Archiver = casino.archiver(other, guest_idle_ms=HOUR_MS, batch=4)
        await asyncio.gather(first.run_once(), second.run_once())
        await casino.archiver(archive, guest_idle_ms=HOUR_MS).run_once()
    finally:
        await other.close()
    await check_everything_moved_once(casino, archive, await casino.entries())


@pytest.mark.asyncio
@pytest.mark.slow
async def test_the_archive_command_killed_mid_pass_loses_and_repeats_nothing(
    redis_url: str, redis_client: redis.asyncio.Redis, archive_url: str
) -> None:
    """``paigow-server archive`` killed with SIGKILL three times while it moves a
    backlog, then run to the end."""
    accounts = AccountStore(redis_client)
    backlog = 20_000
    # Each credit one ledger entry, written by eight lanes side by side rather than one
    # round trip after another (a cluster client keeps 16 connections a node at most).
    lanes = 8

    async def lane(first: int) -> None:
        for i in range(first, backlog, lanes):
            await accounts.credit(f"p{i % 50}", 1, f"k{i}")

    await asyncio.gather(*(lane(first) for first in range(lanes)))
    casino = Casino(redis_client)
    assert await casino.entries() == backlog
    archive = Archive(archive_url)
    command = [
        sys.executable,
        "-m",
        "server",
        "--redis-url",
        redis_url,
        "--archive-url",
        archive_url,
        "--archive-after-ms",
        "0",
        "--archive-every-ms",
        "1000",
        "archive",
    ]
    try:
        for kill in range(3):
            await _kill_mid_pass(command, archive, kill)
        done = await asyncio.to_thread(
            subprocess.run,
            command,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        stats = await archive.stats()
        assert stats.ledger == backlog
        assert await casino.ledger_len() == 0
        report = await casino.audit(archive)
        assert report.ok, report.explain()
        assert report.ledger_complete
        assert report.checkpoint_entries == backlog
    finally:
        await archive.close()


async def _kill_mid_pass(command: list[str], archive: Archive, kill: int) -> None:
    """Start ``command`` and SIGKILL it once it has stored a batch more."""
    before = (await archive.stats()).ledger if archive.exists() else 0
    proc = await asyncio.create_subprocess_exec(
        *command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:

        async def moved_more() -> bool:
            if proc.returncode is not None:
                raise AssertionError(f"the pass ended before kill {kill}")
            return archive.exists() and (await archive.stats()).ledger > before

        await until(moved_more, within=60, what="the archiver to store a batch", every=0.01)
        proc.send_signal(signal.SIGKILL)
    finally:
        if proc.returncode is None:
            proc.kill()
        await asyncio.wait_for(proc.wait(), 30)
