"""A server that takes a table over finishes the transfers its dead holder left.

The holder is the real store, stopped dead between two steps of a buy-in
(tests/server/store/helpers.py, ``CrashingStore``), on a real table state; the server
started after it takes the table once the dead holder's lease runs out, recovers at
once, and the audit passes with nothing in transit.
"""

from __future__ import annotations

import secrets
import time

import pytest
import redis.asyncio

from protocol.messages import Join
from protocol.structs import Joined
from server.auth import tokens
from server.config import Settings
from server.host import encode_outbound, now_ms, pack_outbound, recovery
from server.store.chips.records import ClientRequest
from server.store.chips.transfers import Pending, Transfers
from server.store.errors import StoreUnavailable
from server.store.players.accounts import AccountStore
from server.store.tables.commit_args import Write
from server.store.tables.parts import to_parts
from server.table import events as ev
from server.table.machine import step
from server.table.state import new_table
from server.tables_file import load_tables
from tests.helpers import until, url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, audit_report
from tests.server.store.helpers import Crash, CrashingStore

ACCOUNT = 1000


@pytest.mark.asyncio
@pytest.mark.parametrize("point", ["commit", "after"])
async def test_the_next_holder_finishes_a_buy_in_its_dead_holder_left(
    start_app: StartApp,
    server_settings: Settings,
    redis_client: redis.asyncio.Redis,
    point: str,
) -> None:
    """Dead before the commit: the chips go back to the account; dead after it: the
    player is seated, and the account's side is settled."""
    accounts = AccountStore(redis_client)
    await accounts.credit("alice", ACCOUNT, "c-alice")
    assert server_settings.tables_file is not None
    config = next(c for c in load_tables(server_settings.tables_file) if c.table_id == "slow")
    dead = CrashingStore(redis_client)
    token = await dead.leases.acquire("slow", "dead", 300)
    assert token is not None
    t = step(new_table(config), ev.SitDown("alice", "A", 2, 300, secrets.token_bytes(32)), now_ms())
    dead.crash_at = point
    with pytest.raises(Crash):
        await dead.commits.write(
            Write(
                "slow",
                token=token,
                expected_version=0,
                new_version=t.state.version,
                parts=to_parts(t.state, None),
                entries=t.entries,
                events=[(o.seq, pack_outbound(encode_outbound(o))) for o in t.events],
                request=ClientRequest("alice", "s:1", b"join", b""),
            )
        )
    assert (await audit_report(redis_client)).in_transit == (300 if point == "commit" else 0)

    app = await start_app()  # takes "slow" once the dead holder's lease is gone
    host = app.hosts["slow"]

    async def finished() -> bool:
        return not await host.store.transfers.pending("slow")

    await until(finished, what="the transfer to be finished")
    report = await audit_report(redis_client)
    assert report.ok, report.explain()
    assert report.in_transit == 0
    seated = point == "after"
    assert await accounts.balance("alice") == ACCOUNT - (300 if seated else 0)
    assert host.state is not None
    assert (host.state.seat_of("alice") is not None) is seated

    # Seated or not, a join from alice now is answered as it should be.
    assert server_settings.token_secret is not None
    secret = server_settings.token_secret.encode()
    login = tokens.issue(secret, "alice", 600, int(time.time()))
    client = await Client.hello(url(app), label="alice", token=login)
    try:
        if seated:
            await client.error(Join, "already_seated", table_id="slow", buy_in=300)
        else:
            joined = await client.ok(Join, table_id="slow", buy_in=300)
            assert isinstance(joined, Joined)
            assert joined.account == ACCOUNT - 300
    finally:
        await client.close()
    report = await audit_report(redis_client)
    assert report.ok, report.explain()


@pytest.mark.asyncio
async def test_a_step_that_failed_in_the_background_is_finished_at_once(
    start_app: StartApp, redis_client: redis.asyncio.Redis
) -> None:
    """A buy-in's settling step fails after its commit (Redis refused it): the store
    wakes the table's holder, which finishes the transfer at once, not at its next
    sweep of the table (a minute) nor at a poll of its own."""
    app = await start_app()
    store = app.hosts["slow"].store
    real_finish = store.transfers.finish
    failed: list[str] = []

    async def finish_failing_once(table_id: str, *args: object, **kwargs: object) -> None:
        if not failed:
            failed.append(table_id)
            raise StoreUnavailable("refused, once")
        await real_finish(table_id, *args, **kwargs)  # type: ignore[arg-type]

    store.transfers.finish = finish_failing_once  # type: ignore[method-assign]
    client = await Client.hello(url(app))
    try:
        await client.ok(Join, table_id="slow", buy_in=500)
        assert failed == ["slow"]
        inbound = store.keys.transfers_in("slow")
        started = time.monotonic()

        async def settled() -> bool:
            return await redis_client.hlen(inbound) == 0

        await until(settled, 3, "the buy-in's transfer finished")
        assert time.monotonic() - started < 3
        report = await audit_report(redis_client)
        assert report.ok, report.explain()
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_a_sweep_of_a_table_with_nothing_under_way_reads_nothing_of_it(
    start_app: StartApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each sweep first asks whether the table has anything under way (one command);
    with nothing, none of its transfers is read (under the lock, parsed). (A table
    taken over with a transfer left is recovered through the same question: the
    tests above.)"""
    monkeypatch.setattr(recovery, "SWEEP_S", 0.1)
    app = await start_app()
    store = app.hosts["slow"].store
    asked: list[str] = []
    read: list[str] = []
    has_pending, pending = store.transfers.has_pending, store.transfers.pending

    async def counted_question(table_id: str) -> bool:
        asked.append(table_id)
        return await has_pending(table_id)

    async def counted_read(table_id: str) -> Pending:
        read.append(table_id)
        return await pending(table_id)

    store.transfers.has_pending = counted_question  # type: ignore[method-assign]
    store.transfers.pending = counted_read  # type: ignore[method-assign]
    await until(lambda: asked.count("slow") >= 3, 5, "three sweeps of the table")
    assert read == []


@pytest.mark.asyncio
async def test_the_sweeps_of_tables_taken_together_are_spread_over_the_interval(
    start_app: StartApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tables taken together (at start-up) each look at once, then sweep about once an
    interval, but not all together: their second sweeps fall anywhere in the first
    interval, and each table's later sweeps come half to one and a half intervals
    apart, drawn again each time (so no two tables keep in step)."""
    # Long enough that a loaded machine's lateness (the forty first looks took 0.9 s with
    # the suite's workers and another run beside it) is small beside it: the bounds
    # below are fractions of it.
    sweep_s = 4.0
    monkeypatch.setattr(recovery, "SWEEP_S", sweep_s)
    tables = 40
    asked: dict[str, list[float]] = {}
    has_pending = Transfers.has_pending

    async def counted(self: Transfers, table_id: str) -> bool:
        asked.setdefault(table_id, []).append(time.monotonic())
        return await has_pending(self, table_id)

    monkeypatch.setattr(Transfers, "has_pending", counted)
    await start_app(
        "\n".join(
            f'[[table]]\nid = "t{i:02d}"\nname = "T{i}"\nmin_bet = 10\nmax_bet = 100\n'
            "denominations = [5, 10]\nmin_buy_in = 100\nmax_buy_in = 1000\n"
            for i in range(tables)
        )
    )
    await until(
        lambda: len(asked) == tables and all(len(t) >= 3 for t in asked.values()),
        8 * sweep_s,
        "three looks at every table",
    )
    firsts = sorted(times[0] for times in asked.values())
    seconds = sorted(times[1] for times in asked.values())
    # The first looks come together; the second ones spread over the interval after
    # each table's own first look (measured from it: on a loaded machine the first
    # looks themselves took 0.4 s, which a bound from the earliest one counted too).
    assert firsts[-1] - firsts[0] < sweep_s / 2
    after_first = sorted(times[1] - times[0] for times in asked.values())
    assert after_first[0] < sweep_s / 3
    assert after_first[-1] > 2 * sweep_s / 3
    crowded = max(sum(1 for t in seconds if s <= t < s + sweep_s / 10) for s in seconds)
    # Drawn at random, about four fall in a tenth; a loop stalled on a loaded machine lets
    # those due meanwhile run together (14 were seen); tables in step would be all 40.
    assert crowded <= tables // 2, f"{crowded} of {tables} second sweeps within a tenth"
    gaps = [times[2] - times[1] for times in asked.values()]
    assert all(sweep_s / 2 <= gap <= 3 * sweep_s / 2 + sweep_s / 4 for gap in gaps), gaps
    assert max(gaps) - min(gaps) > sweep_s / 3  # drawn, not one interval for all
