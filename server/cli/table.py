"""``paigow-server table list | create | change | close``: the tables catalog
(:mod:`server.catalog`), changed while the servers run."""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from collections.abc import Sequence
from typing import Any

from server.catalog import (
    BadTableConfig,
    CatalogError,
    TableView,
    change_table,
    close_table,
    create_table,
    list_tables,
)
from server.cli.common import open_stores, table_text
from server.config import Settings


def add_parser(sub: Any, as_json: argparse.ArgumentParser) -> None:
    """``table list | create | change | close``."""
    tab = sub.add_parser("table", help="create, change, close and list tables while running")
    tab_sub = tab.add_subparsers(dest="action", required=True)
    listing = tab_sub.add_parser("list", parents=[as_json], help="the tables and their status")
    listing.add_argument("--all", action="store_true", help="closed tables too")
    settings_help = (
        "a setting as in the tables file, e.g. max_bet=2000, foul=lose, "
        "denominations=[5,25] (docs/RULES.md, 'Table options')"
    )
    create = tab_sub.add_parser("create", parents=[as_json], help="a new table, open at once")
    create.add_argument("table_id", metavar="ID")
    create.add_argument("name", metavar="NAME", help="its name in the lobby")
    create.add_argument("settings", nargs="*", metavar="KEY=VALUE", help=settings_help)
    change = tab_sub.add_parser(
        "change", parents=[as_json], help="change settings: they apply between rounds"
    )
    change.add_argument("table_id", metavar="ID")
    change.add_argument("settings", nargs="+", metavar="KEY=VALUE", help=settings_help)
    close = tab_sub.add_parser(
        "close",
        parents=[as_json],
        help="no new seat or bet; the round in play ends, every seat's chips go back",
    )
    close.add_argument("table_id", metavar="ID")


def _setting(text: str) -> tuple[str, Any]:
    """``KEY=VALUE``: the value read as TOML (``50``, ``[5, 25]``, ``"x"``), else as text."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise BadTableConfig(f"{text!r}: a setting is KEY=VALUE")
    try:
        parsed: Any = tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value
    return key.strip(), parsed


def _show_tables(views: Sequence[TableView], as_json: bool) -> None:
    if as_json:
        print(json.dumps([v.as_dict() for v in views]))
        return
    rows = [
        (
            v.table_id,
            v.status.value,
            v.config.name,
            f"{v.config.min_bet}-{v.config.max_bet}",
            str(v.config.seats),
        )
        for v in views
    ]
    print(table_text(("table", "status", "name", "bets", "seats"), rows))


async def table(settings: Settings, args: argparse.Namespace) -> int:
    """Run the ``table`` action asked for (exit 2: a bad setting; 1: refused)."""
    async with await open_stores(settings) as stores:
        catalog = stores.catalog
        try:
            if args.action == "list":
                _show_tables(await list_tables(catalog, closed=args.all), args.json)
                return 0
            if args.action == "create":
                spec = dict(_setting(t) for t in args.settings)
                spec.update(id=args.table_id, name=args.name)
                view = await create_table(catalog, spec)
            elif args.action == "change":
                changes = dict(_setting(t) for t in args.settings)
                view = await change_table(catalog, args.table_id, changes)
            else:
                view = await close_table(catalog, args.table_id)
        except BadTableConfig as exc:
            print(f"paigow-server: {exc}", file=sys.stderr)
            return 2
        except CatalogError as exc:
            print(f"paigow-server: {exc}", file=sys.stderr)
            return 1
        _show_tables([view], args.json)
        return 0
