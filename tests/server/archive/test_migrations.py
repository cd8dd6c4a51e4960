"""The archive's schema moves forward by itself (``server/archive/migrations.py``), on
SQLite and on a real PostgreSQL: a database of release 0.1.0 (schema 2, built from its
recorded DDL) is migrated by this release (schema 3: the jackpots' ledgers) and by
later ones, from each earlier version, once however many processes open it together; a
migration that fails leaves the database as it was; a version it cannot migrate from is refused."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from server.archive import Archive
from server.archive.dialects import ArchiveError
from server.archive.migrations import FIRST_RELEASED, MIGRATIONS, SCHEMA, Migration, Schema
from server.archive.schema import SCHEMA_VERSION, statements

RELEASE_0_1_DDL = Path(__file__).parent / "data" / "schema-2.sql"


def _blob(url: str) -> str:
    return "BLOB" if url.startswith("sqlite:") else "BYTEA"


def _execute(url: str, sql: Sequence[str]) -> list[tuple[Any, ...]]:
    """Run ``sql`` on the database at ``url`` in one transaction; the last one's rows."""
    rows: list[tuple[Any, ...]] = []
    if url.startswith("sqlite:"):
        conn = sqlite3.connect(url.removeprefix("sqlite:"))
        try:
            with conn:
                for statement in sql:
                    cur = conn.execute(statement)
                    rows = cur.fetchall()
        finally:
            conn.close()
        return rows
    import psycopg

    with psycopg.connect(url) as pg:
        for statement in sql:
            done = pg.execute(statement)
            rows = done.fetchall() if done.description else []
    return rows


def build_release_0_1(url: str) -> None:
    """A database as 0.1.0 left it: its tables (the recorded DDL), one ledger entry."""
    lines = [line for line in RELEASE_0_1_DDL.read_text().splitlines() if not line.startswith("--")]
    text = "\n".join(lines).replace("{blob}", _blob(url))
    sql = [s.strip() for s in text.split(";") if s.strip()]
    sql.append(
        "INSERT INTO ledger VALUES ('pg:table:{t}:ledger', 1, 0, 'k1', 'bet', 'p1', 25,"
        " 'table', 'held', 't', '{}')"
    )
    _execute(url, sql)


def _later(fail_at: int | None = None) -> Schema:
    """This release's schema followed by two more versions: the first adds a table (and
    fails if ``fail_at`` is its version), the second a column (an ALTER that fails if
    run twice, so a second run would show)."""

    def three(blob: str) -> list[str]:
        steps = [f"CREATE TABLE notes (id BIGINT PRIMARY KEY, body {blob} NOT NULL)"]
        failing = fail_at == SCHEMA_VERSION + 1
        return [*steps, "SELECT no_such_column FROM notes"] if failing else steps

    def four(blob: str) -> list[str]:
        return ["ALTER TABLE notes ADD COLUMN made_ms BIGINT NOT NULL DEFAULT 0"]

    def tables(blob: str) -> list[str]:
        return [*statements(blob), *three(blob), *four(blob)]

    added = (
        Migration(SCHEMA_VERSION + 1, "notes", three),
        Migration(SCHEMA_VERSION + 2, "notes made", four),
    )
    return Schema(SCHEMA_VERSION + 2, (*MIGRATIONS, *added), tables)


def _version(url: str) -> int:
    return int(_execute(url, ["SELECT value FROM meta WHERE name = 'schema'"])[0][0])


async def _open(url: str, schema: Schema = SCHEMA) -> str:
    archive = Archive(url, schema=schema)
    try:
        return await archive.identity()
    finally:
        await archive.close()


def test_the_recorded_ddl_is_the_first_released_schema() -> None:
    """What this release creates is what 0.1.0 created and what its migrations add: the
    recorded fixture is the truth the migrations start from."""
    assert SCHEMA.version == SCHEMA_VERSION == 2 + len(MIGRATIONS)
    recorded = RELEASE_0_1_DDL.read_text()
    added = [step for m in MIGRATIONS for step in m.steps("{blob}")]
    created = statements("{blob}")
    for statement in created:
        assert statement in recorded or statement in added
    for step in added:
        assert step in created


@pytest.mark.asyncio
async def test_a_database_of_0_1_0_is_used_and_migrated_forward_from_each_version(
    archive_url: str,
) -> None:
    build_release_0_1(archive_url)
    await _open(archive_url)  # this release: nothing to migrate (or its own migrations)
    assert _version(archive_url) == SCHEMA_VERSION
    later = _later()
    # From this version to the next, then from that one to the last: each earlier
    # version is migrated from.
    middle = Schema(SCHEMA_VERSION + 1, later.migrations[: len(MIGRATIONS) + 1])
    await _open(archive_url, middle)
    assert _version(archive_url) == SCHEMA_VERSION + 1
    _execute(archive_url, ["INSERT INTO notes (id, body) VALUES (1, 'x')"])
    await _open(archive_url, later)
    assert _version(archive_url) == SCHEMA_VERSION + 2
    assert _execute(archive_url, ["SELECT id, made_ms FROM notes"]) == [(1, 0)]
    # What was there is kept.
    assert _execute(archive_url, ["SELECT player, amount FROM ledger"]) == [("p1", 25)]
    migrated = _execute(archive_url, ["SELECT name FROM meta WHERE name LIKE 'migrated.%'"])
    assert sorted(name for (name,) in migrated) == [
        f"migrated.{version}" for version in range(FIRST_RELEASED + 1, SCHEMA_VERSION + 3)
    ]
    # Straight from the first release's version to the last.
    fresh = archive_url + ("-b" if archive_url.startswith("sqlite:") else "")
    if fresh != archive_url:
        build_release_0_1(fresh)
        await _open(fresh, later)
        assert _version(fresh) == SCHEMA_VERSION + 2


@pytest.mark.asyncio
async def test_processes_opening_it_together_migrate_it_once(archive_url: str) -> None:
    build_release_0_1(archive_url)
    later = _later()
    # Each in its own connection and thread: the ALTER of version 4 fails if run twice.
    identities = await asyncio.gather(*(_open(archive_url, later) for _ in range(4)))
    assert len(set(identities)) == 1
    assert _version(archive_url) == SCHEMA_VERSION + 2


@pytest.mark.asyncio
async def test_a_failed_migration_leaves_the_earlier_version(archive_url: str) -> None:
    build_release_0_1(archive_url)
    with pytest.raises(Exception, match="no_such_column"):
        await _open(archive_url, _later(fail_at=SCHEMA_VERSION + 1))
    # This release's own migrations ran in the same transaction: rolled back with it.
    assert _version(archive_url) == FIRST_RELEASED
    # Rolled back whole: the table of the failed step is not there, so a fixed release
    # migrates it.
    await _open(archive_url, _later())
    assert _version(archive_url) == SCHEMA_VERSION + 2


@pytest.mark.asyncio
async def test_a_version_before_the_first_release_or_after_this_one_is_refused(
    archive_url: str,
) -> None:
    build_release_0_1(archive_url)
    _execute(archive_url, ["UPDATE meta SET value = '1' WHERE name = 'schema'"])
    with pytest.raises(ArchiveError, match="before the first release"):
        await _open(archive_url)
    _execute(archive_url, [f"UPDATE meta SET value = '{SCHEMA_VERSION + 1}' WHERE name = 'schema'"])
    with pytest.raises(ArchiveError, match="later release"):
        await _open(archive_url)
    assert _version(archive_url) == SCHEMA_VERSION + 1  # nothing written


def test_migrations_must_lead_to_the_version() -> None:
    with pytest.raises(ValueError, match="do not lead"):
        Schema(SCHEMA_VERSION + 1, MIGRATIONS)
