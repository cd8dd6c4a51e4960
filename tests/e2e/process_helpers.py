"""What the end-to-end tests of a server process share: its tables, its start against
the session's Redis, and what a client heard and the audit says."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from protocol.messages import PhaseChange, Snapshot
from tests.server.helpers import Client
from tests.server.processes import ServerProcess, run_cli, server_args

SECRET = "process-test-secret-0123456789"

TABLES = """
[[table]]
id = "k"
name = "Kill"
min_bet = 10
max_bet = 500
denominations = [5, 10, 25]
min_buy_in = 100
max_buy_in = 5000
betting_ms = {betting_ms}
dealing_ms = 100
setting_ms = {setting_ms}
revealing_ms = 200
settling_ms = 200
grace_ms = {grace_ms}

[[table]]
id = "other"
name = "Other"
"""


def start(
    processes: list[ServerProcess],
    redis_url: str,
    tmp_path: Path,
    *,
    setting_ms: int,
    lease_ms: int,
    betting_ms: int = 5000,
    grace_ms: int = 30_000,
    port: int = 0,
    name: str | None = None,
    extra: Sequence[str] = (),
) -> ServerProcess:
    """A server process (not yet awaited) on the session's Redis, with :data:`TABLES`, its
    data and log under ``tmp_path``; killed and reaped with ``processes`` after the test."""
    tables = tmp_path / "tables.toml"
    tables.write_text(
        TABLES.format(setting_ms=setting_ms, betting_ms=betting_ms, grace_ms=grace_ms)
    )
    args = server_args(
        redis_url,
        tables,
        tmp_path / "data",
        secret=SECRET,
        lease_ms=lease_ms,
        port=port,
        extra=[*(["--node-name", name] if name else []), *extra],
    )
    process = ServerProcess(args, tmp_path / f"server-{len(processes)}.log")
    processes.append(process)
    return process


def phase_of(client: Client, table_id: str) -> str | None:
    """The phase ``client`` last heard of at ``table_id``, from a snapshot or an event."""
    heard = [m.phase for m in client.table(table_id) if isinstance(m, Snapshot | PhaseChange)]
    return heard[-1] if heard else None


def audit_passes(redis_url: str) -> str:
    done = run_cli(["--redis-url", redis_url, "audit"])
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout
