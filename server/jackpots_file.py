"""The progressive jackpots of a tables file: ``[jackpot.<name>]`` sections (TOML).

A jackpot is defined once, by name, beside the tables (docs/RULES.md, "Progressive
jackpot"): its seed, its contribution rate (basis points), its wager and its pay table,
and the ids of the tables that offer it (``tables``). Every table that names it, on any
node, feeds one meter in the store. The section is read here only: the tables' own
parser (:mod:`server.tables_file`) reads ``[[table]]`` and nothing else, as release
0.1.0's does, so a file with jackpots still serves a node of that release (which offers
none).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from server.rules.progressive import JackpotOptions, ProgressiveError

_KEYS = {"seed", "contribution_bps", "wager", "pay_table", "tables"}


class JackpotsFileError(ValueError):
    """A jackpot section that cannot be used; the message names the jackpot and key."""


def load_jackpots(path: Path | None) -> dict[str, tuple[JackpotOptions, tuple[str, ...]]]:
    """The jackpots of the tables file at ``path`` (None: the built-in file)."""
    try:
        if path is None:
            text = resources.files("server").joinpath("data/tables.toml").read_text("utf-8")
        else:
            text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise JackpotsFileError(f"cannot read {path}: {exc.strerror}") from exc
    return parse_jackpots(text)


def parse_jackpots(
    text: str, table_ids: Iterable[str] | None = None
) -> dict[str, tuple[JackpotOptions, tuple[str, ...]]]:
    """Each jackpot of the TOML ``text``: its options and the tables that offer it, by
    name. ``table_ids``: the file's tables (None: read from ``text``), each a jackpot's
    ``tables`` must name; a table offers one jackpot at most."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise JackpotsFileError(f"not valid TOML: {exc}") from exc
    sections = data.get("jackpot", {})
    if not isinstance(sections, Mapping):
        raise JackpotsFileError("`jackpot` is a set of [jackpot.<name>] sections")
    if table_ids is None:
        rows = data.get("table", [])
        table_ids = [str(t.get("id")) for t in rows if isinstance(t, Mapping)]
    known = set(table_ids)
    out: dict[str, tuple[JackpotOptions, tuple[str, ...]]] = {}
    offered: dict[str, str] = {}
    for name, entry in sections.items():
        options, tables = _jackpot(name, entry)
        for t in tables:
            if t not in known:
                raise JackpotsFileError(f"jackpot {name}: no table {t!r} in the file")
            if t in offered:
                raise JackpotsFileError(f"jackpot {name}: table {t!r} offers {offered[t]} already")
            offered[t] = name
        out[name] = (options, tables)
    return out


def _jackpot(name: str, entry: Any) -> tuple[JackpotOptions, tuple[str, ...]]:
    if not isinstance(entry, Mapping):
        raise JackpotsFileError(f"jackpot {name}: a jackpot is a map of settings")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise JackpotsFileError(f"jackpot {name}: unknown key {unknown[0]!r}")
    for key in ("seed", "contribution_bps"):
        if key not in entry:
            raise JackpotsFileError(f"jackpot {name}: `{key}` is required")
    tables = entry.get("tables", [])
    if not isinstance(tables, list) or not all(isinstance(t, str) for t in tables):
        raise JackpotsFileError(f"jackpot {name}: `tables` is a list of table ids")
    if len(set(tables)) != len(tables):
        raise JackpotsFileError(f"jackpot {name}: a table is listed twice")
    settings = {k: v for k, v in entry.items() if k != "tables"}
    try:
        return JackpotOptions(name, **settings), tuple(tables)
    except (ProgressiveError, TypeError) as exc:
        text = str(exc)
        where = f"jackpot {name}: "
        raise JackpotsFileError(text if text.startswith(where) else where + text) from None
