"""PostgreSQL's driver is an extra (`postgres`): a server told to archive there without
it stops at once and names the extra. Loaded only for a PostgreSQL archive, its errors
reach the archive's callers as ``ArchiveError`` (one of ``DATABASE_ERRORS``, which
names no class of the driver)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from server.archive import DATABASE_ERRORS, Archive, ArchiveError
from tests.server.archive.postgres import LocalPostgres
from tests.server.processes import run_cli


def test_a_postgresql_archive_without_its_driver_names_the_extra(tmp_path: Path) -> None:
    # A module that fails to import, ahead of the installed psycopg on the path: the
    # import the server makes fails as it does where the extra was not installed.
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "psycopg.py").write_text("raise ImportError(\"No module named 'psycopg'\")\n")
    data = tmp_path / "data"
    done = run_cli(
        [
            "--data-dir",
            str(data),
            "--port",
            "0",
            "--archive-url",
            "postgresql://paigow@127.0.0.1:9/none",
        ],
        env={"PYTHONPATH": str(shadow)},
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "paigow-server[postgres]" in done.stderr, done.stderr
    assert "psycopg" in done.stderr
    # It stopped before starting anything: no embedded Redis was made.
    assert not (data / "redis").exists()


@pytest.mark.asyncio
async def test_a_postgresql_failure_reaches_the_caller_as_an_archive_error(
    postgres: LocalPostgres,
) -> None:
    url = postgres.new_database()
    name = url.split("?")[0].rsplit("/", 1)[1]
    archive = Archive(url)
    try:
        assert (await archive.stats()).ledger == 0  # opened, its tables made
        # The database goes away under the open connection (its sessions ended).
        with psycopg.connect(postgres.url(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
        with pytest.raises(ArchiveError) as raised:
            await archive.stats()
        assert isinstance(raised.value, DATABASE_ERRORS)
        assert isinstance(raised.value.__cause__, psycopg.Error)
        # The next call opens a connection again, and cannot: the same kind of error.
        with pytest.raises(ArchiveError, match="cannot open the archive") as again:
            await archive.stats()
        assert isinstance(again.value.__cause__, psycopg.Error)
    finally:
        await archive.close()
