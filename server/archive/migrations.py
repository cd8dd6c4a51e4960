"""The archive's schema moving forward by itself: numbered migrations, run at the first
use of a database of an earlier version (docs/DESIGN.md, "The archive").

Schema 2 is the first a release wrote (0.1.0). Each later version is reached from the
one before by its :class:`Migration`, and :data:`SCHEMA` lists them in order. A process
opening the archive, in one transaction under the lock that creating the tables takes
(SQLite's write lock, a PostgreSQL advisory lock), creates the tables of
:data:`~server.archive.schema.SCHEMA_VERSION` in an empty database, or runs every
migration from the database's version to it and records the version (and when each
migration ran, ``migrated.<n>`` in ``meta``): of several processes starting together one
migrates and the others, waiting on the lock, find the work done. A migration that
fails rolls back whole (both databases' DDL is transactional), leaving the earlier
version for the next start. A version before the first release, or after this one (a
later release migrated the database), is refused.

A migration's statements must be safe beside a node of the previous release, which
keeps running during a rolling upgrade: that node refuses a database of any other
version, so its archiver (if it holds the archiver's lease) fails its passes, which
a node of this release takes over, and its players' history reads fail until it is
upgraded (deploy/README.md, "Upgrade notes").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from server.archive.dialects import ArchiveError, Dialect
from server.archive.schema import SCHEMA_VERSION, jackpot_statements, statements

log = logging.getLogger(__name__)

FIRST_RELEASED = 2
"""The schema version of the first release (0.1.0): the oldest one migrated from."""


@dataclass(frozen=True, slots=True)
class Migration:
    """From version ``version - 1`` to ``version``: ``steps(blob)`` gives its
    statements, with ``blob`` the dialect's binary type."""

    version: int
    what: str
    steps: Callable[[str], Sequence[str]]


@dataclass(frozen=True, slots=True)
class Schema:
    """A schema version and the migrations that lead to it from :data:`FIRST_RELEASED`."""

    version: int
    migrations: tuple[Migration, ...]
    tables: Callable[[str], list[str]] = statements
    """The statements creating the tables of ``version`` in an empty database."""

    def __post_init__(self) -> None:
        numbers = [m.version for m in self.migrations]
        expected = list(range(FIRST_RELEASED + 1, self.version + 1))
        if numbers != expected:
            raise ValueError(f"migrations {numbers} do not lead to version {self.version}")


MIGRATIONS: tuple[Migration, ...] = (
    Migration(3, "the jackpots' ledgers archived", jackpot_statements),
)
"""Every migration since the first release, in order (0.2.0 kept schema 2; 3 adds the
tables of the jackpots' archived ledgers, which a node of an earlier release never
reads).
A change of the tables adds one here and grows ``SCHEMA_VERSION``; never edit one a
release shipped."""

SCHEMA = Schema(SCHEMA_VERSION, MIGRATIONS)


def prepare(conn: Any, dialect: Dialect, schema: Schema, where: str) -> int | None:
    """In the transaction the caller began under the creation lock: create the tables
    of ``schema`` in an empty database, or migrate an earlier one to it; the version
    migrated from (None if none was). Raises :class:`ArchiveError` for a version it
    does not migrate from."""
    conn.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    row = conn.execute(dialect.sql("SELECT value FROM meta WHERE name = 'schema'")).fetchone()
    if row is None:  # empty: the tables of this version
        for statement in schema.tables(dialect.blob):
            conn.execute(statement)
        _set(conn, dialect, "schema", str(schema.version))
        return None
    found = int(row[0])
    if found == schema.version:
        return None
    if found > schema.version:
        raise ArchiveError(
            f"the archive {where} has the tables of version {found}, written by a later "
            f"release than this one (version {schema.version}): run that release, or "
            "restore the archive's backup taken before the upgrade"
        )
    if found < FIRST_RELEASED:
        raise ArchiveError(
            f"the archive {where} has the tables of version {found}, from before the "
            f"first release (version {FIRST_RELEASED}): no migration leads from it; give "
            "this server a new, empty database"
        )
    for migration in schema.migrations:
        if migration.version <= found:
            continue
        for statement in migration.steps(dialect.blob):
            conn.execute(statement)
        _set(conn, dialect, f"migrated.{migration.version}", str(int(time.time() * 1000)))
        log.warning(
            "archive %s: schema migrated to version %d (%s)",
            where,
            migration.version,
            migration.what,
        )
    _set(conn, dialect, "schema", str(schema.version))
    return found


def _set(conn: Any, dialect: Dialect, name: str, value: str) -> None:
    conn.execute(
        dialect.sql(
            "INSERT INTO meta (name, value) VALUES (?, ?)"
            " ON CONFLICT (name) DO UPDATE SET value = excluded.value"
        ),
        (name, value),
    )
