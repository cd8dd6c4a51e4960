"""Fixtures of the end-to-end tests: server processes killed and reaped after each test,
and the shell's servers with chosen tables and settings (``start_app``, from
tests/server/conftest.py: a conftest serves its own folder only)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.server.conftest import start_app
from tests.server.processes import ServerProcess


@pytest.fixture
def processes() -> Iterator[list[ServerProcess]]:
    """Server processes started by a test; all killed and reaped afterwards."""
    started: list[ServerProcess] = []
    yield started
    for p in started:
        p.close()


__all__ = ["processes", "start_app"]
