"""Fixtures of the TUI tests: the session's tables, at a person's pace where it shows."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from server.config import Settings
from tests.conftest import FAST_TABLES

PACE = {
    # The time to set a hand: a round ends as soon as every hand is set, but a test
    # that looks at its picks first took longer than 2 s on a loaded machine.
    "setting_ms = 2000": "setting_ms = 20000",
    # The result and its check stay on screen until the next round clears them: 300 ms
    # went by unseen on a loaded machine.
    "settling_ms = 300": "settling_ms = 5000",
}


@pytest.fixture
def server_settings(server_settings: Settings, tmp_path: Path) -> Settings:
    """The session's tables, with ``fast`` at a person's pace where the screen shows it
    (:data:`PACE`)."""
    tables = FAST_TABLES
    for fast, paced in PACE.items():
        assert tables.count(fast) == 1, fast
        tables = tables.replace(fast, paced)
    path = tmp_path / "tui-tables.toml"
    path.write_text(tables)
    return dataclasses.replace(server_settings, tables_file=path)
