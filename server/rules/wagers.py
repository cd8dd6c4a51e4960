"""Side bets as data: what a side bet is, so that the table settles every kind alike.

A seat's wagers are its main bet (the game itself: :mod:`server.rules.settlement`) and
its side bets, each of a *kind* named by a short code. A side bet is a
:class:`SideBet`: a frozen record of its kind, its options' type (what a table sets for
it: limits, a pay table, fixed amounts) and a pure ``settle`` function from the round's
cards to a :class:`Settled` (the pay line it paid for, and the chips it returns). The
table (``server/table``) knows no kind by name: it takes stakes within each kind's
limits, moves each stake and each payout as its own ledger entries, and shows each
result, all read from the registry (:mod:`server.rules.side_bets`).

Two sorts of side bet (docs/DESIGN.md, "Wagers"):

- *staked*: the player stakes chips on it (the bonus bet); ``settle`` returns the
  chips back, stake included, or 0 when it loses. Its limits are its options' (the
  bonus bet's, for release 0.1.0's sake, are ``TableConfig.bonus_min/bonus_max``).
- *riding*: no stake of its own, it pays a seat that holds a stake of at least a
  qualifying amount on another kind (``rides_on``): the Envy bonus rides on the bonus
  bet. ``settle`` returns the win, 0 when none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any

from server.rules.options import RuleOptions

MAIN = "main"
"""The main bet's kind: the game itself, settled by :mod:`server.rules.settlement`."""


_RESERVED = frozenset({MAIN, "bet", "win", "commission", "void"})


@dataclass(frozen=True, slots=True)
class SideDeal:
    """What a side bet is settled from: the round as one seat sees it at settlement.

    ``cards`` are the seat's seven cards, ``low`` the two it set low (its high hand is
    the other five); ``dealer`` the dealer's seven and ``dealer_low`` its two low cards;
    ``others`` the seven cards of every *other* seat in the round, in seat order (never
    the dealer's); ``stakes`` the seat's side stakes by kind (a riding bet qualifies on
    them); ``rules`` the table's rule options.
    """

    cards: tuple[int, ...]
    low: tuple[int, ...]
    dealer: tuple[int, ...]
    dealer_low: tuple[int, ...]
    others: tuple[tuple[int, ...], ...]
    stakes: Mapping[str, int]
    rules: RuleOptions


@dataclass(frozen=True, slots=True)
class Settled:
    """A side bet settled: ``payout`` chips back to the seat (a staked bet's stake plus
    its win, 0 when lost; a riding bet's win), and the code of the pay line paid
    (``None`` when it paid nothing). Codes are at most 32 characters (the wire's)."""

    pay_class: str | None
    payout: int

    def __post_init__(self) -> None:
        if isinstance(self.payout, bool) or not isinstance(self.payout, int) or self.payout < 0:
            raise ValueError(f"a payout is a whole number of chips >= 0, not {self.payout!r}")


@dataclass(frozen=True, slots=True)
class PayLine:
    """One line of a side bet's pay table, as shown: its code, its label and what it
    pays (``odds`` to 1 for a staked bet, a fixed amount of chips for a riding one)."""

    code: str
    label: str
    pays: int


@dataclass(frozen=True, slots=True)
class NoOptions:
    """The options of a side bet that a table does not set beyond the 0.1.0 fields."""


@dataclass(frozen=True, slots=True)
class SideBet:
    """The definition of one kind of side bet (see the module docstring).

    - ``kind``: its code on the wire, in the ledger's keys and in the tables file
      (``[a-z0-9_]``, at most 24 characters);
    - ``label``: its name as shown;
    - ``options``: the frozen dataclass of what a table sets for it; every field has a
      default, and its fields are ints, strings, or tuples of them (stored as plain
      data: :func:`options_from_plain`);
    - ``settle(deal, stake, options)`` -> :class:`Settled`: pure;
    - ``limits(config_options)`` -> ``(min, max)`` of a stake (staked bets), or the
      qualifying stake on ``rides_on`` (riding bets) as ``(min, 0)``;
    - ``pay_lines(deal_rules, options)``: its pay table as shown to players;
    - ``rides_on``: ``None`` for a staked bet, else the kind whose stake qualifies;
    - ``past_commit``: its settlement goes on past the table's commit (the progressive's
      calls to its meter): a round settled keeps the options it was settled under
      beside its results (``TableState.settled_options``), whatever settings change
      before those calls are made.
    """

    kind: str
    label: str
    options: type[Any]
    settle: Callable[[SideDeal, int, Any], Settled]
    limits: Callable[[Any], tuple[int, int]]
    pay_lines: Callable[[RuleOptions, Any], tuple[PayLine, ...]]
    rides_on: str | None = None
    past_commit: bool = False

    def __post_init__(self) -> None:
        ok = self.kind and len(self.kind) <= 24
        if not ok or not all(c.isdigit() or c == "_" or "a" <= c <= "z" for c in self.kind):
            raise ValueError(f"a side bet's kind is [a-z0-9_]{{1,24}}: {self.kind!r}")
        if self.kind in _RESERVED:
            # The main bet's ledger labels (bet, bet_back, win, ...): a side bet's are
            # its kind and kind_back, kind_win, kind_lost (server/table/settlement.py).
            raise ValueError(f"{self.kind!r} names the main bet or its ledger entries")

    @property
    def staked(self) -> bool:
        """Whether a player stakes chips on it (else it rides on another's stake)."""
        return self.rides_on is None


def registry(*bets: SideBet) -> Mapping[str, SideBet]:
    """The side bets by kind, in the order given: the order a seat's wagers are listed,
    settled and shown in. A riding bet comes after the kind it rides on."""
    out: dict[str, SideBet] = {}
    for b in bets:
        if b.kind in out:
            raise ValueError(f"two side bets of kind {b.kind!r}")
        if b.rides_on is not None and b.rides_on not in out:
            raise ValueError(f"{b.kind!r} rides on {b.rides_on!r}, which is not listed before it")
        out[b.kind] = b
    return MappingProxyType(out)


def _tuple(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_tuple(x) for x in value)
    return value


def options_from_plain(bet: SideBet, data: Mapping[str, Any]) -> Any:
    """``bet``'s options from plain data (a map of field names; lists read as tuples).
    Raises ValueError for a key that is no option of it, or a value it refuses."""
    names = {f.name for f in fields(bet.options)}
    unknown = set(data) - names
    if unknown:
        raise ValueError(f"{bet.kind}: no such option: {', '.join(sorted(unknown))}")
    try:
        return bet.options(**{k: _tuple(v) for k, v in data.items()})
    except TypeError as exc:
        raise ValueError(f"{bet.kind}: {exc}") from exc


def options_to_plain(options: Any) -> dict[str, Any]:
    """A side bet's options as plain data (tuples as lists), every field written."""

    def plain(v: Any) -> Any:
        return [plain(x) for x in v] if isinstance(v, tuple) else v

    return {f.name: plain(getattr(options, f.name)) for f in fields(options)}


def side_deal_others(
    hands: Sequence[tuple[int, ...]], seat: int, in_round: Sequence[int]
) -> tuple[tuple[int, ...], ...]:
    """The seven cards of every seat of ``in_round`` but ``seat`` (for :class:`SideDeal`)."""
    return tuple(hands[i] for i in in_round if i != seat)
