"""``paigow-server archive``: move what is older than the retention window to the
archive now (one pass, as the server's archiver does every ``--archive-every-ms``)."""

from __future__ import annotations

import os
import secrets
import sys
from typing import Any

from server.app import table_money
from server.archive.mover import Archiver
from server.cli.common import open_archive, open_stores
from server.config import Settings
from server.store import lease_ms


def add_parser(sub: Any) -> None:
    """``archive``."""
    sub.add_parser("archive", help="move what is older than the retention window, now")


async def archive_now(settings: Settings) -> int:
    """One archiver's pass under the archiving lease (exit 1: another holds it; 2: the
    archive is off)."""
    async with (
        await open_stores(settings) as stores,
        open_archive(settings, create=True) as archive,
    ):
        if archive is None:
            print("paigow-server: the archive is off (--archive-url off)", file=sys.stderr)
            return 2
        owner = f"cli:{os.getpid()}:{secrets.token_hex(4)}"
        lease = stores.archiving.lease(owner, lease_ms(settings.archive_every_ms))
        if not await lease.wait(lease.ttl_ms / 1000 + 1):
            print(f"paigow-server: {await lease.holder()} is archiving", file=sys.stderr)
            return 1
        try:
            archiver = Archiver(
                stores.archiving,
                archive,
                table_money,
                after_ms=settings.archive_after_ms,
                guest_idle_ms=settings.guest_idle_ms or None,
            )
            report = await archiver.run_once()
        finally:
            await lease.release()
        stats = await archive.stats()
        print(report.summary())
        print(
            f"the archive ({archive.dialect}) holds {stats.ledger} ledger entries and "
            f"{stats.game_logs} game logs"
        )
        return 0
