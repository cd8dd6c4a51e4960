"""A reference wallet per test (a child process on loopback)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.wallet.running import WalletProcess


@pytest.fixture
def wallet(tmp_path: Path) -> Iterator[WalletProcess]:
    process = WalletProcess(tmp_path)
    try:
        yield process
    finally:
        process.close()
