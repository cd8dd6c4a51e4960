"""The storage format of a table's state: msgpack parts, and the state from them.

The store owns the format; the state machine knows nothing of it (its records are
plain frozen values, :mod:`server.table.state`). :func:`to_parts` gives the parts of
a state that differ from those stored, :func:`from_parts` the state from every
stored part, :func:`from_bytes` the state of a table stored whole, before parts, and
:func:`stored_state` the state of a table as stored
(:class:`~server.store.tables.store.StoredTable`), whichever way it was stored.

The store keeps a state in parts, so that a commit writes only what changed: a bet
changes one seat of six, and the whole state is about four times that. The parts:

- ``c``: the config (changes only with the tables file), a map keyed by field name;
- ``h``: the header, every field but the config, the seats (a seat count in their
  place) and the round's deal, ``[format, fields]``: it holds the version, so every
  commit writes it;
- ``d`` (format 3): the round's deal and results, the seed, commitment, hands, the
  dealer's low hand and the seats' results, which change a few times a round (format 2
  kept them in the header);
- ``p0`` .. ``pN-1``: one per seat, ``nil`` for an empty one;
- ``n``: the config pending until the round in play ends, ``nil`` for none; written
  only once there was one, so a table without (every table stored before it) has
  none, and the other parts' bytes are those of a state without the field.
- ``k``: ``true`` once an operator closes the table (:mod:`server.table.closing`);
  written only then (a table never closed has no such part, and reads ``false``), so
  the bytes of every table never closed are those of a state without the field.

Format 3, written here, keeps the fields of the header, the deal, each seat and each
result as arrays in the order of :data:`HEADER_FIELDS`, :data:`DEAL_FIELDS`,
:data:`SEAT_FIELDS` and :data:`RESULT_FIELDS`: a seat in 40-odd bytes, where a map keyed
by name took 167, and a header of 20-odd bytes, where the header of format 2, with the
deal, took 200 to 400 (the header is in every commit, the deal in a few a round).
A field added to a record goes at the end of its list, with a default: an array one
field short (written before it) reads with the default. Format 2 kept the same
records as maps keyed by field name; the configs are maps in both.

The format number is in the header only: a reader that finds another number reads
nothing, and a writer of a new format writes every part in its first commit over a
table stored in an older one (:func:`is_current`; as over a table stored whole,
format 1, read by :func:`from_bytes`), so a table never mixes formats. Format 2 is
read (:func:`from_parts`), never written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, Field, fields
from enum import StrEnum
from functools import lru_cache
from typing import Any, Protocol

import msgpack

from server.rules.bonus import BONUS
from server.rules.options import CommissionFree, CommissionRounding, HouseWay, RuleOptions
from server.rules.side_bets import SIDE_BETS, side_bet
from server.rules.splits import FoulPolicy
from server.rules.values import WheelRank
from server.rules.wagers import options_from_plain, options_to_plain
from server.table.state import (
    Phase,
    Seat,
    SeatResult,
    SetBy,
    TableConfig,
    TableState,
    WagerResult,
    side_stakes,
)


class Stored(Protocol):
    """A table as stored, read (:class:`~server.store.tables.store.StoredTable`, which
    the store builds on this module): every part, and the whole state of a table
    stored before parts."""

    @property
    def parts(self) -> Mapping[str, bytes]: ...

    @property
    def whole(self) -> bytes | None: ...


_BLOB_FORMAT = 1  # the whole state in one value: what the store held before parts
_MAP_PARTS_FORMAT = 2  # parts, each record a map keyed by field name: read, not written
_PARTS_FORMAT = 3  # parts, each record an array of its fields (module docstring)

SEAT_FIELDS = (
    "player",
    "name",
    "balance",
    "connected",
    "disconnected_at",
    "bet",
    "bonus",
    "last_bet",
    "last_bonus",
    "sitting_out",
    "sit_out_rounds",
    "leaving",
    "missed",
    "low",
    "set_by",
    "fouled",
    "side",
    "last_side",
)
"""The fields of a seat's array, in order (format 3). ``bonus`` and ``last_bonus`` hold
the bonus bet's stakes (as release 0.1.0 wrote them), ``side`` and ``last_side`` the
other side bets' (``[[kind, stake], ...]``), written only when there is one: a seat with
none is the array 0.1.0 reads (docs/DESIGN.md, "Wagers")."""

RESULT_FIELDS = (
    "seat",
    "player",
    "outcome",
    "high",
    "low",
    "bet",
    "bonus",
    "bonus_class",
    "payout",
    "commission",
    "bonus_payout",
    "net",
    "balance",
    "wagers",
)
"""The fields of a seat's result's array, in order (format 3). ``bonus``,
``bonus_class`` and ``bonus_payout`` hold the bonus bet's result (as release 0.1.0
wrote it), ``wagers`` the other side bets' (``[[kind, stake, pay_class, payout], ...]``),
written only when there is one (as :data:`SEAT_FIELDS`)."""

HEADER_FIELDS = ("version", "seq", "phase", "deadline", "round_no", "seats", "voided", "house")
"""The fields of the header's array, in order (format 3): the seat count in place of the
seats (``closing`` has a part of its own, :data:`CLOSING_PART`)."""

DEAL_FIELDS = ("seed", "commitment", "hands", "dealer_low", "results", "settled_options")
"""The fields of the deal's array, in order (format 3). The header's and these are the
state's fields but the configs. ``settled_options`` (``[[kind, {option: value}], ...]``,
the options a round's progressive wagers were settled under) is written only when the
round has some: every other deal is the array written before it (and by 0.1.0)."""

CONFIG_PART = "c"
HEADER_PART = "h"
DEAL_PART = "d"
PENDING_CONFIG_PART = "n"
CLOSING_PART = "k"


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
    if isinstance(obj, Seat):
        return dict(zip(SEAT_FIELDS, _seat_fields(obj) or (), strict=False))
    if isinstance(obj, SeatResult):
        return dict(zip(RESULT_FIELDS, _result_fields(obj), strict=False))
    if isinstance(obj, TableState | RuleOptions):
        return {name: _plain(getattr(obj, name)) for name in type(obj).__slots__}
    if isinstance(obj, StrEnum):
        return obj.value
    if isinstance(obj, tuple | list):
        return [_plain(x) for x in obj]
    return obj


PREVIOUS_CONFIG_FIELDS = frozenset(
    {
        "table_id",
        "name",
        "min_bet",
        "max_bet",
        "denominations",
        "bonus_min",
        "bonus_max",
        "min_buy_in",
        "max_buy_in",
        "seats",
        "betting_ms",
        "dealing_ms",
        "setting_ms",
        "revealing_ms",
        "settling_ms",
        "grace_ms",
        "max_sit_out_rounds",
        "rules",
    }
)
"""The fields of a table's settings that release 0.1.0 reads. It reads a settings map
with every key of a field it has (a missing one takes its default) and fails on any
other key, so a field added since is written only at a value other than its default
(:func:`config_fields_beyond`), and a writer writes such a value only once every live
node reads it (the stored format ``table-config-fields``, server/store/nodes/formats.py).
Never safe to ignore an unknown field on reading: a setting can move chips."""

PREVIOUS_RULE_FIELDS = frozenset(
    {"wheel", "foul", "commission_pct", "house_way", "bonus_pay_table"}
)
"""The rule options of a table's settings that release 0.1.0 reads (as above)."""


def _at_default(record: Any, f: Field[Any]) -> bool:
    value = getattr(record, f.name)
    if f.default is not MISSING:
        return bool(value == f.default)
    if f.default_factory is not MISSING:
        return bool(value == f.default_factory())
    return False  # a field without a default is always written


def _newer_written(record: Any, previous: frozenset[str]) -> list[Field[Any]]:
    """The fields of ``record`` written (see :data:`PREVIOUS_CONFIG_FIELDS`)."""
    return [f for f in fields(record) if f.name in previous or not _at_default(record, f)]


@lru_cache(maxsize=1024)
def _plain_config(config: TableConfig) -> dict[str, Any]:
    """A table's settings as plain data, built once per settings (they rarely change):
    every field 0.1.0 reads, and a field added since only when not at its default."""
    plain = {
        f.name: _plain(getattr(config, f.name))
        for f in _newer_written(config, PREVIOUS_CONFIG_FIELDS)
        if f.name not in ("rules", "side_bets")
    }
    if config.side_bets:  # a field added since 0.1.0: only when not at its default
        plain["side_bets"] = [[k, options_to_plain(o)] for k, o in config.side_bets]
    rules = config.rules
    plain["rules"] = {
        f.name: _plain(getattr(rules, f.name)) for f in _newer_written(rules, PREVIOUS_RULE_FIELDS)
    }
    return plain


def config_fields_beyond(config: TableConfig) -> list[str]:
    """The fields of ``config`` stored that release 0.1.0 does not read (added since,
    at a value other than their default; ``rules.`` before a rule option's): a writer
    stores such settings only once every live node reads them."""
    plain = _plain_config(config)
    return sorted(
        [k for k in plain if k not in PREVIOUS_CONFIG_FIELDS]
        + [f"rules.{k}" for k in plain["rules"] if k not in PREVIOUS_RULE_FIELDS]
    )


# Every commit serializes the header and the seats that changed, so their records are
# written field by field, in the order of the lists above (a test checks that these are
# the classes' slots, and that the writers give what a walk of the slots gives).


def _seat_fields(s: Seat | None) -> list[Any] | None:
    if s is None:
        return None
    low, set_by = s.low, s.set_by
    out = [
        s.player,
        s.name,
        s.balance,
        s.connected,
        s.disconnected_at,
        s.bet,
        s.bonus,
        s.last_bet,
        s.last_bonus,
        s.sitting_out,
        s.sit_out_rounds,
        s.leaving,
        s.missed,
        None if low is None else list(low),
        None if set_by is None else set_by.value,
        s.fouled,
    ]
    side, last_side = s.side, s.last_side
    if (side or last_side) and _beyond_bonus(side, last_side):
        out += [_pairs_beyond_bonus(side), _pairs_beyond_bonus(last_side)]
    return out


def _beyond_bonus(*sides: tuple[tuple[str, int], ...]) -> bool:
    return any(kind != BONUS for side in sides for kind, _ in side)


def _pairs_beyond_bonus(side: tuple[tuple[str, int], ...]) -> list[list[Any]]:
    return [[kind, stake] for kind, stake in side if kind != BONUS]


def _result_fields(r: SeatResult) -> list[Any]:
    out = [
        r.seat,
        r.player,
        r.outcome,
        r.high,
        r.low,
        r.bet,
        r.bonus,
        r.bonus_class,
        r.payout,
        r.commission,
        r.bonus_payout,
        r.net,
        r.balance,
    ]
    others = [[w.kind, w.stake, w.pay_class, w.payout] for w in r.wagers if w.kind != BONUS]
    if others:
        out.append(others)
    return out


def _header_fields(t: TableState) -> list[Any]:
    """The header's array (:data:`HEADER_FIELDS`)."""
    return [
        t.version,
        t.seq,
        t.phase.value,
        t.deadline,
        t.round_no,
        len(t.seats),
        t.voided,
        t.house,
    ]


def _deal_fields(t: TableState) -> list[Any]:
    """The deal's array (:data:`DEAL_FIELDS`)."""
    hands, dealer_low = t.hands, t.dealer_low
    out = [
        t.seed,
        t.commitment,
        None if hands is None else [list(h) for h in hands],
        None if dealer_low is None else list(dealer_low),
        [_result_fields(r) for r in t.results],
    ]
    if t.settled_options:
        out.append([[k, options_to_plain(o)] for k, o in t.settled_options])
    return out


def _same_deal(a: TableState, b: TableState) -> bool:
    """Whether ``a`` holds the very records of ``b``'s deal (see :func:`to_parts`)."""
    return (
        a.seed is b.seed
        and a.commitment is b.commitment
        and a.hands is b.hands
        and a.dealer_low is b.dealer_low
        and a.results is b.results
        and a.settled_options is b.settled_options
    )


def to_parts(state: TableState, before: TableState | None) -> dict[str, bytes]:
    """The parts of ``state`` (see above) that differ from those of ``before``, the
    state the stored parts hold; every part when ``before`` is None.

    Writing them over ``before``'s parts gives ``state``'s: :func:`from_parts` of the
    result equals ``state``. A record counts as changed unless it is the very object
    ``before`` holds (the state machine keeps unchanged records, see
    :func:`~server.table.state.evolve`),
    so an equal record rebuilt is written again, needlessly but harmlessly. The
    header is always among the parts.
    """
    pack = msgpack.packb
    parts = {HEADER_PART: pack([_PARTS_FORMAT, _header_fields(state)])}
    if before is None or not _same_deal(state, before):
        parts[DEAL_PART] = pack(_deal_fields(state))
    if before is None or state.config is not before.config:
        parts[CONFIG_PART] = pack(_plain_config(state.config))
    pending = state.pending_config
    # Written even as None when every part is: an earlier commit may have stored one
    # that Redis still holds (the writer cannot know what is there).
    if before is None or pending is not before.pending_config:
        parts[PENDING_CONFIG_PART] = pack(None if pending is None else _plain_config(pending))
    # Never written back to false: a table once closing stays so.
    if state.closing and (before is None or not before.closing):
        parts[CLOSING_PART] = pack(True)
    old = before.seats if before is not None else ()
    for i, seat in enumerate(state.seats):
        if i >= len(old) or seat is not old[i]:
            parts[seat_part(i)] = pack(_seat_fields(seat))
    return parts


def _tuple(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuple(x) for x in value)
    return value


def _named(names: tuple[str, ...], values: Any) -> dict[str, Any]:
    """A record's array (format 3) as its fields by name; a short array leaves its last
    fields to their defaults (they were added since it was written)."""
    if type(values) is not list or len(values) > len(names):
        raise ValueError(f"not a record of {len(names)} fields: {values!r}")
    return dict(zip(names, values, strict=False))


def _side(bonus: Any, others: Any) -> tuple[tuple[str, int], ...]:
    """A seat's stakes from the stored bonus stake and the other side bets' pairs."""
    stakes = {str(kind): stake for kind, stake in others}
    if bonus:
        stakes[BONUS] = bonus
    side = side_stakes(stakes)
    if len(side) != len(stakes):
        raise ValueError(f"unknown side bets in a stored seat: {sorted(stakes)}")
    return side


def _seat(data: dict[str, Any] | None) -> Seat | None:
    if data is None:
        return None
    data = dict(data)
    data["side"] = _side(data.pop("bonus", 0), data.get("side") or ())
    data["last_side"] = _side(data.pop("last_bonus", 0), data.get("last_side") or ())
    data["low"] = _tuple(data.get("low"))
    set_by = data.get("set_by")
    data["set_by"] = SetBy(set_by) if set_by is not None else None
    return Seat(**data)


def _result(data: dict[str, Any]) -> SeatResult:
    data = dict(data)
    bonus = data.pop("bonus", 0)
    bonus_class = data.pop("bonus_class", None)
    bonus_payout = data.pop("bonus_payout", 0)
    wagers = [] if not bonus else [WagerResult(BONUS, bonus, bonus_payout, bonus_class)]
    wagers += [WagerResult(str(k), st, pay, c) for k, st, c, pay in data.get("wagers") or ()]
    order = {kind: i for i, kind in enumerate(SIDE_BETS)}
    if any(w.kind not in order for w in wagers):
        raise ValueError("unknown side bets in a stored result")
    data["wagers"] = tuple(sorted(wagers, key=lambda w: order[w.kind]))
    return SeatResult(**data)


def _config(data: dict[str, Any]) -> TableConfig:
    data = dict(data)
    rules = dict(data["rules"])
    rules["wheel"] = WheelRank(rules["wheel"])
    rules["foul"] = FoulPolicy(rules["foul"])
    rules["house_way"] = HouseWay(rules["house_way"])
    if "commission_rounding" in rules:
        rules["commission_rounding"] = CommissionRounding(rules["commission_rounding"])
    if "commission_free" in rules:
        rules["commission_free"] = CommissionFree(rules["commission_free"])
    data["rules"] = RuleOptions(**rules)
    data["denominations"] = tuple(data["denominations"])
    if "side_bets" in data:
        data["side_bets"] = tuple(
            (kind, options_from_plain(side_bet(kind), options))
            for kind, options in data["side_bets"]
        )
    return TableConfig(**data)


def config_to_plain(config: TableConfig) -> dict[str, Any]:
    """A table's settings as the store keeps them (a map keyed by field name): the
    config part here, and the tables catalog's (:mod:`server.store.catalog`)."""
    return _plain_config(config)


def config_from_plain(data: dict[str, Any]) -> TableConfig:
    """The settings :func:`config_to_plain` gave. Raises ValueError (or TypeError,
    KeyError) for a map that is not one."""
    return _config(data)


def _state(data: dict[str, Any]) -> TableState:
    """The state from its plain data, config and seats included."""
    data = dict(data)
    data["config"] = _config(data["config"])
    pending = data.get("pending_config")
    data["pending_config"] = None if pending is None else _config(pending)
    data["phase"] = Phase(data["phase"])
    data["hands"] = _tuple(data["hands"])
    data["dealer_low"] = _tuple(data["dealer_low"])
    data["seats"] = tuple(_seat(s) for s in data["seats"])
    data["results"] = tuple(_result(r) for r in data["results"])
    data["settled_options"] = tuple(
        (kind, options_from_plain(side_bet(kind), options))
        for kind, options in data.get("settled_options") or ()
    )
    return TableState(**data)


def _unpack_part(parts: Mapping[str, bytes], name: str) -> Any:
    raw = parts.get(name)
    if raw is None:
        raise ValueError(f"part {name!r} is missing")
    return msgpack.unpackb(raw, raw=False, use_list=True)


def from_parts(parts: Mapping[str, bytes]) -> TableState:
    """The state whose parts :func:`to_parts` gave (all of them, from one or several
    calls), or that a writer of format 2 gave. Parts of seats beyond the header's seat
    count are ignored; no pending config part means none. Raises ValueError if a part
    is missing, garbled or of another format.
    """
    try:
        fmt, data = _unpack_part(parts, HEADER_PART)
        if fmt == _PARTS_FORMAT:
            data = _named(HEADER_FIELDS, data) | _named(DEAL_FIELDS, _unpack_part(parts, DEAL_PART))
            data["results"] = [_named(RESULT_FIELDS, r) for r in data.get("results", ())]
        elif fmt == _MAP_PARTS_FORMAT:
            data = dict(data)
        else:
            raise ValueError(f"unknown table state format {fmt}")
        count = data["seats"]
        if type(count) is not int or count < 0:
            raise ValueError(f"bad seat count {count!r}")
        data["config"] = _unpack_part(parts, CONFIG_PART)
        seats = [_unpack_part(parts, seat_part(i)) for i in range(count)]
        if fmt == _PARTS_FORMAT:
            seats = [None if s is None else _named(SEAT_FIELDS, s) for s in seats]
        data["seats"] = seats
        if PENDING_CONFIG_PART in parts:
            data["pending_config"] = _unpack_part(parts, PENDING_CONFIG_PART)
        if CLOSING_PART in parts:
            data["closing"] = _unpack_part(parts, CLOSING_PART) is True
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


def is_current(stored: Stored) -> bool:
    """Whether ``stored`` is in the parts of the format written here: else its next
    commit must give every part (:func:`to_parts` with no state before), so that the
    table is in one format again."""
    raw = stored.parts.get(HEADER_PART)
    if stored.whole is not None or raw is None:
        return False
    try:
        header = msgpack.unpackb(raw, raw=False, use_list=True)
    except (ValueError, msgpack.UnpackException):
        return False
    return type(header) is list and len(header) == 2 and header[0] == _PARTS_FORMAT


def stored_state(stored: Stored) -> TableState:
    """The state of a stored table: from its parts, or from the whole state of a table
    stored before parts and not committed since. Raises ValueError if unreadable."""
    if stored.whole is not None and not stored.parts:
        return from_bytes(stored.whole)
    return from_parts(stored.parts)
