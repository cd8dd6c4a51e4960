"""The audit's wallet check (wallet mode; docs/DESIGN.md, "The operator's wallet").

In wallet mode the chips here came from the wallet (a debit applied: a ``credit``
entry keyed ``wallet#<id>``, from outside) and go back to it (a sweep: a ``to_wallet``
entry, to outside, queued in an outbox until the wallet acknowledges it). So, with the
conservation check of :mod:`server.store.audit.check` passing, one more must hold:

    the wallet's debits - the wallet's credits
        == the chips held here that came from the wallet + the credits in the outboxes

where the chips held here that came from the wallet are everything held (accounts,
tables, held bets, house, in transit) less what came from elsewhere (a guest's
starting chips, an operator's credit). The wallet's totals are the caller's to fetch
(the store speaks no HTTP). A debit still open (asked, its answer unknown) is listed:
until it is resolved the two sides may differ by it.
"""

from __future__ import annotations

import redis.asyncio

from server.store.audit.report import AuditReport, listed
from server.store.chips.wallet import WalletStore
from server.store.errors import store_call
from server.store.keys import DEFAULT_KEYS, Keys


@store_call
async def wallet_audit(
    client: redis.asyncio.Redis,
    report: AuditReport,
    *,
    wallet_debits: int,
    wallet_credits: int,
    keys: Keys = DEFAULT_KEYS,
) -> None:
    """Add the wallet check to ``report`` (made by the audit of the same store), given
    the totals of the debits and credits the wallet applied."""
    store = WalletStore(client, keys=keys)
    txns = await store.transactions()
    debits = sum(t.amount for t in txns if t.kind == "debit" and t.state == "applied")
    credits = sum(t.amount for t in txns if t.kind == "credit")
    pending = sum(t.amount for t in txns if t.kind == "credit" and t.state == "pending")
    open_debits = [f"{t.txid} ({t.player}, {t.amount})" for t in txns if t.state == "open"]
    from_elsewhere = (report.credited - debits) - (report.removed - credits)
    here = report.held_everywhere - from_elsewhere
    report.wallet = (wallet_debits, wallet_credits, here, pending)
    if open_debits:
        report.notes.append(
            f"{len(open_debits)} debits of the wallet are still being resolved: "
            f"{listed(open_debits)}"
        )
    if wallet_debits - wallet_credits != here + pending:
        report.problems.append(
            f"the wallet does not add up: its debits {wallet_debits} - its credits "
            f"{wallet_credits} = {wallet_debits - wallet_credits}, but the chips here from "
            f"the wallet {here} + credits waiting in the outboxes {pending} = {here + pending}"
        )
