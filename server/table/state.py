"""The state of one table: a frozen value, serializable to msgpack and back losslessly,
in parts (:func:`to_parts`, :func:`from_parts`) so that a commit stores only what changed.

Everything the table knows lives here, including the round's secret seed and every
dealt hand: the store keeps all of it, and only :mod:`server.table.views` decides
what each recipient may see. ``version`` grows by one with every change, ``seq``
counts the table events sent so far (each event has the next number).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from functools import lru_cache
from math import gcd
from typing import Any, TypeVar

import msgpack

from server.rules.options import HouseWay, RuleOptions
from server.rules.splits import FoulPolicy
from server.rules.values import WheelRank


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
            raise ValueError("a table has 1 to 6 seats")  # RULES.md: up to 6 players
        if not self.denominations or any(d <= 0 for d in self.denominations):
            raise ValueError("chip denominations are positive")

    @property
    def bet_unit(self) -> int:
        """Every bet is a multiple of this: what the table's chips can make exactly."""
        return gcd(*self.denominations)


@dataclass(frozen=True, slots=True)
class Seat:
    """A seated player and their part in the round in play."""

    player: str
    name: str
    balance: int  # table balance, not counting bets held
    connected: bool = True
    disconnected_at: int | None = None  # ms; the grace period runs from here
    bet: int = 0  # main bet held for this round
    bonus: int = 0  # bonus bet held for this round
    last_bet: int = 0  # for rebet
    last_bonus: int = 0
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


@dataclass(frozen=True, slots=True)
class SeatResult:
    """One seat's settled result, kept in the state for snapshots during settling."""

    seat: int
    player: str
    outcome: str
    high: str  # "win" | "lose" | "copy"
    low: str
    bet: int
    bonus: int
    bonus_class: str | None
    payout: int  # main bet: chips back to the table balance (stake + win - commission)
    commission: int
    bonus_payout: int  # bonus bet: chips back (stake + win), 0 when it lost
    net: int  # change of the player's chips over the round
    balance: int  # table balance after settlement


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

    def money(self) -> tuple[int, int, int]:
        """(table balances, bets held, house result): what the audit adds up."""
        balances = sum(s.balance for _, s in self.occupied())
        held = sum(s.bet + s.bonus for _, s in self.occupied())
        return balances, held, self.house


def new_table(config: TableConfig) -> TableState:
    """An empty table."""
    return TableState(config=config, seats=(None,) * config.seats)


# --- serialization -----------------------------------------------------------------
#
# The store keeps a state in parts, so that a commit writes only what changed: a bet
# changes one seat of six, and the whole state is about four times that. The parts:
#
# - ``c``: the config (changes only with the tables file);
# - ``h``: the header, every field but the config and the seats (a seat count in its
#   place), ``[format, fields]``: it holds the version, so every commit writes it;
# - ``p0`` .. ``pN-1``: one per seat, ``nil`` for an empty one.
#
# The format number is in the header only: a reader that finds another number reads
# nothing, and a writer of a new format writes every part in its first commit over a
# table stored in an older one (as this one does over a table stored whole, format
# 1, read by :func:`from_bytes`), so a table never mixes formats.

_BLOB_FORMAT = 1  # the whole state in one value: what the store held before parts
_PARTS_FORMAT = 2

CONFIG_PART = "c"
HEADER_PART = "h"


def seat_part(index: int) -> str:
    """The name of seat ``index``'s part."""
    return f"p{index}"


_SCALARS = (int, str, bytes, bool, type(None))


def _plain(obj: Any) -> Any:
    """Plain msgpack data of any record of this module, walked by its slots (for the
    settings, built once each; the hot path writes its records field by field below)."""
    if type(obj) in _SCALARS:
        return obj
    if isinstance(obj, TableConfig):
        return _plain_config(obj)
    if isinstance(obj, TableState | Seat | SeatResult | RuleOptions):
        return {name: _plain(getattr(obj, name)) for name in type(obj).__slots__}
    if isinstance(obj, StrEnum):
        return obj.value
    if isinstance(obj, tuple | list):
        return [_plain(x) for x in obj]
    return obj


@lru_cache(maxsize=1024)
def _plain_config(config: TableConfig) -> dict[str, Any]:
    """A table's settings as plain data, built once per settings (they rarely change)."""
    return {f.name: _plain(getattr(config, f.name)) for f in fields(config)}


# Every commit serializes the header and the seats that changed, so their records are
# written field by field, in slot order: the same data as _plain, in a third of the
# time. A test checks that these keys are the classes' slots and that both give the
# same bytes.


def _plain_seat(s: Seat | None) -> dict[str, Any] | None:
    if s is None:
        return None
    low, set_by = s.low, s.set_by
    return {
        "player": s.player,
        "name": s.name,
        "balance": s.balance,
        "connected": s.connected,
        "disconnected_at": s.disconnected_at,
        "bet": s.bet,
        "bonus": s.bonus,
        "last_bet": s.last_bet,
        "last_bonus": s.last_bonus,
        "sitting_out": s.sitting_out,
        "sit_out_rounds": s.sit_out_rounds,
        "leaving": s.leaving,
        "missed": s.missed,
        "low": None if low is None else list(low),
        "set_by": None if set_by is None else set_by.value,
        "fouled": s.fouled,
    }


def _plain_result(r: SeatResult) -> dict[str, Any]:
    return {
        "seat": r.seat,
        "player": r.player,
        "outcome": r.outcome,
        "high": r.high,
        "low": r.low,
        "bet": r.bet,
        "bonus": r.bonus,
        "bonus_class": r.bonus_class,
        "payout": r.payout,
        "commission": r.commission,
        "bonus_payout": r.bonus_payout,
        "net": r.net,
        "balance": r.balance,
    }


def _plain_header(t: TableState) -> dict[str, Any]:
    """The state's fields in slot order, without the config, and the seat count in
    place of the seats."""
    hands, dealer_low = t.hands, t.dealer_low
    return {
        "version": t.version,
        "seq": t.seq,
        "phase": t.phase.value,
        "deadline": t.deadline,
        "round_no": t.round_no,
        "seed": t.seed,
        "commitment": t.commitment,
        "hands": None if hands is None else [list(h) for h in hands],
        "dealer_low": None if dealer_low is None else list(dealer_low),
        "seats": len(t.seats),
        "results": [_plain_result(r) for r in t.results],
        "voided": t.voided,
        "house": t.house,
    }


def to_parts(state: TableState, before: TableState | None) -> dict[str, bytes]:
    """The parts of ``state`` (see above) that differ from those of ``before``, the
    state the stored parts hold; every part when ``before`` is None.

    Writing them over ``before``'s parts gives ``state``'s: :func:`from_parts` of the
    result equals ``state``. A record counts as changed unless it is the very object
    ``before`` holds (the state machine keeps unchanged records, see :func:`evolve`),
    so an equal record rebuilt is written again, needlessly but harmlessly. The
    header is always among the parts.
    """
    pack = msgpack.packb
    parts = {HEADER_PART: pack([_PARTS_FORMAT, _plain_header(state)])}
    if before is None or state.config is not before.config:
        parts[CONFIG_PART] = pack(_plain_config(state.config))
    old = before.seats if before is not None else ()
    for i, seat in enumerate(state.seats):
        if i >= len(old) or seat is not old[i]:
            parts[seat_part(i)] = pack(_plain_seat(seat))
    return parts


def _tuple(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuple(x) for x in value)
    return value


def _seat(data: dict[str, Any] | None) -> Seat | None:
    if data is None:
        return None
    data = dict(data)
    data["low"] = _tuple(data["low"])
    data["set_by"] = SetBy(data["set_by"]) if data["set_by"] is not None else None
    return Seat(**data)


def _config(data: dict[str, Any]) -> TableConfig:
    data = dict(data)
    rules = dict(data["rules"])
    rules["wheel"] = WheelRank(rules["wheel"])
    rules["foul"] = FoulPolicy(rules["foul"])
    rules["house_way"] = HouseWay(rules["house_way"])
    data["rules"] = RuleOptions(**rules)
    data["denominations"] = tuple(data["denominations"])
    return TableConfig(**data)


def _state(data: dict[str, Any]) -> TableState:
    """The state from its plain data, config and seats included."""
    data = dict(data)
    data["config"] = _config(data["config"])
    data["phase"] = Phase(data["phase"])
    data["hands"] = _tuple(data["hands"])
    data["dealer_low"] = _tuple(data["dealer_low"])
    data["seats"] = tuple(_seat(s) for s in data["seats"])
    data["results"] = tuple(SeatResult(**r) for r in data["results"])
    return TableState(**data)


def _unpack_part(parts: Mapping[str, bytes], name: str) -> Any:
    raw = parts.get(name)
    if raw is None:
        raise ValueError(f"part {name!r} is missing")
    return msgpack.unpackb(raw, raw=False, use_list=True)


def from_parts(parts: Mapping[str, bytes]) -> TableState:
    """The state whose parts :func:`to_parts` gave (all of them, from one or several
    calls). Parts of seats beyond the header's seat count are ignored. Raises
    ValueError if a part is missing, garbled or of another format.
    """
    try:
        fmt, data = _unpack_part(parts, HEADER_PART)
        if fmt != _PARTS_FORMAT:
            raise ValueError(f"unknown table state format {fmt}")
        data = dict(data)
        count = data["seats"]
        if type(count) is not int or count < 0:
            raise ValueError(f"bad seat count {count!r}")
        data["config"] = _unpack_part(parts, CONFIG_PART)
        data["seats"] = [_unpack_part(parts, seat_part(i)) for i in range(count)]
        return _state(data)
    except (TypeError, KeyError, ValueError, msgpack.UnpackException) as exc:
        raise ValueError(f"not a stored table state: {exc}") from exc


def from_bytes(raw: bytes) -> TableState:
    """The state of a table stored whole, in one value (format 1), as the store held
    them before parts: read to take such a table over, whose next commit then writes
    every part. Raises ValueError on anything else.
    """
    try:
        fmt, data = msgpack.unpackb(raw, raw=False, use_list=True)
        if fmt != _BLOB_FORMAT:
            raise ValueError(f"unknown table state format {fmt}")
        return _state(data)
    except (TypeError, KeyError, ValueError, msgpack.UnpackException) as exc:
        raise ValueError(f"not a stored table state: {exc}") from exc


_T = TypeVar("_T", "TableState", "Seat")


def evolve(obj: _T, **changes: Any) -> _T:
    """A copy of ``obj`` with ``changes``: :func:`dataclasses.replace` without its
    per-call introspection, for the state machine's hot path (these classes have no
    ``__post_init__`` to run)."""
    cls = type(obj)
    new = object.__new__(cls)
    setter = object.__setattr__
    for name in cls.__slots__:
        setter(new, name, changes[name] if name in changes else getattr(obj, name))
    return new
