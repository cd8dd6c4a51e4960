"""The tables file: which tables a server hosts, with their limits and rule options (TOML)."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from importlib import resources
from pathlib import Path
from typing import Any

from server.rules.bonus import pay_table
from server.rules.options import CommissionFree, CommissionRounding, HouseWay, RuleOptions
from server.rules.progressive import PROGRESSIVE, JackpotOptions, ProgressiveBetOptions
from server.rules.side_bets import side_bet
from server.rules.splits import FoulPolicy
from server.rules.values import WheelRank
from server.rules.wagers import options_from_plain, options_to_plain
from server.table.state import TableConfig

_RULE_KEYS = {f.name for f in fields(RuleOptions)}
_CONFIG_KEYS = {f.name for f in fields(TableConfig)} - {"rules", "table_id"}


class TablesFileError(ValueError):
    """A tables file that cannot be used; the message names the table and key."""


def default_tables_text() -> str:
    """The tables shipped with the server."""
    return resources.files("server").joinpath("data/tables.toml").read_text(encoding="utf-8")


def load_tables(path: Path | None) -> list[TableConfig]:
    """The tables of the file at ``path`` (None: the built-in file)."""
    try:
        text = path.read_text(encoding="utf-8") if path is not None else default_tables_text()
    except OSError as exc:
        raise TablesFileError(f"cannot read {path}: {exc.strerror}") from exc
    return parse_tables(text)


def parse_tables(text: str) -> list[TableConfig]:
    """Tables from TOML text: an array ``[[table]]`` with ``id``, ``name`` and options."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TablesFileError(f"not valid TOML: {exc}") from exc
    tables = data.get("table")
    if not isinstance(tables, list) or not tables:
        raise TablesFileError("the file defines no [[table]]")
    configs = [table_config(entry, _where(entry, n)) for n, entry in enumerate(tables, 1)]
    ids = [c.table_id for c in configs]
    if len(set(ids)) != len(ids):
        raise TablesFileError("two tables have the same id")
    return configs


def _where(entry: object, n: int) -> str:
    table_id = entry.get("id", "?") if isinstance(entry, dict) else "?"
    return f"table {n} ({table_id})"


def table_config(entry: Mapping[str, Any], where: str) -> TableConfig:
    """One table's settings from the keys of a ``[[table]]`` entry (``id``, ``name``
    and options, as docs/RULES.md, "Table options", lists them): the tables file's,
    and the catalog's operations' (:mod:`server.catalog`). Raises
    :class:`TablesFileError`, its message starting with ``where``, for a bad id, an
    unknown key or a setting out of range."""
    if not isinstance(entry, Mapping):
        raise TablesFileError(f"{where}: a table is a map of settings")
    table_id = entry.get("id")
    if not isinstance(table_id, str) or not table_id or len(table_id) > 32:
        raise TablesFileError(f"{where}: `id` is a string of 1 to 32 characters")
    if not all(c.isalnum() or c in "-_" for c in table_id):
        raise TablesFileError(f"{where}: `id` uses letters, digits, '-' and '_' only")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise TablesFileError(f"{where}: `name` is a string, not empty")
    rules: dict[str, Any] = {}
    config: dict[str, Any] = {}
    for key, value in entry.items():
        if key == "id":
            continue
        if key in _RULE_KEYS:
            rules[key] = value
        elif key == "side_bets":
            config[key] = _side_bets(value, where)
        elif key in _CONFIG_KEYS:
            config[key] = tuple(value) if isinstance(value, list) else value
        else:
            raise TablesFileError(f"{where}: unknown key {key!r}")
    try:
        if "wheel" in rules:
            rules["wheel"] = WheelRank(rules["wheel"])
        if "foul" in rules:
            rules["foul"] = FoulPolicy(rules["foul"])
        if "house_way" in rules:
            rules["house_way"] = HouseWay(rules["house_way"])
        if "commission_rounding" in rules:
            rules["commission_rounding"] = _rounding(rules["commission_rounding"])
        if "commission_free" in rules:
            rules["commission_free"] = _commission_free(rules["commission_free"])
        options = RuleOptions(**rules)
        pay_table(options.bonus_pay_table)  # an unknown name would fail every settlement
        return TableConfig(table_id=table_id, rules=options, **config)
    except (TypeError, ValueError) as exc:
        raise TablesFileError(f"{where}: {exc}") from exc


def _side_bets(value: object, where: str) -> tuple[tuple[str, Any], ...]:
    """``side_bets``: a map of side bet kind to its options (a map, maybe empty), as
    ``[table.side_bets.envy]`` (docs/DESIGN.md, "Wagers")."""
    if not isinstance(value, Mapping):
        raise TablesFileError(f"{where}: `side_bets` maps a side bet to its options")
    out = []
    for kind, options in value.items():
        if not isinstance(options, Mapping):
            raise TablesFileError(f"{where}: side_bets.{kind} is a map of its options")
        try:
            out.append((kind, options_from_plain(side_bet(kind), options)))
        except KeyError as exc:
            raise TablesFileError(f"{where}: side_bets: {exc.args[0]}") from exc
        except ValueError as exc:
            raise TablesFileError(f"{where}: side_bets: {exc}") from exc
    return tuple(out)


def _rounding(value: object) -> CommissionRounding:
    known = ", ".join(repr(r.value) for r in CommissionRounding)
    if not isinstance(value, str) or value not in {r.value for r in CommissionRounding}:
        raise ValueError(f"commission_rounding is one of {known}, not {value!r}")
    return CommissionRounding(value)


def _commission_free(value: object) -> CommissionFree:
    known = ", ".join(repr(r.value) for r in CommissionFree)
    if not isinstance(value, str) or value not in {r.value for r in CommissionFree}:
        raise ValueError(f"commission_free is one of {known}, not {value!r}")
    return CommissionFree(value)


def describe_table(config: TableConfig) -> dict[str, Any]:
    """``config`` as the keys of a ``[[table]]`` entry (every key, defaults included):
    :func:`table_config` of it gives ``config`` back. What ``table list --json``
    prints, and what a change is merged into."""
    out: dict[str, Any] = {"id": config.table_id}
    for f in fields(TableConfig):
        if f.name in ("table_id", "rules"):
            continue
        value = getattr(config, f.name)
        if f.name == "side_bets":
            out[f.name] = {kind: options_to_plain(o) for kind, o in value}
            continue
        out[f.name] = list(value) if isinstance(value, tuple) else value
    for f in fields(RuleOptions):
        value = getattr(config.rules, f.name)
        out[f.name] = value.value if hasattr(value, "value") else value
    return out


def offer_jackpots(
    configs: Sequence[TableConfig], jackpots: Mapping[str, tuple[JackpotOptions, tuple[str, ...]]]
) -> list[TableConfig]:
    """``configs`` with the progressive wager (:data:`server.rules.progressive.PROGRESSIVE`)
    among the side bets of each table a jackpot of the file lists
    (:func:`server.jackpots_file.load_jackpots`), its options the jackpot's (a
    ``side_bets.progressive`` written for such a table is replaced). Raises
    :class:`TablesFileError` for a wager the table's chips cannot make, and for a
    ``side_bets.progressive`` of a table no jackpot lists."""
    offered = {t: options for options, tables in jackpots.values() for t in tables}
    out = []
    for config in configs:
        options = offered.get(config.table_id)
        if options is None:
            if PROGRESSIVE in config.side_kinds:
                # Its meter's settings would be the table's own, maybe not the jackpot's.
                raise TablesFileError(
                    f"table {config.table_id}: a table offers the progressive wager by "
                    "being listed in a [jackpot.<name>]'s `tables`, not by side_bets"
                )
            out.append(config)
            continue
        if options.wager % config.bet_unit:
            raise TablesFileError(
                f"jackpot {options.name}: its wager of {options.wager} is not made of table "
                f"{config.table_id}'s chips (multiples of {config.bet_unit})"
            )
        side = tuple((k, o) for k, o in config.side_bets if k != PROGRESSIVE)
        bet = ProgressiveBetOptions.of(options)
        out.append(replace(config, side_bets=(*side, (PROGRESSIVE, bet))))
    return out


def offered_jackpots(
    defined: Sequence[JackpotOptions], configs: Sequence[TableConfig]
) -> list[JackpotOptions]:
    """The jackpots ``defined`` (a tables file's), then each other jackpot one of
    ``configs`` offers (its settings' options), by name, once each."""
    out = {o.name: o for o in defined}
    for config in configs:
        if PROGRESSIVE in config.side_kinds:
            options = config.side_options(PROGRESSIVE).jackpot_options()
            out.setdefault(options.name, options)
    return list(out.values())
