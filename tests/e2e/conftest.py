"""Fixtures of the end-to-end tests: server processes killed and reaped after each test,
the shell's servers with chosen tables and settings (``start_app``) and a Redis of the
test's own to stop and start again (``own_redis``), both from tests/server/conftest.py
(a conftest serves its own folder only)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.server.conftest import own_redis, start_app
from tests.server.processes import ServerProcess


@pytest.fixture
def processes() -> Iterator[list[ServerProcess]]:
    """Server processes started by a test; all killed and reaped afterwards."""
    started: list[ServerProcess] = []
    yield started
    for p in started:
        p.close()


__all__ = ["own_redis", "processes", "start_app"]
