"""``paigow-server audit``: check that every chip is accounted for, across Redis, the
archive and (wallet mode) the operator's wallet; exit 1 if not."""

from __future__ import annotations

import functools
from typing import Any

from server.admin import operations as ops
from server.cli.common import open_archive, open_stores
from server.config import Settings
from server.wallet.commands import audit_wallet


def add_parser(sub: Any) -> None:
    """``audit``."""
    sub.add_parser("audit", help="check that accounts, tables and the house add up")


async def audit(settings: Settings) -> int:
    """Print the audit's report: 0 if everything adds up, else 1."""
    async with (
        await open_stores(settings) as stores,
        open_archive(settings, create=False) as archive,
    ):
        # Wallet mode adds the wallet's check (nothing without a wallet).
        report = await ops.audit(stores, archive, functools.partial(audit_wallet, settings, stores))
        print(report["text"])
        return 0 if report["ok"] else 1
