"""The archive, against SQLite and a real PostgreSQL: what moves, what stays, and the
audit and the history across Redis and the archive."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import redis.asyncio

from server.archive import Archive, ArchiveError
from server.archive.history import history_page
from server.store.archiving.records import CREDITED, LogRow, StreamId, parse_id
from server.store.archiving.source import ArchivingCalls
from server.store.chips.ledgers import ledger_sources
from server.store.chips.records import LOG, Delivery, pack_logs
from server.store.client.replies import stream_entries
from server.store.players.accounts import OUTSIDE
from tests.helpers import until
from tests.server.archive.helpers import HOUR_MS, Casino, T, round_of, wall_ms


@pytest.mark.asyncio
async def test_old_ledger_entries_move_once_and_the_audit_replays_the_checkpoint(
    redis_client: redis.asyncio.Redis, archive: Archive
) -> None:
    casino = Casino(redis_client)
    await casino.open()
    await casino.play(5)
    appended = await casino.entries()
    before = await casino.audit(None)
    assert before.ok, before.explain()
    assert before.ledger_complete

    report = await casino.archiver(archive).run_once()
    assert (report.ledger, report.trimmed) == (appended, appended)
    assert await casino.ledger_len() == 0
    stats = await archive.stats()
    assert stats.ledger == stats.folded == appended
    # One checkpoint per stream: the table's, and each account's with its balance.
    keys = casino.keys
    assert set(stats.checkpoints) == {
        keys.table_ledger("t1"),
        keys.account_ledger("ann"),
        keys.account_ledger("bob"),
    }
    for player in ("ann", "bob"):
        pots = stats.checkpoints[keys.account_ledger(player)].pots
        assert (pots["account"], pots[CREDITED]) == (500, 1000)

    # Once more: nothing left to move, nothing counted twice.
    again = await casino.archiver(archive).run_once()
    assert (again.ledger, again.trimmed) == (0, 0)

    await casino.play(2)  # entries after the checkpoint, in Redis only
    report_after = await casino.audit(archive)
    assert report_after.ok, report_after.explain()
    assert report_after.ledger_complete
    assert report_after.checkpoint_entries == appended
    assert report_after.ledger_scanned == await casino.ledger_len() == 12
    # Without the archive, Redis alone cannot replay: a note, as for a trimmed stream.
    alone = await casino.audit(None)
    assert alone.ok
    assert not alone.ledger_complete


@pytest.mark.asyncio
async def test_entries_within_the_window_stay_in_redis(
    redis_client: redis.asyncio.Redis, archive: Archive
) -> None:
    casino = Casino(redis_client)
    await casino.open()
    await casino.play(2)
    old = await casino.ledger_len()
    # Entry ids are Redis's clock: the window ends once it has passed every entry so far.
    boundary = int((await redis_client.time())[0]) * 1000 + 1000

    async def passed() -> bool:
        return int((await redis_client.time())[0]) * 1000 >= boundary

    await until(passed, what="Redis's clock to pass a second")
    await casino.play(1)
    recent = await casino.ledger_len() - old
    # The window ends where the first two rounds end: the third stays.
    mover = casino.archiver(archive)
    mover.clock = lambda: boundary + HOUR_MS
    report = await mover.run_once()
    assert report.trimmed == old
    assert await casino.ledger_len() == recent
    assert (await casino.audit(archive)).ok


@pytest.mark.asyncio
async def test_old_game_logs_move_but_the_newest_stays_and_history_reads_both(
    redis_client: redis.asyncio.Redis, archive: Archive
) -> None:
    casino = Casino(redis_client)
    await casino.open()
    await casino.play(6)
    await casino.archiver(archive).run_once()
    # Every round is old: all but the newest moved (its number is where the next follows).
    assert await casino.log_ordinals("ann") == [6]
    assert (await archive.stats()).game_logs == 10
    await casino.play(3)  # rounds 7-9, in Redis beside round 6
    assert await casino.log_ordinals("ann") == [9, 8, 7, 6]

    # Pages of 4, newest first, across Redis and the archive, each round once.
    seen: list[int] = []
    cursor: int | None = None
    while True:
        blobs, cursor = await history_page(casino.tables, archive, "ann", cursor, 4)
        seen += [round_of(b) for b in blobs]
        if cursor is None:
            break
    assert seen == list(range(9, 0, -1))
    only_t2, _ = await history_page(casino.tables, archive, "ann", None, 4, table_id="t2")
    assert only_t2 == []
    # Without the archive, only what Redis holds.
    blobs, cursor = await history_page(casino.tables, None, "ann", None, 20)
    assert [round_of(b) for b in blobs] == [9, 8, 7, 6]
    assert cursor is None


@pytest.mark.asyncio
async def test_a_game_log_its_table_may_deliver_again_stays_in_redis(
    redis_client: redis.asyncio.Redis, archive: Archive
) -> None:
    """A table forgets a commit's game logs after delivering them: until then, a
    recovery may deliver them again, found among the player's newest."""
    casino = Casino(redis_client)
    await casino.open()
    await casino.play(3)
    items = await casino.archiver(archive).calls.game_log("ann")  # newest first
    (_, oldest), (_, middle) = items[-1], items[-2]
    # Round 1 still on its way in a commit's entry (this version's), round 2 in an
    # entry of one log (an earlier version's).
    pending = casino.keys.logs_out(T)
    await redis_client.hset(pending, "x1", pack_logs([Delivery("x1", "ann", LOG, record=oldest)]))
    await redis_client.hset(pending, "x2", Delivery("x2", "ann", LOG, record=middle).pack())
    await casino.archiver(archive).run_once()
    assert await casino.log_ordinals("ann") == [3, 2, 1]  # moved from the oldest: none
    await redis_client.hdel(pending, "x1")
    await casino.archiver(archive).run_once()
    assert await casino.log_ordinals("ann") == [3, 2]
    await redis_client.hdel(pending, "x2")
    await casino.archiver(archive).run_once()
    assert await casino.log_ordinals("ann") == [3]
    blobs, cursor = await history_page(casino.tables, archive, "ann", None, 10)
    assert ([round_of(b) for b in blobs], cursor) == ([3, 2, 1], None)


@pytest.mark.asyncio
async def test_a_record_copied_before_the_trim_is_read_once(
    redis_client: redis.asyncio.Redis, archive: Archive
) -> None:
    """Between the archive's commit and Redis's trim, records are in both places."""
    casino = Casino(redis_client)
    await casino.open()
    await casino.play(4)
    items = await casino.archiver(archive).calls.game_log("ann")
    await archive.put_logs([LogRow("ann", o, "t1", 0, r) for o, r in items])  # copied only
    blobs, cursor = await history_page(casino.tables, archive, "ann", None, 10)
    assert [round_of(b) for b in blobs] == [4, 3, 2, 1]
    assert cursor is None


@pytest.mark.asyncio
async def test_a_lost_entry_and_a_wrong_balance_are_found_across_redis_and_the_archive(
    redis_client: redis.asyncio.Redis, archive: Archive
) -> None:
    casino = Casino(redis_client)
    await casino.open()
    await casino.play(3)
    await casino.archiver(archive).run_once()
    await casino.play(2)
    [(entry_id, fields)] = stream_entries(await redis_client.xrevrange(casino.ledger, count=1))
    await redis_client.xdel(casino.ledger, entry_id)
    report = await casino.audit(archive)
    assert not report.ok
    assert "ledger entries lost: pg:table:{t1}:ledger: 32 appended" in report.explain()

    await redis_client.xadd(casino.ledger, dict(fields.items()))  # back (another id)
    assert (await casino.audit(archive)).ok
    # Then tamper with a balance (an account's archived ledger says otherwise).
    await redis_client.hincrby(casino.keys.account("ann"), "balance", 7)
    await redis_client.hincrby(casino.keys.account("ann"), "in", 7)  # the sum adds up
    wrong = (await casino.audit(archive)).explain()
    assert "ann: balance 507, ledger says 500" in wrong
    assert "ann: credited 1007, ledger says 1000" in wrong


@pytest.mark.asyncio
async def test_a_key_applied_twice_across_the_archive_is_found(
    redis_client: redis.asyncio.Redis, archive: Archive
) -> None:
    casino = Casino(redis_client)
    await casino.open()
    await casino.play(1)
    await casino.archiver(archive).run_once()
    # The same settlement appended again, around the store's idempotency.
    fields = {
        "key": "t1:r1:ann:win",
        "kind": "win",
        "player": "ann",
        "amount": 50,
        "source": "house",
        "dest": "table",
        "table": "t1",
    }
    await redis_client.xadd(casino.ledger, fields)  # type: ignore[arg-type]
    await redis_client.hincrby(casino.keys.table_state("t1"), "n", 1)
    report = await casino.audit(archive)
    assert list(report.duplicates) == ["t1:r1:ann:win"]
    # Archived too, the duplicate is remembered past the checkpoint.
    await casino.archiver(archive).run_once()
    assert list((await casino.audit(archive)).duplicates) == ["t1:r1:ann:win"]


@pytest.mark.asyncio
async def test_a_ledger_trimmed_before_the_archive_starts_from_its_owner_s_totals(
    redis_client: redis.asyncio.Redis, archive: Archive
) -> None:
    casino = Casino(redis_client)
    await casino.open()
    await casino.play(3)
    await redis_client.xtrim(casino.ledger, maxlen=4, approximate=False)
    await redis_client.xtrim(casino.keys.account_ledger("ann"), maxlen=1, approximate=False)
    await casino.play(1)
    mover = casino.archiver(archive)
    firsts = {
        s.stream: mover.first_checkpoint(s, await mover.calls.ledger_start(s))
        for s in await ledger_sources(redis_client)
    }
    table, ann, bob = (
        firsts[casino.ledger],
        firsts[casino.keys.account_ledger("ann")],
        firsts[casino.keys.account_ledger("bob")],
    )
    assert table.baseline_ms is not None
    assert (table.pots["table"], table.pots["held"], table.pots["house"]) == (992, 0, 8)
    assert ann.baseline_ms is not None
    assert (ann.entries, ann.pots["account"], ann.pots[CREDITED]) == (2, 500, 1000)
    assert bob.baseline_ms is None  # bob's stream holds every entry: from zero
    await mover.run_once()
    await casino.play(2)
    report = await casino.audit(archive)
    assert report.ok, report.explain()
    assert report.ledger_complete
    assert "the replay of 2 ledger streams starts from their owners' totals" in report.explain()


@pytest.mark.asyncio
async def test_an_idle_guest_is_closed_and_leaves_only_its_archived_history(
    redis_client: redis.asyncio.Redis, archive: Archive
) -> None:
    casino = Casino(redis_client)
    await casino.open(players=("ann",))
    await casino.guest("g-1")
    await casino.guest("g-2")
    await casino.play(2, players=("ann",))
    # g-1 played a round (its game log; its chips are back on its account).
    await redis_client.lpush(casino.keys.game_log("g-1"), (1).to_bytes(8, "big") + b"\x80")
    active = wall_ms() + 2 * HOUR_MS
    await casino.guests.touch("g-2", active)  # g-2 was active since
    mover = casino.archiver(archive, guest_idle_ms=HOUR_MS)
    report = await mover.run_once()
    assert (report.guests_closed, report.chips_out, report.guests) == (1, 300, 1)
    keys = casino.keys
    # Of g-1 only a small record stays in Redis: its totals, for the audit.
    left = await redis_client.hgetall(keys.account("g-1"))
    assert {k: v for k, v in left.items() if k != b"closed"} == {
        b"balance": b"0",
        b"in": b"300",
        b"out": b"300",
        b"n": b"2",
        b"guest": b"1",
    }
    assert not await redis_client.exists(keys.game_log("g-1"))
    assert await casino.accounts.balance("g-2") == 300
    assert await archive.history("g-1", None, 10) == [(1, b"\x80")]
    # The chips went outside by an entry of its own ledger: the audit still adds up.
    after_close = await casino.audit(archive)
    assert after_close.ok, after_close.explain()
    assert (after_close.credited, after_close.removed) == (1600, 300)
    # Archived by the next pass, with the rest of its ledger, which Redis then forgets.
    await casino.archiver(archive, guest_idle_ms=HOUR_MS).run_once()
    assert not await redis_client.exists(keys.account_ledger("g-1"))
    final = await casino.audit(archive)
    assert final.ok, final.explain()
    assert final.ledger_complete
    stream = keys.account_ledger("g-1")
    closing = await archive.audit_view({}, {stream: (2**62, 0)}, {})
    [closed] = [r for r in closing.rows if r.kind == "close"]
    assert (closed.player, closed.amount, closed.dest) == ("g-1", 300, OUTSIDE)


@pytest.mark.asyncio
async def test_records_beyond_half_the_cap_move_whatever_their_age(
    redis_client: redis.asyncio.Redis, archive: Archive
) -> None:
    casino = Casino(redis_client)
    await casino.open(players=("ann",))
    await casino.play(7, players=("ann",))
    # Nothing is old (the clock is not ahead), but with a cap of 8 at most 4 stay, so
    # that the cap never drops a record the archive does not hold.
    report = await casino.archiver(archive, ahead_ms=0, log_cap=8).run_once()
    assert (report.trimmed, report.logs) == (0, 3)
    assert await casino.log_ordinals("ann") == [7, 6, 5, 4]
    assert [o for o, _ in await archive.history("ann", None, 10)] == [3, 2, 1]
    assert [round_of(r) for _, r in await archive.history("ann", None, 10)] == [3, 2, 1]


@pytest.mark.asyncio
async def test_a_redis_moves_its_records_to_one_archive_only(
    redis_client: redis.asyncio.Redis, archive: Archive, tmp_path: Path
) -> None:
    """A second node with an archive of its own (SQLite in its own data folder, say)
    is refused: records moved to two archives would be found in neither."""
    casino = Casino(redis_client)
    await casino.open()
    await casino.archiver(archive).run_once()
    elsewhere = Archive(f"sqlite:{tmp_path / 'other.sqlite3'}")
    try:
        with pytest.raises(ArchiveError, match="another archive"):
            await casino.archiver(elsewhere).run_once()
        assert (await elsewhere.stats()).ledger == 0
    finally:
        await elsewhere.close()


@pytest.mark.asyncio
async def test_a_bad_archive_url_is_refused() -> None:
    with pytest.raises(ArchiveError):
        Archive("mysql://somewhere/db")


@pytest.mark.asyncio
async def test_a_pass_reads_each_stream_s_two_ends_whatever_its_slot(
    redis_client: redis.asyncio.Redis,
) -> None:
    """The archiver's view of a stream is its first and last entry ids: None for a
    stream never written and one emptied by a trim, else the ids XRANGE and XREVRANGE
    give, for streams of many owners (many slots on a cluster), in the order asked,
    also after Redis forgot its scripts."""
    calls = ArchivingCalls(redis_client)
    streams = [f"pg:{{t{i}}}:ledger" for i in range(40)] + ["pg:{p-x}:ledger", "never"]
    for i, stream in enumerate(streams[:40]):
        for n in range(i % 4):
            await redis_client.xadd(stream, {"n": str(n)})
    await redis_client.xadd("pg:{p-x}:ledger", {"n": "0"})
    await redis_client.xtrim("pg:{p-x}:ledger", maxlen=0)  # emptied: the key stays
    assert await redis_client.exists("pg:{p-x}:ledger") == 1
    wanted: list[tuple[StreamId | None, StreamId | None]] = []
    for stream in streams:
        first = stream_entries(await redis_client.xrange(stream, count=1))
        last = stream_entries(await redis_client.xrevrange(stream, count=1))
        wanted.append((parse_id(first[0][0]), parse_id(last[0][0])) if first else (None, None))
    assert sum(1 for w in wanted if w[0] is not None and w[0] != w[1]) == 20  # 2 or 3 entries
    assert await calls.bounds(streams) == wanted
    assert await calls.bounds(list(reversed(streams))) == list(reversed(wanted))
    await redis_client.script_flush()  # what a restarted Redis forgets (every node's)
    assert await calls.bounds(streams) == wanted
    assert await calls.bounds([]) == []


@pytest.mark.asyncio
async def test_a_paced_pass_rests_after_each_step_in_proportion_to_it(
    redis_client: redis.asyncio.Redis, archive: Archive
) -> None:
    """With ``rest``, the pass asks the event loop for ``rest`` times each step's time
    after it (a pass takes at most ``1 / (1 + rest)`` of the loop), and still moves
    everything; without, it only yields."""
    casino = Casino(redis_client)
    await casino.open()
    await casino.play(2)
    for i in range(10):
        await casino.guest(f"g{i}")

    async def run(rest: float) -> tuple[list[float], float]:
        pauses: list[float] = []

        async def pause(seconds: float) -> None:
            pauses.append(seconds)
            await asyncio.sleep(0)

        archiver = casino.archiver(archive, streams=3, rest=rest, pause=pause)
        started = time.perf_counter()
        await archiver.run_once()
        return pauses, time.perf_counter() - started

    pauses, took = await run(3.0)
    assert len(pauses) >= 5  # 13 streams, 3 a step: every chunk of a step rests
    assert all(p > 0 for p in pauses)
    # The pause asked is never slept here: the pass's own time is what it rested for
    # (all of it but the end of the pass, after the last step, which the machine may
    # stretch: so a loose lower bound).
    assert 3.0 * took * 0.2 <= sum(pauses) <= 3.0 * took
    assert await casino.ledger_len() == 0  # everything old enough moved all the same
    unpaced, _ = await run(0.0)
    assert unpaced
    assert all(p == 0 for p in unpaced)
