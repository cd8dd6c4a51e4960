"""A rolling upgrade from the previous release, with bots playing throughout.

The previous release (:mod:`tests.deploy.releases`) is built from this repository's
history into a virtualenv of its own; three of its nodes run on one Redis with bots
seated at every table, each bot connected to one node. Then each node in turn is
drained (SIGTERM), stopped, and started again under its name and port from this
checkout, as an operator does (deploy/README.md, "Upgrades"); the bots of the node going
away are sent to another one first, as a balancer would. So the cluster is mixed for
most of the test: old and new nodes hand tables to each other, forward requests and
publish events to each other. At the end no round was lost (every table's round numbers
follow each other, none voided), no seat was lost (every bot still sits where it sat),
every bot's events came without a gap, and ``audit`` is clean. The first node upgraded
is drained once more mid-upgrade, so that nodes of the previous release take tables
this release wrote. No newer stored format
is switched on while a node of the previous release is live, and every one is once
the last is gone. The longest pause a bot
saw between two events of its table is printed (not asserted: the machine may be
loaded).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import os
import random
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis.asyncio

from bench.procs.topology import free_ports
from clients.autoplay import play_rounds
from clients.core import Client
from protocol.messages import Results, RoundVoid, Snapshot, TableEvent
from server.store import FORMATS
from server.store.keys import DEFAULT_KEYS
from server.version import SERVER_VERSION
from tests.deploy.releases import Release, ReleaseUnavailable, previous_release
from tests.e2e.process_helpers import audit_passes
from tests.helpers import until
from tests.server.helpers import assert_gapless
from tests.server.processes import ROOT, http_get, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

NODES = 3
TABLE_IDS = ("a", "b", "c")
BOTS_PER_TABLE = 2
LEASE_MS = 1000
ROUNDS_AFTER = 2
"""Rounds every table plays once every node is upgraded (and before the first)."""

TABLES = "\n".join(
    f"""
[[table]]
id = "{t}"
name = "Table {t}"
min_bet = 10
max_bet = 500
denominations = [5, 10, 25]
min_buy_in = 100
max_buy_in = 5000
betting_ms = 1500
dealing_ms = 100
setting_ms = 4000
revealing_ms = 200
settling_ms = 200
grace_ms = 60000
"""
    for t in TABLE_IDS
)

SECRET = "rolling-upgrade-test-secret-0123456789"


class Node:
    """One node process: of a release (its own Python and source tree) or of this
    checkout, under a fixed name and port, its output in a log file."""

    def __init__(self, name: str, port: int, folder: Path) -> None:
        self.name = name
        self.port = port
        self.folder = folder
        self.proc: subprocess.Popen[bytes] | None = None
        self.logs: list[Path] = []

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"

    def start(self, redis_url: str, release: Release | None) -> None:
        python = str(release.python) if release else str(ROOT / ".venv" / "bin" / "python")
        cwd = release.source if release else ROOT
        log = self.folder / f"{self.name}-{len(self.logs)}-{'old' if release else 'new'}.log"
        self.logs.append(log)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PAIGOW_", "PYTHON"))}
        env["PYTHONUNBUFFERED"] = "1"
        with log.open("ab") as out:
            self.proc = subprocess.Popen(
                [
                    python,
                    "-m",
                    "server",
                    "--redis-url",
                    redis_url,
                    "--port",
                    str(self.port),
                    "--tables-file",
                    str(self.folder / "tables.toml"),
                    "--data-dir",
                    # One folder for all: its SQLite archive is the one every node
                    # archives to (a node refuses another archive than the store's).
                    str(self.folder / "data"),
                    "--token-secret",
                    SECRET,
                    "--lease-ms",
                    str(LEASE_MS),
                    "--node-name",
                    self.name,
                    "--guests-per-minute",
                    "0",
                    "--guests-per-address",
                    "0",
                    "serve",
                ],
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
            )

    async def ready(self, within: float = 90.0) -> None:
        async def answers() -> bool | None:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.name} exited early:\n{self.output()[-3000:]}")
            try:
                status, _ = await asyncio.to_thread(http_get, self.port, "/readyz")
            except OSError:
                return None
            return True if status == 200 else None

        await until(answers, within, f"{self.name} to be ready", every=0.1)

    async def drain(self, within: float = 90.0) -> int:
        assert self.proc is not None
        self.proc.terminate()
        proc = self.proc
        await until(lambda: proc.poll() is not None, within, f"{self.name} to drain")
        return proc.returncode

    def output(self) -> str:
        return "".join(log.read_text(errors="replace") for log in self.logs)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@dataclass
class Bot:
    """A bot at a table: its client, when it heard each event of its table, its seat."""

    name: str
    table_id: str
    client: Client
    heard: list[tuple[float, TableEvent]] = field(default_factory=list)
    seat: int | None = None

    def longest_pause(self, since: float) -> tuple[float, float]:
        """The longest time between two events of its table heard after ``since``,
        and when it began."""
        times = [t for t, _ in self.heard if t >= since]
        gaps = [(b - a, a) for a, b in itertools.pairwise(times)]
        return max(gaps, default=(0.0, since))


@pytest.fixture
def nodes(tmp_path: Path) -> Iterator[list[Node]]:
    (tmp_path / "tables.toml").write_text(TABLES)
    first = free_ports(NODES)
    made = [Node(f"node-{i + 1}", first + i, tmp_path) for i in range(NODES)]
    try:
        yield made
    finally:
        for node in made:
            node.kill()


async def _listen(bot: Bot) -> None:
    queue = bot.client.listen()
    while True:
        event = await queue.get()
        table_id = getattr(event, "table_id", None)
        if table_id == bot.table_id and hasattr(event, "seq"):
            bot.heard.append((time.monotonic(), event))  # type: ignore[arg-type]


def _settled_rounds(bots: list[Bot], table_id: str, since: float = 0.0) -> set[int]:
    return {
        e.round
        for b in bots
        if b.table_id == table_id
        for t, e in b.heard
        if isinstance(e, Results) and t >= since
    }


@pytest.mark.asyncio
async def test_a_rolling_upgrade_from_the_previous_release_loses_no_round_and_no_seat(
    redis_url: str,
    redis_client: redis.asyncio.Redis,
    nodes: list[Node],
) -> None:
    try:
        old = await asyncio.to_thread(previous_release)
    except ReleaseUnavailable as exc:
        pytest.skip(str(exc))
    for node in nodes:
        node.start(redis_url, old)
    await asyncio.gather(*(node.ready() for node in nodes))

    bots: list[Bot] = []
    tasks: list[asyncio.Task[object]] = []
    rng = random.Random(38)
    try:
        for i in range(len(TABLE_IDS) * BOTS_PER_TABLE):
            table_id = TABLE_IDS[i % len(TABLE_IDS)]
            client = Client(nodes[i % NODES].url, name=f"bot-{i}", backoff_s=0.2, backoff_max_s=1)
            await client.connect()
            bot = Bot(f"bot-{i}", table_id, client)
            bots.append(bot)
            tasks.append(asyncio.create_task(_listen(bot)))
            tasks.append(
                asyncio.create_task(
                    play_rounds(
                        client,
                        table_id,
                        bet=10,
                        rounds=10_000,
                        rng=random.Random(rng.random()),
                        round_timeout_s=120,
                    )
                )
            )

        def rounds_done(since: float, count: int) -> bool:
            for task in tasks:
                if task.done():
                    raise AssertionError(f"a bot stopped: {task.result()!r}")
            return all(len(_settled_rounds(bots, t, since)) >= count for t in TABLE_IDS)

        began = time.monotonic()
        await until(lambda: rounds_done(began, ROUNDS_AFTER), 120, "rounds on the old nodes")
        for bot in bots:
            seat = bot.client.model(bot.table_id).your_seat
            assert seat is not None, bot.name
            bot.seat = seat

        async def replace(i: int) -> None:
            """Drain node ``i`` and start it again from this checkout. The balancer's
            part first: the node's players go to the next node."""
            node, other = nodes[i], nodes[(i + 1) % NODES]
            for bot in bots:
                if bot.client.url == node.url:
                    bot.client.url = other.url
            code = await node.drain()
            assert code == 0, node.output()[-3000:]
            node.start(redis_url, None)
            await node.ready()

        upgrade_began = time.monotonic()
        for i in range(NODES):
            await replace(i)
            if i > 0:
                continue
            # Mixed: the operator sees which node runs which release.
            listed = await asyncio.to_thread(run_cli, ["--redis-url", redis_url, "nodes"])
            rows = re.findall(r"^(node-\d)\t\S+\t\S+\t(\d+)\t-?\d+\t(\S+)$", listed.stdout, re.M)
            assert sorted((name, release) for name, _, release in rows) == [
                ("node-1", SERVER_VERSION),
                ("node-2", "0.1.0"),
                ("node-3", "0.1.0"),
            ], listed.stdout
            # The nodes of 0.1.0 announce nothing: no newer format is switched on.
            assert await redis_client.smembers(DEFAULT_KEYS.formats()) == set()
            # The other way: the upgraded node, holding tables it has written, drains
            # again (a restart mid-upgrade), so nodes of 0.1.0 take tables this
            # release wrote, and play them on.
            assert int({n: held for n, held, _ in rows}["node-1"]) >= 1, listed.stdout
            mark = time.monotonic()
            await until(
                functools.partial(rounds_done, mark, 1), 120, "a round with node-1 upgraded"
            )
            await replace(0)
        upgraded = time.monotonic()

        async def switched_on() -> bool:
            on = await redis_client.smembers(DEFAULT_KEYS.formats())
            return {f if isinstance(f, str) else f.decode() for f in on} == set(FORMATS)

        await until(switched_on, 30, "the newer formats to be switched on")
        await until(lambda: rounds_done(upgraded, ROUNDS_AFTER), 120, "rounds on the new nodes")
        ended = time.monotonic()

        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

        # No seat lost: every bot sits where it sat, as the server says now.
        for bot in bots:
            assert bot.client.model(bot.table_id).your_seat == bot.seat, bot.name
            balances = await bot.client.balance()
            assert [t.table_id for t in balances.tables] == [bot.table_id], bot.name
        # No round lost: each table's rounds follow each other, none voided, and the
        # rounds settled during the upgrade were heard.
        for table_id in TABLE_IDS:
            rounds = sorted(_settled_rounds(bots, table_id))
            assert rounds == list(range(rounds[0], rounds[-1] + 1)), (table_id, rounds)
            assert _settled_rounds(bots, table_id, upgrade_began) - _settled_rounds(
                bots, table_id, upgraded
            ), f"{table_id} played no round during the upgrade"
        voids = [e for b in bots for _, e in b.heard if isinstance(e, RoundVoid)]
        assert not voids, voids
        for bot in bots:
            assert_gapless([e for _, e in bot.heard], bot.name)
        resyncs = sum(isinstance(e, Snapshot) for b in bots for _, e in b.heard) - len(bots)

        pauses = sorted(((*b.longest_pause(upgrade_began), b) for b in bots), key=lambda p: p[0])
        longest, at, who = pauses[-1]
        settled = sum(len(_settled_rounds(bots, t)) for t in TABLE_IDS)
        print(
            f"\nrolling upgrade {old.commit[:7]} -> this checkout, {NODES} nodes, "
            f"{len(bots)} bots at {len(TABLE_IDS)} tables: upgraded in "
            f"{upgraded - upgrade_began:.1f} s; {settled} rounds settled, none lost; "
            f"{resyncs} snapshots after the first; longest pause a player saw "
            f"{longest * 1000:.0f} ms ({who.name} at {who.table_id}, "
            f"{at - upgrade_began:.1f} s into the upgrade); run {ended - began:.1f} s"
        )
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for bot in bots:
            await bot.client.close()
    # No node failed to read what another wrote, or logged an error. (0.1.0 may log a
    # warning with a traceback for a write cut short by its own drain: not an error.)
    for node in nodes:
        for line in node.output().splitlines():
            assert not re.search(r" (ERROR|CRITICAL) |unknown table state format", line), line
    await asyncio.to_thread(audit_passes, redis_url)
