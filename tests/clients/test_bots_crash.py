"""``paigow-cli bots`` through a kill -9 of the server as a table opens its betting.

A fault campaign found a table whose bots never bet again after such a kill: their
bets were in flight when the server died, and the restarted server closed that
betting phase without a bet (the table then waits, idle, with the same round and
commitment). The bots had marked the round as bet and never tried again. Here the
server and the bots are real processes; the table must play on.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis.asyncio

from protocol.messages import Results, SeatChange, Snapshot, Watch
from tests.helpers import until
from tests.server.helpers import Client
from tests.server.processes import ROOT, ServerProcess, free_port, server_args

TABLES = """
[[table]]
id = "q"
name = "Quick"
min_bet = 10
max_bet = 500
denominations = [5, 10, 25]
min_buy_in = 100
max_buy_in = 5000
betting_ms = 5000
dealing_ms = 100
setting_ms = 800
revealing_ms = 150
settling_ms = 150
grace_ms = 30000
"""
BOTS = 4
ROUNDS = 12
ATTEMPTS = 4
# Betting closes as soon as all four have bet; its length only matters to a bot slow
# to bet (a loaded machine): connected without a bet when it closes, it would miss the
# round and be stood up, as the rules say, and the test could not tell.


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[bytes] | ServerProcess]]:
    """Processes a test starts: killed and reaped afterwards."""
    started: list[subprocess.Popen[bytes] | ServerProcess] = []
    yield started
    for child in started:
        if isinstance(child, ServerProcess):
            child.close()
        else:
            child.kill()
            child.wait(10)


def start_bots(url: str, out: Path) -> subprocess.Popen[bytes]:
    """``paigow-cli bots`` at table ``q``, its JSON lines to ``out``."""
    with out.open("wb") as file:  # the child keeps its own copy
        return subprocess.Popen(
            [
                *(
                    sys.executable,
                    "-c",
                    "import sys; from clients.cli import main; sys.exit(main())",
                ),
                *("bots", "--url", url, "--tables", "q", "--count", str(BOTS)),
                *("--rounds", str(ROUNDS), "--no-session", "--json"),
            ],
            cwd=ROOT,
            stdout=file,
            stderr=subprocess.STDOUT,
        )


def unread_requests(port: int) -> int:
    """How many connections to the server on ``port`` hold bytes it has not read
    (Linux's socket tables; 0 where there are none to read)."""
    count = 0
    for table in (Path("/proc/net/tcp"), Path("/proc/net/tcp6")):
        if not table.exists():
            continue
        for line in table.read_text().splitlines()[1:]:
            fields = line.split()
            local, state, queues = fields[1], fields[3], fields[4]
            established = state == "01"
            if established and int(local.rsplit(":", 1)[1], 16) == port:
                count += int(queues.split(":")[1], 16) > 0
    return count


def seated(watcher: Client) -> set[str]:
    """The players seated at ``q`` as ``watcher`` last saw it."""
    seats: dict[int, str | None] = {}
    for m in watcher.table("q"):
        if isinstance(m, Snapshot):
            seats = {s.seat: s.player_id for s in m.seats}
        elif isinstance(m, SeatChange):
            seats[m.seat.seat] = m.seat.player_id
    return {p for p in seats.values() if p is not None}


@pytest.mark.asyncio
@pytest.mark.timeout(180)
async def test_bots_play_on_after_a_kill_as_betting_opens(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    tmp_path: Path,
    children: list[subprocess.Popen[bytes] | ServerProcess],
) -> None:
    tables = tmp_path / "tables.toml"
    tables.write_text(TABLES)
    # The watchers send nothing while they wait: a long heartbeat keeps them connected.
    args = server_args(
        redis_url,
        tables,
        tmp_path / "data",
        secret="s" * 32,
        port=free_port(),
        # Stopped for a moment while the bets arrive, the server keeps its lease.
        lease_ms=3000,
        extra=("--heartbeat-ms", "60000"),
    )
    first = ServerProcess(args, tmp_path / "server-0.log")
    children.append(first)
    await first.started()
    bots = start_bots(first.url, tmp_path / "bots.out")
    children.append(bots)
    watcher = await Client.hello(first.url, label="w")
    await watcher.ok(Watch, table_id="q")
    # Two rounds played by all four, then the kill the moment betting opens again, with
    # every bot's bet on its way: stopped at once, before it reads them, and killed once
    # they all wait unread (as Linux tells). A round whose bets were read before the
    # stop is let go on, and the next one tried (a few times at most).
    await watcher.event("q", Results, lambda m: m.round >= 2 and len(m.results) == BOTS, within=60)
    port = first.port
    assert port is not None
    for _ in range(ATTEMPTS):
        seen = len(watcher.table("q"))
        opened = await watcher.phase("q", "betting", after=seen, within=30)
        first.proc.send_signal(signal.SIGSTOP)
        try:
            await until(lambda: unread_requests(port) >= BOTS, 1, "the bets to arrive")
            break
        except AssertionError:
            first.proc.send_signal(signal.SIGCONT)
    first.kill()
    await watcher.close()
    players = seated(watcher)
    assert len(players) == BOTS

    second = ServerProcess(args, tmp_path / "server-1.log")
    children.append(second)
    await second.started()
    watcher = await Client.hello(second.url, label="w2")
    try:
        await watcher.ok(Watch, table_id="q")
        # The table plays on, and all four play again: a bot that reconnects late may
        # miss a round (away, it keeps its seat), but none is left out for good.
        results = await watcher.event(
            "q",
            Results,
            lambda m: m.round > opened.round and len(m.results) == BOTS,
            within=60,
        )
        assert seated(watcher) == players, results
    finally:
        await watcher.close()
    await until(lambda: bots.poll() is not None, 90, "the bots to finish")
    code = bots.returncode
    report = json.loads((tmp_path / "bots.out").read_text().splitlines()[-1])
    assert (code, report["failures"]) == (0, []), report
    assert report["rounds"] == BOTS * ROUNDS
    assert report["verified"] == BOTS * ROUNDS
