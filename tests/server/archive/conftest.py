"""Fixtures of the archive's tests: each test runs against SQLite and against a real
PostgreSQL (one server for the session, a database per test), on the session's Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from server.archive import Archive
from tests.server.archive.postgres import LocalPostgres, local_postgres


@pytest.fixture(scope="session")
def postgres() -> Iterator[LocalPostgres]:
    """A PostgreSQL server for the session (started the first time a test needs it)."""
    with local_postgres() as server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def archive_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty archive: a SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:{tmp_path / 'archive.sqlite3'}"
    server: LocalPostgres = request.getfixturevalue("postgres")
    return server.new_database()


@pytest_asyncio.fixture
async def archive(archive_url: str) -> AsyncIterator[Archive]:
    """The archive at ``archive_url``, closed after the test."""
    opened = Archive(archive_url)
    try:
        yield opened
    finally:
        await opened.close()
