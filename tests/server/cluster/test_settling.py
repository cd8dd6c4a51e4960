"""Seats settled when the live nodes change, when the store fails at that moment.

Two nodes in one process on the test Redis. A player sits, through node A, at a table
node B holds; A stops counting as a node (it leaves the live nodes, as a drain's first
step does and as its death does once its registration runs out), and B alone must mark
the seat away (``Router.nodes_changed``). The commit of that ``Disconnect`` fails as a
connection lost on the way out does: the settling is tried again, and the seat still
goes away, then is stood up after the grace time (docs/RULES.md, "Disconnection").
"""

from __future__ import annotations

import logging

import pytest

from protocol.messages import Join, Watch
from tests.helpers import until, url
from tests.server.conftest import StartApp
from tests.server.helpers import Client, GatedCommits, close_all, quick_tables, seat_status

GRACE_MS = 2000


@pytest.mark.asyncio
async def test_a_seat_whose_settling_failed_on_a_store_error_is_settled_again(
    start_app: StartApp, caplog: pytest.LogCaptureFixture
) -> None:
    tables = quick_tables("q1", "q2", betting_ms=60_000, grace_ms=GRACE_MS)
    # The clients here send nothing for a while: a silence longer than the test's bounds.
    a = await start_app(tables, node_name="a", heartbeat_ms=60_000)
    b = await start_app(tables, node_name="b", heartbeat_ms=60_000)
    await until(
        lambda: all(sum(h.ready for h in n.hosts.values()) == 1 for n in (a, b)),
        10,
        "one table each",
    )
    table = next(t for t, h in b.hosts.items() if h.ready)
    host = b.hosts[table]
    player = await Client.hello(url(a), label="player")
    watcher = await Client.hello(url(b), label="watcher")
    try:
        await player.ok(Join, table_id=table, buy_in=500)
        await watcher.ok(Watch, table_id=table)
        assert host.state is not None
        seat = host.state.seat_of(player.player)
        assert seat is not None
        await watcher.wait(lambda: seat_status(watcher, table, seat) == "playing")

        store = GatedCommits(host.store)
        store.fail_next = True  # the next commit at the table: the settling's Disconnect
        caplog.set_level(logging.INFO, logger="server.gateway.presence")
        await a.cluster.membership.leave()  # type: ignore[union-attr]

        # B counts A gone at its next heartbeat; the Disconnect it submits then fails.
        await until(lambda: not store.fail_next, 10, "the settling's commit to fail")
        await watcher.wait(lambda: seat_status(watcher, table, seat) == "away", within=10)
        assert "not settled, trying again" in caplog.text  # away on the second try
        await watcher.wait(
            lambda: seat_status(watcher, table, seat) == "empty", within=GRACE_MS / 1000 + 10
        )
        assert host.state is not None
        assert host.state.seat_of(player.player) is None
    finally:
        await close_all([player, watcher])
