"""``paigow-server``: run the server, and the operator's commands beside it.

``main`` builds the parser (the settings' flags from :mod:`server.config`, then each
command's arguments from its module), runs the command asked for, or, with none or
``serve``, prints the settings and runs the server until it is stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence

from server.admin import tokens as admin_tokens
from server.app import run
from server.archive import DATABASE_ERRORS
from server.auth import tokens
from server.cli import account, admin, archive, audit, nodes, sessions, table, wallet
from server.cli import jackpot as jackpots
from server.config import Settings, add_arguments, from_arguments
from server.logs import setup_logging
from server.store import EmbeddedRedisError, NotTheServers, StoreFailure
from server.version import add_version_flag
from server.wallet import WalletError

# The package's name, as before it was a package: the logger's name is in every line.
log = logging.getLogger("server.cli")


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
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="answer in JSON")
    # In this order in --help.
    sessions.add_token_parser(sub)
    account.add_parser(sub, as_json)
    audit.add_parser(sub)
    archive.add_parser(sub)
    sessions.add_session_parser(sub)
    nodes.add_parser(sub)
    admin.add_parser(sub)
    # Wallet mode (--wallet-url): the operator's wallet against this server's record.
    wallet.add_parser(sub)
    table.add_parser(sub, as_json)
    # Progressive jackpots: their meters in the store.
    jackpots.add_parser(sub, as_json)
    return parser


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


def main(argv: Sequence[str] | None = None) -> int:
    """The ``paigow-server`` command."""
    args = _parser().parse_args(argv)
    settings = from_arguments(args)
    setup_logging(settings.log_level, settings.log_format)
    try:
        if args.command == "token":
            return sessions.token(settings, args)
        if args.command == "account":
            return asyncio.run(account.account(settings, args))
        if args.command == "audit":
            return asyncio.run(audit.audit(settings))
        if args.command == "archive":
            return asyncio.run(archive.archive_now(settings))
        if args.command == "session":
            return asyncio.run(sessions.session(settings, args))
        if args.command == "nodes" and args.action == "drain":
            return asyncio.run(nodes.drain(settings, args.name))
        if args.command == "nodes":
            return asyncio.run(nodes.nodes(settings))
        if args.command == "admin":
            return asyncio.run(admin.admin(settings, args))
        if args.command == "wallet":
            return asyncio.run(wallet.wallet(settings, args))
        if args.command == "table":
            return asyncio.run(table.table(settings, args))
        if args.command == "jackpot":
            return asyncio.run(jackpots.jackpot(settings, args))
        _serve(settings)
        return 0
    except _FAILURES as exc:
        # 2, not 1: an audit that could not run is not an audit that failed.
        print(f"paigow-server: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _serve(settings: Settings) -> None:
    """Print the settings, then run the server (on uvloop if installed) until stopped."""
    if settings.log_format == "json":  # every line of the output is then JSON
        log.info("settings", extra={"settings": dict(settings.describe())})
    else:
        for name, value in settings.describe():
            print(f"  {name:16} {value}")
    try:
        import uvloop

        uvloop.run(run(settings))
    except ImportError:
        asyncio.run(run(settings))
