"""What the audit found (:mod:`server.store.audit.check`): the sums, the problems, the notes."""

from __future__ import annotations

from dataclasses import dataclass, field

_SHOWN = 10  # problems of one kind listed before "and N more"


@dataclass(slots=True)
class AuditReport:
    """The audit's findings; ``ok`` when ``problems`` is empty."""

    credited: int = 0
    removed: int = 0  # taken back out: closed guest accounts
    accounts_total: int = 0
    tables_total: int = 0
    held_total: int = 0
    house_total: int = 0
    to_accounts: int = 0  # in transit: paid out by tables, not yet in the accounts
    to_tables: int = 0  # in transit: reserved by accounts, not yet on the tables
    accounts: int = 0
    tables: int = 0
    ledger_entries: int = 0  # ever appended, over every stream
    ledger_scanned: int = 0  # replayed: found after the checkpoints, in Redis or the archive
    ledger_complete: bool = False  # the checkpoints and the entries after them count them all
    checkpoint_entries: int = 0  # summed up in the archive's checkpoints
    readings: int = 0
    duplicates: dict[str, list[str]] = field(default_factory=dict)  # key -> stream ids
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Wallet mode: the wallet's debits and credits, the chips here that came from it,
    # the credits waiting in the outboxes (:mod:`server.store.audit.wallet`).
    wallet: tuple[int, int, int, int] | None = None
    # Progressive jackpots (:mod:`server.store.audit.jackpots`): how many, the chips on
    # their meters, and the house's result through them (the seeds and contributions
    # it gave, so negative).
    jackpots: int = 0
    meters_total: int = 0
    jackpot_house_total: int = 0

    @property
    def ok(self) -> bool:
        """Whether every check passed."""
        return not self.problems

    @property
    def in_transit(self) -> int:
        """Chips between an account and a table."""
        return self.to_accounts + self.to_tables

    @property
    def held_everywhere(self) -> int:
        """Accounts + table balances + held bets + house result + in transit."""
        return (
            self.accounts_total
            + self.tables_total
            + self.held_total
            + self.house_total
            + self.meters_total
            + self.jackpot_house_total
            + self.in_transit
        )

    def explain(self) -> str:
        """A human-readable report, the verdict last."""
        lines = [
            f"credited from outside: {self.credited}",
            *([f"taken back out: {self.removed}"] if self.removed else []),
            f"accounts ({self.accounts}): {self.accounts_total}",
            f"table balances ({self.tables} tables): {self.tables_total}",
            f"held bets: {self.held_total}",
            f"house result: {self.house_total}",
            *(
                [
                    f"jackpots ({self.jackpots}): meters {self.meters_total}, house result "
                    f"through them {self.jackpot_house_total}"
                ]
                if self.jackpots
                else []
            ),
            f"in transit: {self.in_transit} ({self.to_accounts} to accounts, "
            f"{self.to_tables} to tables)",
            f"sum: {self.held_everywhere}",
            f"ledger: {self.ledger_scanned} entries scanned of {self.ledger_entries} appended"
            + (
                f" ({self.checkpoint_entries} summed up in the archive's checkpoints)"
                if self.checkpoint_entries
                else ""
            ),
        ]
        if self.wallet is not None:
            debits, credits, here, pending = self.wallet
            lines.append(
                f"wallet: debits {debits} - credits {credits} = {debits - credits}; here from "
                f"the wallet {here} + outboxes {pending} = {here + pending}"
            )
        lines += [f"note: {n}" for n in self.notes]
        lines += [f"PROBLEM: {p}" for p in self.problems]
        lines.append("audit passed" if self.ok else f"audit FAILED ({len(self.problems)} problems)")
        return "\n".join(lines)


def listed(items: list[str]) -> str:
    more = len(items) - _SHOWN
    shown = ", ".join(items[:_SHOWN])
    return f"{shown} and {more} more" if more > 0 else shown
