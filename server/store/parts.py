"""The storage format of a table's state: msgpack parts, and the state from them.

The store owns the format; the state machine knows nothing of it (its records are
plain frozen values, :mod:`server.table.state`). :func:`to_parts` gives the parts of
a state that differ from those stored, :func:`from_parts` the state from every
stored part, :func:`from_bytes` the state of a table stored whole, before parts, and
:func:`stored_state` the state of a :class:`~server.store.tables.StoredTable`,
whichever way it was stored.

The store keeps a state in parts, so that a commit writes only what changed: a bet
changes one seat of six, and the whole state is about four times that. The parts:

- ``c``: the config (changes only with the tables file);
- ``h``: the header, every field but the config and the seats (a seat count in its
  place), ``[format, fields]``: it holds the version, so every commit writes it;
- ``p0`` .. ``pN-1``: one per seat, ``nil`` for an empty one;
- ``n``: the config pending until the round in play ends, ``nil`` for none; written
  only once there was one, so a table without (every table stored before it) has
  none, and the other parts' bytes are those of a state without the field.

The format number is in the header only: a reader that finds another number reads
nothing, and a writer of a new format writes every part in its first commit over a
table stored in an older one (as this one does over a table stored whole, format
1, read by :func:`from_bytes`), so a table never mixes formats.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from enum import StrEnum
from functools import lru_cache
from typing import Any

import msgpack

from server.rules.options import HouseWay, RuleOptions
from server.rules.splits import FoulPolicy
from server.rules.values import WheelRank
from server.store.tables import StoredTable
from server.table.state import Phase, Seat, SeatResult, SetBy, TableConfig, TableState

_BLOB_FORMAT = 1  # the whole state in one value: what the store held before parts
_PARTS_FORMAT = 2

CONFIG_PART = "c"
HEADER_PART = "h"
PENDING_CONFIG_PART = "n"


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
    """The state's fields in slot order, without the configs (the table's and the
    pending one, parts of their own), and the seat count in place of the seats."""
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
    ``before`` holds (the state machine keeps unchanged records, see
    :func:`~server.table.state.evolve`),
    so an equal record rebuilt is written again, needlessly but harmlessly. The
    header is always among the parts.
    """
    pack = msgpack.packb
    parts = {HEADER_PART: pack([_PARTS_FORMAT, _plain_header(state)])}
    if before is None or state.config is not before.config:
        parts[CONFIG_PART] = pack(_plain_config(state.config))
    pending = state.pending_config
    if pending is not (before.pending_config if before is not None else None):
        parts[PENDING_CONFIG_PART] = pack(None if pending is None else _plain_config(pending))
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
    pending = data.get("pending_config")
    data["pending_config"] = None if pending is None else _config(pending)
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
    calls). Parts of seats beyond the header's seat count are ignored; no pending
    config part means none. Raises ValueError if a part is missing, garbled or of
    another format.
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
        if PENDING_CONFIG_PART in parts:
            data["pending_config"] = _unpack_part(parts, PENDING_CONFIG_PART)
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


def stored_state(stored: StoredTable) -> TableState:
    """The state of a stored table: from its parts, or from the whole state of a table
    stored before parts and not committed since. Raises ValueError if unreadable."""
    if stored.whole is not None and not stored.parts:
        return from_bytes(stored.whole)
    return from_parts(stored.parts)
