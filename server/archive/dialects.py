"""What differs between the archive's two databases: how to connect, the binary type,
the parameter marks, how a transaction begins (see :mod:`server.archive.database`)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


class ArchiveError(Exception):
    """The archive could not be opened (a bad URL, a missing driver, no database), or
    PostgreSQL's driver failed (the driver's error is the cause)."""


DATABASE_ERRORS: tuple[type[Exception], ...] = (ArchiveError, sqlite3.Error)
"""What a call of the archive may raise when the database fails. PostgreSQL's driver is
loaded only for a PostgreSQL archive (it takes a few hundred milliseconds, on every
start): its errors reach the caller as :class:`ArchiveError`, so that this tuple needs
no import of it."""


class Dialect:
    """What differs between the two databases."""

    name = "sqlite"
    blob = "BLOB"
    lock = ""

    def sql(self, text: str) -> str:
        return text

    def begin_write(self, conn: Any) -> None:
        conn.execute("BEGIN IMMEDIATE")

    def begin_read(self, conn: Any) -> None:
        conn.execute("BEGIN")

    def begin_create(self, conn: Any) -> None:
        """Begin the transaction that creates the tables, one process at a time."""
        self.begin_write(conn)

    def commit(self, conn: Any) -> None:
        conn.execute("COMMIT")

    def rollback(self, conn: Any) -> None:
        if getattr(conn, "in_transaction", False):
            conn.execute("ROLLBACK")


class Postgres(Dialect):
    name = "postgresql"
    blob = "BYTEA"
    lock = " FOR UPDATE"

    def sql(self, text: str) -> str:
        return text.replace("?", "%s")

    def begin_write(self, conn: Any) -> None:
        pass  # psycopg opens a transaction at the first statement

    def begin_read(self, conn: Any) -> None:
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")

    def begin_create(self, conn: Any) -> None:
        # CREATE TABLE IF NOT EXISTS races with itself in another session.
        conn.execute("SELECT pg_advisory_xact_lock(7231017)")

    def commit(self, conn: Any) -> None:
        conn.commit()

    def rollback(self, conn: Any) -> None:
        conn.rollback()


_WAL_ATTEMPTS = 100
"""Tries at setting a new SQLite file's journal mode, 50 ms apart (5 s in all)."""


def connect_sqlite(path: Path) -> Callable[[], Any]:
    def connect() -> Any:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
        # Changing the journal's mode takes a lock that the busy timeout does not wait
        # for: set only where it is not WAL yet (once per file), and tried again for a
        # while when another process is setting it at the same moment (two archivers
        # opening a new file: "database is locked").
        for attempt in range(_WAL_ATTEMPTS):
            try:
                if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    conn.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError:
                if attempt == _WAL_ATTEMPTS - 1:
                    raise
                time.sleep(0.05)
        # Durable at each commit: Redis drops what it copied right after.
        conn.execute("PRAGMA synchronous=FULL")
        return conn

    return connect


def connect_postgres(url: str) -> tuple[Callable[[], Any], type[Exception]]:
    """A connector to the PostgreSQL database at ``url``, and its driver's errors' base
    class (raised to the archive's callers as :class:`ArchiveError`)."""
    try:
        import psycopg
    except ImportError as exc:
        raise ArchiveError(
            "a PostgreSQL archive needs the psycopg driver, which this installation "
            "lacks: install the package's postgres extra (pip install "
            "'paigow-server[postgres]')"
        ) from exc

    def connect() -> Any:
        return psycopg.connect(url, autocommit=False, connect_timeout=10)

    return connect, psycopg.Error
