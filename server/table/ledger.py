"""Ledger entries: every movement of chips, as the table state machine lists them.

Chips live in four kinds of pot, named by :class:`Pot`: a player's ``account`` (off
the table, in the store), a player's ``table`` balance (seat), the bets ``held`` on
the table for a round, and the ``house``'s result. Every state change that moves
chips lists one :class:`LedgerEntry` per movement; the store applies the entries of
one change atomically together with the new state, and records each entry's ``key``
so that applying the same entry twice has no effect (a retried commit never pays
twice). The sum over all pots is constant: entries only move chips.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Pot(StrEnum):
    """Where chips are."""

    ACCOUNT = "account"  # the player's account balance, outside any table
    TABLE = "table"  # the player's table balance at their seat
    HELD = "held"  # the player's bets held for the round in play
    HOUSE = "house"  # the house's result (the dealer's bank)


class Kind(StrEnum):
    """Why chips moved."""

    BUY_IN = "buy_in"  # account -> table
    REBUY = "rebuy"  # account -> table
    CASH_OUT = "cash_out"  # table -> account
    BET = "bet"  # table -> held (main bet)
    BONUS_BET = "bonus_bet"  # table -> held (bonus bet)
    BET_RETURNED = "bet_returned"  # held -> table (push, removed bet, void)
    BET_LOST = "bet_lost"  # held -> house
    WIN = "win"  # house -> table (even money, before commission)
    COMMISSION = "commission"  # table -> house
    BONUS_WIN = "bonus_win"  # house -> table
    SIDE_BET = "side_bet"  # table -> held (a side bet other than the bonus bet)
    SIDE_WIN = "side_win"  # house -> table (a side bet's win, other than the bonus bet's)


def stake_kind(side: str) -> Kind:
    """The ledger kind of a stake on side bet ``side`` (the bonus bet's as in 0.1.0)."""
    return Kind.BONUS_BET if side == "bonus" else Kind.SIDE_BET


def win_kind(side: str) -> Kind:
    """The ledger kind of side bet ``side``'s win (the bonus bet's as in 0.1.0)."""
    return Kind.BONUS_WIN if side == "bonus" else Kind.SIDE_WIN


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One movement of ``amount`` (> 0) chips of ``player`` from ``source`` to ``dest``.

    ``key`` is unique for the movement across the whole server (table, round, seat
    and what), so the store can apply each entry at most once.
    """

    key: str
    kind: Kind
    player: str
    amount: int
    source: Pot
    dest: Pot

    def __post_init__(self) -> None:
        if not isinstance(self.amount, int) or isinstance(self.amount, bool) or self.amount <= 0:
            raise ValueError(
                f"a ledger entry moves a positive whole number of chips: {self.amount!r}"
            )
        if self.source is self.dest:
            raise ValueError("a ledger entry moves chips between two different pots")
