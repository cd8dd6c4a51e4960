"""``paigow-server wallet reconcile --from --to``: the operator's wallet against this
server's record (wallet mode, ``--wallet-url``; the work is in
:mod:`server.wallet.commands`)."""

from __future__ import annotations

import argparse
from typing import Any

from server.cli.common import open_stores
from server.config import Settings
from server.wallet.commands import moment_ms, reconcile_command


def add_parser(sub: Any) -> None:
    """``wallet reconcile``."""
    wal = sub.add_parser("wallet", help="the operator's wallet (wallet mode)")
    wal_sub = wal.add_subparsers(dest="action", required=True)
    rec = wal_sub.add_parser(
        "reconcile", help="list every transaction the wallet and this server disagree on"
    )
    rec.add_argument(
        "--from",
        dest="from_ms",
        type=moment_ms,
        required=True,
        help="epoch ms or ISO 8601 (UTC if no zone)",
    )
    rec.add_argument(
        "--to",
        dest="to_ms",
        type=moment_ms,
        required=True,
        help="epoch ms or ISO 8601 (UTC if no zone)",
    )


async def wallet(settings: Settings, args: argparse.Namespace) -> int:
    """Reconcile the window asked for."""
    async with await open_stores(settings) as stores:
        return await reconcile_command(settings, stores, args.from_ms, args.to_ms)
