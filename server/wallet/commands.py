"""The operator's commands of wallet mode, called by :mod:`server.cli`:
``paigow-server wallet reconcile --from T --to T``, and the wallet's part of
``paigow-server audit``."""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime

from server.config import Settings
from server.store import AuditReport, Stores, WalletStore, wallet_audit
from server.wallet.funding import wallet_client
from server.wallet.reconcile import reconcile

_FAR_FUTURE_MS = 2**53 - 1


def moment_ms(text: str) -> int:
    """A moment given on the command line: epoch milliseconds, or ISO 8601 (a time
    with no zone is UTC), e.g. ``2026-12-07T10:00``."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither epoch milliseconds nor an ISO 8601 time"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


async def audit_wallet(settings: Settings, stores: Stores, report: AuditReport) -> None:
    """Add the wallet check to ``report`` (wallet mode only: nothing without a wallet)."""
    if not settings.wallet_url:
        return
    async with wallet_client(settings) as client:
        txns = await client.transactions(0, _FAR_FUTURE_MS)
    applied = [t for t in txns if t.status == "applied"]
    await wallet_audit(
        stores.client,
        report,
        wallet_debits=sum(t.amount for t in applied if t.kind == "debit"),
        wallet_credits=sum(t.amount for t in applied if t.kind == "credit"),
    )


async def reconcile_command(settings: Settings, stores: Stores, from_ms: int, to_ms: int) -> int:
    """Print every difference for the window; 1 if there is any, else 0."""
    async with wallet_client(settings) as client:
        found = await reconcile(WalletStore(stores.client), client, from_ms, to_ms)
    for difference in found:
        print(difference)
    window = f"{from_ms} to {to_ms}"
    print(f"{len(found)} differences ({window}, read {int(time.time() * 1000)})")
    return 1 if found else 0
