"""The state of one table: frozen records, and the pure helpers that build them.

Everything the table knows lives here, including the round's secret seed and every
dealt hand: the store keeps all of it (in the format of :mod:`server.store.tables.parts`),
and only :mod:`server.table.views` decides what each recipient may see. ``version``
grows by one with every change, ``seq`` counts the table events sent so far (each
event has the next number).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from functools import lru_cache
from math import gcd, lcm
from typing import Any, TypeVar

from server.rules.bonus import BONUS
from server.rules.options import CommissionRounding, RuleOptions, whole_commission_step
from server.rules.side_bets import SIDE_BETS


class Phase(StrEnum):
    """The phases of a table. Every phase but ``idle`` has a deadline."""

    IDLE = "idle"  # no round in play: nobody has bet yet (or nobody is seated)
    BETTING = "betting"
    DEALING = "dealing"
    SETTING = "setting"
    REVEALING = "revealing"
    SETTLING = "settling"


# Phases in which a round's cards are out: a seat with a bet is "in the round".
PHASES_WITH_CARDS = frozenset({Phase.DEALING, Phase.SETTING, Phase.REVEALING, Phase.SETTLING})


class SetBy(StrEnum):
    """Who set a player's hand."""

    PLAYER = "player"  # the player named the two low cards
    HOUSE_WAY_ASKED = "house_way_asked"  # the player asked the house to set it
    HOUSE_WAY_TIMEOUT = "house_way_timeout"  # the setting time ran out


@dataclass(frozen=True, slots=True)
class TableConfig:
    """A table's fixed settings: limits, chips, timers and rule options."""

    table_id: str
    name: str
    min_bet: int = 10
    max_bet: int = 1000
    denominations: tuple[int, ...] = (5, 10, 25, 100, 500)
    bonus_min: int = 5
    bonus_max: int = 100
    min_buy_in: int = 100
    max_buy_in: int = 10_000
    seats: int = 6
    betting_ms: int = 15_000
    dealing_ms: int = 1_500
    setting_ms: int = 30_000
    revealing_ms: int = 4_000
    settling_ms: int = 4_000
    grace_ms: int = 60_000
    max_sit_out_rounds: int = 5
    rules: RuleOptions = field(default_factory=RuleOptions)
    # Side bets offered beyond the bonus bet (docs/DESIGN.md, "Wagers"): (kind, its
    # options) pairs, the options of server/rules/side_bets.py's kind. Added after
    # release 0.1.0: stored only when not empty (server/store/tables/parts.py).
    side_bets: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        positive = (
            self.min_bet,
            self.max_bet,
            self.bonus_min,
            self.bonus_max,
            self.min_buy_in,
            self.max_buy_in,
            self.betting_ms,
            self.dealing_ms,
            self.setting_ms,
            self.revealing_ms,
            self.settling_ms,
        )
        if any(not isinstance(v, int) or isinstance(v, bool) or v <= 0 for v in positive):
            raise ValueError("limits and phase lengths are positive integers")
        if not (self.min_bet <= self.max_bet and self.bonus_min <= self.bonus_max):
            raise ValueError("a minimum is at most its maximum")
        if not self.min_buy_in <= self.max_buy_in:
            raise ValueError("min_buy_in is at most max_buy_in")
        if not 1 <= self.seats <= 6:
            raise ValueError("a table has 1 to 6 seats")  # docs/RULES.md, "Cards and deal"
        if not self.denominations or any(d <= 0 for d in self.denominations):
            raise ValueError("chip denominations are positive")
        self._check_side_bets()
        step = self.main_bet_unit
        whole = self.rules.commission_rounding is CommissionRounding.WHOLE
        if whole and (self.min_bet % step or self.max_bet % step):
            # The limits a client shows are bets the table takes (docs/RULES.md,
            # "Commission").
            raise ValueError(
                f"with commission_rounding = 'whole' at {self.rules.commission_pct}%, "
                f"min_bet and max_bet are multiples of {step}: the smallest bet made of "
                "the table's chips whose commission is whole chips"
            )

    def _check_side_bets(self) -> None:
        kinds = [kind for kind, _ in self.side_bets]
        if len(set(kinds)) != len(kinds):
            raise ValueError("a side bet is offered once")
        for kind, options in self.side_bets:
            bet = SIDE_BETS.get(kind)
            if bet is None or kind == BONUS:
                # The bonus bet is always offered, within bonus_min and bonus_max.
                known = ", ".join(k for k in SIDE_BETS if k != BONUS)
                raise ValueError(f"{kind!r} is not a side bet a table adds (known: {known})")
            if not isinstance(options, bet.options):
                raise ValueError(f"{kind}: its options are a {bet.options.__name__}")
            if bet.staked:
                low, high = bet.limits(options)
                if not 0 < low <= high:
                    raise ValueError(f"{kind}: its limits are 0 < min <= max")

    @property
    def side_kinds(self) -> tuple[str, ...]:
        """The side bets this table offers, in the registry's order: the bonus bet,
        and those of :attr:`side_bets`."""
        return _side_kinds(self.side_bets)

    def side_options(self, kind: str) -> Any:
        """The options this table sets for side bet ``kind`` (which it offers)."""
        for k, options in self.side_bets:
            if k == kind:
                return options
        if kind == BONUS:
            return SIDE_BETS[BONUS].options()
        raise KeyError(kind)

    def limits(self, kind: str) -> tuple[int, int]:
        """(min, max) of a stake on the staked side bet ``kind``; for a riding one
        (min qualifying stake on what it rides on, 0)."""
        if kind == BONUS:
            return self.bonus_min, self.bonus_max  # fields release 0.1.0 reads
        return SIDE_BETS[kind].limits(self.side_options(kind))

    @property
    def bet_unit(self) -> int:
        """Every bet is a multiple of this: what the table's chips can make exactly."""
        return gcd(*self.denominations)

    @property
    def main_bet_unit(self) -> int:
        """Every main bet is a multiple of this: :attr:`bet_unit`, or under the
        ``whole`` commission rounding the smallest multiple of it whose commission is
        whole chips (20 at 5 % with chips of 5)."""
        if self.rules.commission_rounding is CommissionRounding.WHOLE:
            return lcm(self.bet_unit, whole_commission_step(self.rules.commission_pct))
        return self.bet_unit


@dataclass(frozen=True, slots=True)
class Seat:
    """A seated player and their part in the round in play."""

    player: str
    name: str
    balance: int  # table balance, not counting bets held
    connected: bool = True
    disconnected_at: int | None = None  # ms; the grace period runs from here
    bet: int = 0  # main bet held for this round
    # The side bets held for this round, (kind, stake > 0) in the registry's order
    # (server/rules/side_bets.py); the bonus bet is one of them.
    side: tuple[tuple[str, int], ...] = ()
    last_bet: int = 0  # for rebet
    last_side: tuple[tuple[str, int], ...] = ()
    sitting_out: bool = False  # said they sit this round out
    sit_out_rounds: int = 0  # consecutive rounds sat out
    leaving: bool = False  # asked to stand up; leaves when the round ends
    missed: bool = False  # neither bet nor sat out when betting closed: leaves at round end
    low: tuple[int, ...] | None = None  # the two low-hand cards once set
    set_by: SetBy | None = None
    fouled: bool = False  # set a foul under FoulPolicy.LOSE

    @property
    def has_bet(self) -> bool:
        """Whether the seat has a main bet in this round."""
        return self.bet > 0

    def stake(self, kind: str) -> int:
        """The chips held on side bet ``kind`` this round (0: none)."""
        for k, amount in self.side:
            if k == kind:
                return amount
        return 0

    @property
    def bonus(self) -> int:
        """The bonus bet held for this round."""
        return self.stake(BONUS)

    @property
    def last_bonus(self) -> int:
        """The bonus bet of the last round played (for rebet)."""
        return dict(self.last_side).get(BONUS, 0)

    @property
    def held(self) -> int:
        """Every chip this seat has on the table for this round: main and side bets."""
        held = self.bet
        for _, amount in self.side:
            held += amount
        return held


@lru_cache(maxsize=256)
def _side_kinds(side_bets: tuple[tuple[str, Any], ...]) -> tuple[str, ...]:
    # Asked at every bet: worked out once per set of side bets offered.
    offered = {kind for kind, _ in side_bets}
    return tuple(k for k in SIDE_BETS if k == BONUS or k in offered)


def side_stakes(stakes: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    """A seat's :attr:`Seat.side` from stakes by kind: the stakes above 0, in the
    registry's order."""
    if len(stakes) == 1 and BONUS in stakes:  # the common bet: the bonus alone, or none
        bonus = stakes[BONUS]
        return ((BONUS, bonus),) if bonus > 0 else ()
    return tuple((k, stakes[k]) for k in SIDE_BETS if stakes.get(k, 0) > 0)


@dataclass(frozen=True, slots=True)
class WagerResult:
    """One side bet of a seat settled: its ``stake`` (0 for a riding bet), the pay line
    it paid (``pay_class``, None when it paid nothing) and the chips back (``payout``:
    a staked bet's stake and win, 0 when lost; a riding bet's win)."""

    kind: str
    stake: int
    payout: int
    pay_class: str | None = None


@dataclass(frozen=True, slots=True)
class SeatResult:
    """One seat's settled result, kept in the state for snapshots during settling."""

    seat: int
    player: str
    outcome: str
    high: str  # "win" | "lose" | "copy"
    low: str
    bet: int
    payout: int  # main bet: chips back to the table balance (stake + win - commission)
    commission: int
    net: int  # change of the player's chips over the round
    balance: int  # table balance after settlement
    wagers: tuple[WagerResult, ...] = ()  # the side bets settled, in the registry's order

    def wager(self, kind: str) -> WagerResult | None:
        """The result of side bet ``kind``, or None when the seat had none."""
        for w in self.wagers:
            if w.kind == kind:
                return w
        return None

    @property
    def bonus(self) -> int:
        """The bonus bet's stake (0: none)."""
        w = self.wager(BONUS)
        return 0 if w is None else w.stake

    @property
    def bonus_class(self) -> str | None:
        """The bonus pay line paid, None when it paid nothing."""
        w = self.wager(BONUS)
        return None if w is None else w.pay_class

    @property
    def bonus_payout(self) -> int:
        """The bonus bet's chips back (stake + win), 0 when it lost."""
        w = self.wager(BONUS)
        return 0 if w is None else w.payout


@dataclass(frozen=True, slots=True)
class TableState:
    """The whole state of a table; see the module docstring."""

    config: TableConfig
    version: int = 0
    seq: int = 0
    phase: Phase = Phase.IDLE
    deadline: int | None = None  # absolute ms of the current phase's end
    round_no: int = 0
    seed: bytes | None = None  # the round's secret seed (never sent before settling)
    commitment: str | None = None
    hands: tuple[tuple[int, ...], ...] | None = None  # the deal: seats 0..5, dealer
    dealer_low: tuple[int, ...] | None = None  # the dealer's low cards after the reveal
    seats: tuple[Seat | None, ...] = ()
    results: tuple[SeatResult, ...] = ()
    voided: str | None = None  # the reason, when the round was voided
    house: int = 0  # the house's result at this table, for the audit
    pending_config: TableConfig | None = None  # applies when the round in play ends
    closing: bool = False  # closed by an operator: no new seat or bet, seats stand up
    # The options the round's results were settled under, of each side bet whose
    # settlement goes on past the table's commit (``SideBet.past_commit``: the
    # progressive's calls to its meter, server/host/jackpots.py) and that a result
    # holds a wager of: set with the results, gone with them. A change of settings
    # pending during the round becomes :attr:`config` in the very step that settles it
    # (server/table/config_change.py), so those calls read these, never the config.
    settled_options: tuple[tuple[str, Any], ...] = ()

    def seat_of(self, player: str) -> int | None:
        """The seat index of ``player``, or None."""
        for i, seat in enumerate(self.seats):
            if seat is not None and seat.player == player:
                return i
        return None

    def occupied(self) -> list[tuple[int, Seat]]:
        """The occupied seats, by index."""
        return [(i, s) for i, s in enumerate(self.seats) if s is not None]

    def in_round(self) -> list[tuple[int, Seat]]:
        """The seats with a main bet in the round in play."""
        return [(i, s) for i, s in enumerate(self.seats) if s is not None and s.bet > 0]

    def between_rounds(self) -> bool:
        """Whether no round is in play: idle, settled, or betting with no bet in yet
        (a changed config applies only then, see :class:`~server.table.events.ChangeConfig`)."""
        phase = self.phase
        return (
            phase is Phase.IDLE
            or phase is Phase.SETTLING
            or (phase is Phase.BETTING and not self.in_round())
        )

    def money(self) -> tuple[int, int, int]:
        """(table balances, bets held, house result): what the audit adds up."""
        balances = sum(s.balance for _, s in self.occupied())
        held = sum(s.held for _, s in self.occupied())
        return balances, held, self.house


def new_table(config: TableConfig) -> TableState:
    """An empty table."""
    return TableState(config=config, seats=(None,) * config.seats)


_T = TypeVar("_T", "TableState", "Seat")


def evolve(obj: _T, **changes: Any) -> _T:
    """A copy of ``obj`` with ``changes``: :func:`dataclasses.replace` without its
    per-call introspection, for the state machine's hot path (these classes have no
    ``__post_init__`` to run)."""
    return copy_with(obj, changes)


_A = TypeVar("_A")


def copy_with(obj: _A, changes: dict[str, Any]) -> _A:
    """:func:`evolve` for any frozen dataclass with slots and no ``__post_init__`` (a
    table event numbered, say): a copy of ``obj`` with ``changes``."""
    copier = _COPIERS.get(type(obj))
    if copier is None:
        copier = _COPIERS[type(obj)] = _copier(type(obj))
        _FIELDS[type(obj)] = frozenset(type(obj).__dict__["__slots__"])
    # As dataclasses.replace does, a name that is no field is refused (not dropped).
    assert changes.keys() <= _FIELDS[type(obj)], f"no such field: {set(changes)}"
    new: _A = copier(obj, changes)
    return new


_COPIERS: dict[type, Callable[[Any, dict[str, Any]], Any]] = {}
_FIELDS: dict[type, frozenset[str]] = {}


def _copier(cls: type) -> Callable[[Any, dict[str, Any]], Any]:
    """The copy with changes of an instance of ``cls``, written out once a line a field
    (as :mod:`dataclasses` writes an ``__init__``), each set through its slot: half the
    time of a loop over the fields with ``getattr``, four times in a bet's step."""
    lines = ["def copy(obj, changes):", "    new = new_object(cls)"]
    scope: dict[str, Any] = {"cls": cls, "new_object": object.__new__}
    slots: tuple[str, ...] = cls.__dict__["__slots__"]
    if set(slots) != {f.name for f in fields(cls)}:
        raise TypeError(f"{cls.__name__}: its fields are not all its own slots")
    for name in slots:
        scope[f"set_{name}"] = getattr(cls, name).__set__
        lines.append(
            f"    set_{name}(new, changes[{name!r}] if {name!r} in changes else obj.{name})"
        )
    lines.append("    return new")
    exec("\n".join(lines), scope)  # generated from the class's own slot names
    copy: Callable[[Any, dict[str, Any]], Any] = scope["copy"]
    return copy
