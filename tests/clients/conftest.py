"""Fixtures of the clients' tests: the session's server settings, with a steady lease."""

from __future__ import annotations

import dataclasses

import pytest

from server.config import Settings
from tests.helpers import STEADY_LEASE_MS
from tests.server.conftest import start_app  # noqa: F401 (the fixture, for these tests too)


@pytest.fixture
def server_settings(server_settings: Settings) -> Settings:
    """The servers these tests play against keep their tables on a loaded machine
    (:data:`~tests.helpers.STEADY_LEASE_MS`)."""
    return dataclasses.replace(server_settings, lease_ms=STEADY_LEASE_MS)
