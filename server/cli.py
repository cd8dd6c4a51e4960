"""``paigow-server``: run the server, and the operator's commands beside it.

- ``paigow-server [serve]``: run (embedded Redis unless ``--redis-url``);
- ``paigow-server token --player NAME --ttl 12h``: a signed login token;
- ``paigow-server account list [--guests] | show NAME | ledger NAME``;
- ``paigow-server account credit NAME AMOUNT [--create] | debit NAME AMOUNT |
  reverse NAME ENTRY``, each with ``--reason`` and an idempotency ``--key``: the
  operator API's moves (:mod:`server.admin.operations`), refused for an unknown
  player unless ``--create`` (a credit);
- ``paigow-server audit``: check that every chip is accounted for, across Redis and
  the archive (exit 1 if not);
- ``paigow-server archive``: move what is older than the retention window to the
  archive now (one pass, as the server's archiver does every ``--archive-every-ms``);
- ``paigow-server session revoke NAME``: end a player's sessions at once;
- ``paigow-server nodes``: the live nodes, and which one holds each table;
  ``nodes drain NAME``: that node hands its tables over and stops;
- ``paigow-server admin token --name N --ttl 12h | list | revoke ID``: the tokens of the
  operator's API (``--admin-port``).
- ``paigow-server table list | create ID NAME [KEY=VALUE...] | change ID
  KEY=VALUE... | close ID``: the tables catalog, changed while the servers run (every
  node picks a change up within about a second).

The operator's commands reach the same Redis as the server, and say which on standard
error: ``--redis-url``; else the embedded Redis of the server running on ``--data-dir``
(the URL it keeps in ``DATA_DIR/redis.url``); else, no server running there, the
embedded Redis's data in ``DATA_DIR/redis``, started for the command. A folder holding
none of these is not a server's: the command stops (exit 2) rather than start an empty
Redis there. ``token`` likewise signs only with ``--token-secret`` or the secret the
server keeps in ``DATA_DIR/token-secret``, never with one made up on the spot.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import getpass
import json
import logging
import os
import re
import secrets
import sys
import time
import tomllib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from server.admin import operations as ops
from server.admin import tokens as admin_tokens
from server.app import SECRET_FILE, run, table_money, token_secret
from server.archive import DATABASE_ERRORS, Archive
from server.archive.mover import Archiver
from server.auth import tokens
from server.catalog import (
    BadTableConfig,
    CatalogError,
    TableView,
    change_table,
    close_table,
    create_table,
    list_tables,
)
from server.cluster.placement import assign, node_name
from server.config import Settings, add_arguments, from_arguments
from server.logs import setup_logging
from server.store import (
    AdminTokenRecord,
    EmbeddedRedisError,
    Move,
    MoveRefused,
    NotTheServers,
    Refusal,
    StoreFailure,
    Stores,
    lease_ms,
    open_command_stores,
)
from server.tables_file import load_tables
from server.version import add_version_flag
from server.wallet import WalletError
from server.wallet.commands import audit_wallet, moment_ms, reconcile_command

log = logging.getLogger(__name__)

_TTL = re.compile(r"^(\d+)([smhd]?)$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def _ttl(text: str) -> int:
    match = _TTL.match(text.strip())
    if not match or int(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration like 90s, 30m, 12h or 7d")
    return int(match.group(1)) * _UNITS[match.group(2)]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="paigow-server",
        # The docstring's reST quotes are for readers of the source, not of --help.
        description=__doc__.split("\n\n")[0].replace("``", ""),
        epilog="Each flag may be given by its PAIGOW_* environment variable instead; "
        "a flag wins, and an empty variable counts as unset.",
    )
    add_arguments(parser)
    add_version_flag(parser)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("serve", help="run the server (the default)")
    tok = sub.add_parser("token", help="issue a signed login token")
    tok.add_argument("--player", required=True)
    tok.add_argument("--ttl", type=_ttl, default=_ttl("12h"), help="e.g. 30m, 12h, 7d")
    acc = sub.add_parser("account", help="see and credit accounts")
    acc_sub = acc.add_subparsers(dest="action", required=True)
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="answer in JSON")
    listing = acc_sub.add_parser(
        "list", parents=[as_json], help="every account: player, display name, balance"
    )
    listing.add_argument(
        "--guests", action="store_true", help="only guests, with their last activity"
    )
    show = acc_sub.add_parser("show", parents=[as_json], help="one account")
    show.add_argument("player")
    moving = argparse.ArgumentParser(add_help=False)
    moving.add_argument("--key", help="idempotency key (default: a new one, printed)")
    credit = acc_sub.add_parser("credit", parents=[as_json, moving], help="add chips to an account")
    credit.add_argument("player")
    credit.add_argument("amount", type=int)
    credit.add_argument("--reason", default="credited by paigow-server account credit")
    credit.add_argument(
        "--create", action="store_true", help="open the account if the player has none"
    )
    debit = acc_sub.add_parser(
        "debit", parents=[as_json, moving], help="take chips out of an account"
    )
    debit.add_argument("player")
    debit.add_argument("amount", type=int)
    debit.add_argument("--reason", required=True)
    reverse = acc_sub.add_parser(
        "reverse", parents=[as_json, moving], help="take a mistaken credit back, whole"
    )
    reverse.add_argument("player")
    reverse.add_argument("entry", help="the credit's ledger id (account ledger NAME)")
    reverse.add_argument("--reason", required=True)
    book = acc_sub.add_parser("ledger", parents=[as_json], help="an account's newest entries")
    book.add_argument("player")
    book.add_argument("--count", type=int, default=20)
    sub.add_parser("audit", help="check that accounts, tables and the house add up")
    sub.add_parser("archive", help="move what is older than the retention window, now")
    ses = sub.add_parser("session", help="end a player's sessions")
    ses_sub = ses.add_subparsers(dest="action", required=True)
    revoke = ses_sub.add_parser("revoke", help="close their connections, refuse their resumes")
    revoke.add_argument("player")
    nodes = sub.add_parser("nodes", help="the live nodes, and which one holds each table")
    nodes_sub = nodes.add_subparsers(dest="action")
    drain = nodes_sub.add_parser("drain", help="a node hands its tables over and stops")
    drain.add_argument("name")
    adm = sub.add_parser("admin", help="tokens of the operator's API")
    adm_sub = adm.add_subparsers(dest="action", required=True)
    mint = adm_sub.add_parser("token", help="mint an admin token (printed once)")
    mint.add_argument("--name", required=True, help="whom it is for (on their ledger entries)")
    mint.add_argument("--ttl", type=_ttl, default=_ttl("12h"), help="e.g. 30m, 12h, 7d")
    adm_sub.add_parser("list", help="the admin tokens that stand")
    gone = adm_sub.add_parser("revoke", help="revoke an admin token by its id")
    gone.add_argument("token_id")
    # Wallet mode (--wallet-url): the operator's wallet against this server's record.
    wal = sub.add_parser("wallet", help="the operator's wallet (wallet mode)")
    wal_sub = wal.add_subparsers(dest="action", required=True)
    rec = wal_sub.add_parser(
        "reconcile", help="list every transaction the wallet and this server disagree on"
    )
    rec.add_argument(
        "--from",
        dest="from_ms",
        type=moment_ms,
        required=True,
        help="epoch ms or ISO 8601 (UTC if no zone)",
    )
    rec.add_argument(
        "--to",
        dest="to_ms",
        type=moment_ms,
        required=True,
        help="epoch ms or ISO 8601 (UTC if no zone)",
    )
    _table_parser(sub, as_json)
    return parser


# --- the tables catalog (server/catalog.py) ------------------------------------------


def _table_parser(sub: Any, as_json: argparse.ArgumentParser) -> None:
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
    print(_table_text(("table", "status", "name", "bets", "seats"), rows))


async def _table(settings: Settings, args: argparse.Namespace) -> int:
    async with await _stores(settings) as stores:
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


def _say(text: str) -> None:
    """A line for the operator about what the command acts on (standard error, so that
    standard output stays the command's answer)."""
    print(f"paigow-server: {text}", file=sys.stderr, flush=True)


async def _stores(settings: Settings) -> Stores:
    """The stores on the server's Redis, found as the module docstring says, said which."""
    return await open_command_stores(settings, _say)


@contextlib.asynccontextmanager
async def _archive(settings: Settings, *, create: bool) -> AsyncIterator[Archive | None]:
    """The archive (None: off; nor, unless ``create``, a SQLite file never written)."""
    target = settings.archive_target()
    archive = Archive(target) if target is not None else None
    if archive is not None and not create and not archive.exists():
        archive = None
    try:
        yield archive
    finally:
        if archive is not None:
            await archive.close()


def _secret(settings: Settings) -> bytes:
    """The server's token secret: ``--token-secret``, else the one it keeps in its data
    folder (never a new one: tokens signed with it would be refused by the server)."""
    if not settings.token_secret:
        path = (settings.data_dir / SECRET_FILE).resolve()
        if not path.exists():
            raise NotTheServers(
                f"no token secret in {path.parent}: give the server's secret "
                "(--token-secret or PAIGOW_TOKEN_SECRET) or its data folder (--data-dir or "
                "PAIGOW_DATA_DIR), or the token would be refused"
            )
        _say(f"signing with the secret kept in {path}")
    return token_secret(settings)


def _table_text(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns under a header, numbers (the last column) aligned right."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(
            [
                *(c.ljust(w) for c, w in zip(row[:-1], widths, strict=False)),
                row[-1].rjust(widths[-1]),
            ]
        )
        for row in [header, *rows]
    ]
    return "\n".join(lines)


async def _guests(stores: Stores, as_json: bool) -> int:
    """``account list --guests``: every guest, its last activity and its balance."""
    guests = await stores.guests.listed()
    balances = dict(await stores.accounts.list_accounts())
    rows = [
        (p, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000)), balances.get(p, 0))
        for p, ms in guests
    ]
    if as_json:
        print(json.dumps([{"player": p, "active": a, "balance": b} for p, a, b in rows]))
    else:
        print(
            _table_text(("guest", "last active", "balance"), [(p, a, str(b)) for p, a, b in rows])
        )
        print(f"{len(rows)} guests")
    return 0


async def _account(settings: Settings, args: argparse.Namespace) -> int:
    async with await _stores(settings) as stores:
        accounts = stores.accounts
        if args.action == "list" and args.guests:
            return await _guests(stores, args.json)
        if args.action == "list":
            listed = await accounts.list_accounts()
            names = await accounts.display_names([player for player, _ in listed])
            if args.json:
                rows = [{"player": p, "name": names.get(p), "balance": b} for p, b in listed]
                print(json.dumps(rows))
            elif not listed:
                print("no accounts yet")
            else:
                table = [(p, names.get(p, "-"), str(b)) for p, b in listed]
                print(_table_text(("player", "name", "balance"), table))
            return 0
        if args.action == "show":
            found = await accounts.balance(args.player)
            if found is None:
                print(f"no account {args.player!r}", file=sys.stderr)
                return 1
            name = (await accounts.display_names([args.player])).get(args.player)
            if args.json:
                print(json.dumps({"player": args.player, "name": name, "balance": found}))
            else:
                print(
                    _table_text(
                        ("player", "name", "balance"), [(args.player, name or "-", str(found))]
                    )
                )
            return 0
        if args.action == "ledger":
            return await _ledger(stores, args)
        return await _move(stores, args)


async def _ledger(stores: Stores, args: argparse.Namespace) -> int:
    """``account ledger NAME``: the account's newest entries, newest first."""
    if await stores.accounts.balance(args.player) is None:
        print(f"no account {args.player!r}", file=sys.stderr)
        return 1
    rows = await ops.ledger(stores, args.player, args.count)
    if args.json:
        print(json.dumps(rows))
        return 0
    table = [
        (r["entry"], r["kind"], r["table"] or "-", r["extra"].get("reason", ""), str(r["amount"]))
        for r in rows
    ]
    print(_table_text(("entry", "kind", "table", "reason", "amount"), table))
    return 0


_MOVES = {"credit": Move.CREDIT, "debit": Move.DEBIT, "reverse": Move.REVERSAL}
_DONE = {"credit": "credited", "debit": "debited", "reverse": "reversed"}


async def _move(stores: Stores, args: argparse.Namespace) -> int:
    """``account credit | debit | reverse``: the operator API's moves (exit 1 if
    refused, nothing moved)."""
    if args.action != "reverse" and args.amount <= 0:
        print("the amount is a positive whole number of chips", file=sys.stderr)
        return 2
    key = args.key or f"cli-{secrets.token_hex(8)}"
    try:
        done = await ops.move(
            stores,
            _MOVES[args.action],
            args.player,
            key=key,
            reason=args.reason,
            by=f"cli:{_whoami()}",
            amount=0 if args.action == "reverse" else args.amount,
            create=args.action == "credit" and args.create,
            entry=args.entry if args.action == "reverse" else "",
        )
    except MoveRefused as exc:
        hint = " (give --create to open it)" if exc.reason is Refusal.UNKNOWN_PLAYER else ""
        if args.json:
            error = {"code": exc.reason.value, "message": str(exc), "balance": exc.balance}
            print(json.dumps({"error": error}))
        print(f"paigow-server: {args.player}: {exc}{hint}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(done))
        return 0
    if not args.key:
        _say(f"idempotency key {key} (give it again with --key to retry safely)")
    state = _DONE[args.action] if done["applied"] else "already applied (same key)"
    print(f"{args.player}\t{done['balance']}\t{state}")
    return 0


def _whoami() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return str(os.getuid())


async def _audit(settings: Settings) -> int:
    async with await _stores(settings) as stores, _archive(settings, create=False) as archive:
        # Wallet mode adds the wallet's check (nothing without a wallet).
        report = await ops.audit(stores, archive, functools.partial(audit_wallet, settings, stores))
        print(report["text"])
        return 0 if report["ok"] else 1


async def _archive_now(settings: Settings) -> int:
    async with await _stores(settings) as stores, _archive(settings, create=True) as archive:
        if archive is None:
            print("paigow-server: the archive is off (--archive-url off)", file=sys.stderr)
            return 2
        owner = f"cli:{os.getpid()}:{secrets.token_hex(4)}"
        lease = stores.archiving.lease(owner, lease_ms(settings.archive_every_ms))
        if not await lease.wait(lease.ttl_ms / 1000 + 1):
            print(f"paigow-server: {await lease.holder()} is archiving", file=sys.stderr)
            return 1
        try:
            archiver = Archiver(
                stores.archiving,
                archive,
                table_money,
                after_ms=settings.archive_after_ms,
                guest_idle_ms=settings.guest_idle_ms or None,
            )
            report = await archiver.run_once()
        finally:
            await lease.release()
        stats = await archive.stats()
        print(report.summary())
        print(
            f"the archive ({archive.dialect}) holds {stats.ledger} ledger entries and "
            f"{stats.game_logs} game logs"
        )
        return 0


async def _session(settings: Settings, args: argparse.Namespace) -> int:
    async with await _stores(settings) as stores:
        done = await ops.revoke_sessions(stores, args.player)
        print(f"{args.player}: sessions ended ({done['nodes_told']} server processes told)")
        return 0


_FAILURES: tuple[type[Exception], ...] = (
    tokens.TokenError,
    admin_tokens.AdminTokenError,
    ValueError,
    OSError,
    StoreFailure,
    EmbeddedRedisError,
    NotTheServers,
    WalletError,
    *DATABASE_ERRORS,
)
"""What makes a command fail with exit 2 (it could not run)."""


async def _admin(settings: Settings, args: argparse.Namespace) -> int:
    """``admin token | list | revoke``: the operator API's tokens."""
    secret = _secret(settings) if args.action == "token" else b""
    async with await _stores(settings) as stores:
        records = stores.admin_tokens
        now = int(time.time())
        if args.action == "token":
            token, claims = admin_tokens.mint(secret, args.name, args.ttl, now)
            await records.record(
                AdminTokenRecord(claims.token_id, args.name, claims.expires_s, now)
            )
            _say(
                f"admin token {claims.token_id} for {args.name}, expires {_when(claims.expires_s)}"
            )
            print(token)
            return 0
        if args.action == "list":
            rows = [
                (r.token_id, r.name, _when(r.minted_s), _when(r.expires_s))
                for r in await records.listed(now)
            ]
            print(_table_text(("id", "name", "minted", "expires"), rows) if rows else "no tokens")
            return 0
        if not await records.revoke(args.token_id):
            print(f"paigow-server: no admin token {args.token_id!r}", file=sys.stderr)
            return 1
        print(f"{args.token_id}: revoked")
        return 0


def _when(epoch_s: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch_s))


async def _drain(settings: Settings, name: str) -> int:
    async with await _stores(settings) as stores:
        try:
            done = await ops.drain(stores, name, f"cli:{_whoami()}")
        except (ops.NotFound, ops.Refused) as exc:
            print(f"paigow-server: {exc}", file=sys.stderr)
            return 1
        print(f"{name}: asked to drain ({done['told']} processes told)")
        return 0


async def _nodes(settings: Settings) -> int:
    async with await _stores(settings) as stores:
        cluster = stores.nodes
        live = await ops.live_nodes(stores)
        info = await cluster.node_info(live.instances)
        table_ids = [v.table_id for v in await list_tables(stores.catalog)]
        if not table_ids:  # no server started yet: the tables it would seed
            table_ids = [t.table_id for t in load_tables(settings.tables_file)]
        holders = await stores.tables.leases.holders(table_ids)
        placed = assign(table_ids, live.instances)
        held = {t: h[1] for t, h in zip(table_ids, holders, strict=True) if h is not None}
        print("node\tinstance\turl\ttables held\tregistration left (ms)\trelease")
        for instance in live.instances:
            count = sum(1 for h in held.values() if h == instance)
            url = info[instance].get("url", "-")
            left = live.expires[instance] - live.now
            release = info[instance].get("release", "0.1.0")  # 0.1.0 announced none
            print(f"{node_name(instance)}\t{instance}\t{url}\t{count}\t{left}\t{release}")
        print()
        print("table\tholder\tplaced on")
        for table_id in table_ids:
            holder = held.get(table_id)
            shown = "-" if holder is None else node_name(holder)
            if holder is not None and holder not in live.expires:
                shown += " (not live)"
            target = placed.get(table_id)
            print(f"{table_id}\t{shown}\t{node_name(target) if target else '-'}")
        return 0


async def _wallet(settings: Settings, args: argparse.Namespace) -> int:
    async with await _stores(settings) as stores:
        return await reconcile_command(settings, stores, args.from_ms, args.to_ms)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``paigow-server`` command."""
    args = _parser().parse_args(argv)
    settings = from_arguments(args)
    setup_logging(settings.log_level, settings.log_format)
    try:
        if args.command == "token":
            token = tokens.issue(_secret(settings), args.player, args.ttl, int(time.time()))
            print(token)
            return 0
        if args.command == "account":
            return asyncio.run(_account(settings, args))
        if args.command == "audit":
            return asyncio.run(_audit(settings))
        if args.command == "archive":
            return asyncio.run(_archive_now(settings))
        if args.command == "session":
            return asyncio.run(_session(settings, args))
        if args.command == "nodes" and args.action == "drain":
            return asyncio.run(_drain(settings, args.name))
        if args.command == "nodes":
            return asyncio.run(_nodes(settings))
        if args.command == "admin":
            return asyncio.run(_admin(settings, args))
        if args.command == "wallet":
            return asyncio.run(_wallet(settings, args))
        if args.command == "table":
            return asyncio.run(_table(settings, args))
        if settings.log_format == "json":  # every line of the output is then JSON
            log.info("settings", extra={"settings": dict(settings.describe())})
        else:
            for name, value in settings.describe():
                print(f"  {name:16} {value}")
        _run(settings)
        return 0
    except _FAILURES as exc:
        # 2, not 1: an audit that could not run is not an audit that failed.
        print(f"paigow-server: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _run(settings: Settings) -> None:
    try:
        import uvloop

        uvloop.run(run(settings))
    except ImportError:
        asyncio.run(run(settings))


if __name__ == "__main__":
    sys.exit(main())
