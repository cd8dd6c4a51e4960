"""The archive's connection: one database (SQLite or PostgreSQL), one transaction at a
time in a worker thread (see :mod:`server.archive.database`, which builds the archive's
calls on it).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from server.archive.dialects import (
    DATABASE_ERRORS,
    ArchiveError,
    Dialect,
    Postgres,
    connect_postgres,
    connect_sqlite,
)
from server.archive.migrations import SCHEMA, Schema, prepare
from server.config import redacted_url as describe

T = TypeVar("T")


class Connection:
    """The database behind ``url``: ``postgresql://...`` (or ``postgres://``), or
    ``sqlite:PATH`` / ``sqlite:///ABSOLUTE/PATH``.

    :meth:`_call` runs one transaction in a worker thread, one at a time; a failed call
    rolls back, and a broken connection is opened again at the next call. :meth:`close`
    when done.
    """

    def __init__(self, url: str, *, schema: Schema = SCHEMA) -> None:
        """``schema``: the tables' version and the migrations to it (this release's)."""
        self.url = url
        self.schema = schema
        self._dialect: Dialect
        self._path: Path | None = None
        # The driver's errors the archive's callers see as ArchiveError (PostgreSQL's:
        # DATABASE_ERRORS cannot name them without loading the driver in every process).
        self._wrapped: tuple[type[Exception], ...] = ()
        if url.startswith(("postgresql://", "postgres://")):
            self._dialect = Postgres()
            self._connect, driver_error = connect_postgres(url)
            self._wrapped = (driver_error,)
        elif url.startswith("sqlite:"):
            path = url.removeprefix("sqlite:")
            if path.startswith("//"):
                path = path[2:]  # sqlite:///abs/path -> /abs/path
            if not path:
                raise ArchiveError(f"no file in the archive URL {url!r}")
            self._dialect = Dialect()
            self._path = Path(path)
            self._connect = connect_sqlite(self._path)
        else:
            raise ArchiveError(
                f"the archive URL {describe(url)!r} is neither postgresql:// nor sqlite:"
            )
        self._conn: Any = None
        self._ready = False
        self._lock = threading.Lock()

    def exists(self) -> bool:
        """Whether there is a database to read (a SQLite file is made at first use)."""
        return self._path is None or self._path.exists()

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._dialect.name

    # --- plumbing -------------------------------------------------------------------

    def _run(self, work: Callable[[Any], T], *, write: bool) -> T:
        with self._lock:
            if self._conn is None:
                try:
                    self._conn = self._connect()
                except (*DATABASE_ERRORS, *self._wrapped) as exc:
                    raise ArchiveError(
                        f"cannot open the archive {describe(self.url)}: {exc}"
                    ) from exc
            conn, d = self._conn, self._dialect
            try:
                if not self._ready:
                    self._create(conn)
                (d.begin_write if write else d.begin_read)(conn)
                result = work(conn)
                d.commit(conn)
                return result
            except BaseException as exc:
                try:
                    d.rollback(conn)
                except Exception:  # the connection is broken: open another next time
                    self._drop()
                if isinstance(exc, self._wrapped):
                    raise ArchiveError(f"the archive {describe(self.url)}: {exc}") from exc
                raise

    async def _call(self, work: Callable[[Any], T], *, write: bool = False) -> T:
        return await asyncio.to_thread(self._run, work, write=write)

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # a broken connection may fail to close
                conn.close()

    def _create(self, conn: Any) -> None:
        """Create the tables, or migrate them forward (:mod:`server.archive.migrations`),
        in one transaction under the creation lock, once per connection."""
        d = self._dialect
        d.begin_create(conn)
        prepare(conn, d, self.schema, describe(self.url))
        d.commit(conn)
        self._ready = True

    def _q(self, conn: Any, text: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(conn.execute(self._dialect.sql(text), tuple(args)).fetchall())

    def _x(self, conn: Any, text: str, args: Sequence[Any] = ()) -> None:
        conn.execute(self._dialect.sql(text), tuple(args))

    def _many(self, conn: Any, text: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            cur = conn.cursor()
            cur.executemany(self._dialect.sql(text), [tuple(r) for r in rows])
            cur.close()

    async def close(self) -> None:
        """Close the connection (a later call opens another)."""

        def close() -> None:
            with self._lock:
                self._drop()

        await asyncio.to_thread(close)

    async def identity(self) -> str:
        """This archive's identity, made at its first use (random)."""
        made = secrets.token_hex(8)

        def read(conn: Any) -> str:
            self._x(
                conn,
                "INSERT INTO meta (name, value) VALUES ('identity', ?)"
                " ON CONFLICT (name) DO NOTHING",
                (made,),
            )
            return str(self._q(conn, "SELECT value FROM meta WHERE name = 'identity'")[0][0])

        return await self._call(read, write=True)
