"""This server's record of the wallet's transactions against the wallet's own, for a
window of time (``paigow-server wallet reconcile --from T --to T``).

Both sides are read for the window, and each transaction found on either side is then
looked up on the other by its id, wherever its time falls (the two clocks stamp a
transaction a little apart: one at the window's edge is not a difference). Every
difference is listed; an empty list means the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.store import WalletStore, WalletTxn
from server.wallet.client import Txn, WalletClient

_EXPECTED = {("debit", "applied"): "applied", ("credit", "acked"): "applied"}


@dataclass(frozen=True, slots=True)
class Difference:
    """One transaction the two sides disagree on: what this server recorded
    (``ours``) and what the wallet did (``theirs``), each a short text."""

    transaction_id: str
    player: str
    ours: str
    theirs: str

    def __str__(self) -> str:
        return f"{self.transaction_id} ({self.player}): here {self.ours}; wallet {self.theirs}"


def _ours(t: WalletTxn | None) -> str:
    return "nothing" if t is None else f"{t.kind} {t.amount} {t.state}"


def _theirs(t: Txn | None) -> str:
    if t is None:
        return "nothing"
    if t.status == "cancelled":
        return "cancelled"
    return f"{t.kind} {t.amount} {t.status}"


def _agree(ours: WalletTxn | None, theirs: Txn | None) -> bool:
    effective = theirs if theirs is not None and theirs.status == "applied" else None
    if ours is None:
        return effective is None
    if ours.kind == "debit" and ours.state == "void":
        return effective is None  # refused, or cancelled: never applied
    if _EXPECTED.get((ours.kind, ours.state)) is None:
        return False  # open debit, pending credit: under way, a difference until done
    return (
        effective is not None
        and effective.kind == ours.kind
        and effective.amount == ours.amount
        and effective.player == ours.player
    )


async def reconcile(
    store: WalletStore, client: WalletClient, from_ms: int, to_ms: int
) -> list[Difference]:
    """The differences between the two records for ``[from_ms, to_ms)``."""
    everything = await store.transactions()
    ours = {t.txid: t for t in everything}
    in_window = {t.txid for t in everything if from_ms <= t.ms < to_ms}
    theirs = {t.transaction_id: t for t in await client.transactions(from_ms, to_ms)}
    for txid in sorted(in_window - theirs.keys()):
        found = await client.status(txid)
        if found is not None:
            theirs[txid] = found
    differences = []
    for txid in sorted(in_window | theirs.keys()):
        mine, wallet = ours.get(txid), theirs.get(txid)
        if not _agree(mine, wallet):
            player = mine.player if mine is not None else (wallet.player if wallet else "")
            differences.append(Difference(txid, player, _ours(mine), _theirs(wallet)))
    return differences
