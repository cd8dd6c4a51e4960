"""``paigow-server``: run the server, and the operator's commands beside it.

- ``paigow-server [serve]``: run (embedded Redis unless ``--redis-url``);
- ``paigow-server token --player NAME --ttl 12h``: a signed login token;
- ``paigow-server account list | show NAME | credit NAME AMOUNT``;
- ``paigow-server audit``: check that every chip is accounted for (exit 1 if not).

The operator's commands reach the same Redis as the server: ``--redis-url``, else the
embedded Redis of a server running on ``--data-dir``, else they start it themselves.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import re
import secrets
import sys
import time
from collections.abc import AsyncIterator, Sequence

import redis.asyncio
from redis.exceptions import RedisError

from server.app import data_redis_url, run, token_secret
from server.auth import tokens
from server.config import Settings, add_arguments, from_arguments
from server.store.accounts import AccountStore
from server.store.audit import audit
from server.store.connection import close_client, redis_client
from server.store.embedded import EmbeddedRedis, EmbeddedRedisError
from server.store.parts import stored_state
from server.store.tables import StoredTable

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
        description=__doc__.split("\n\n")[0],
        epilog="Each flag may be given by its PAIGOW_* environment variable instead; "
        "a flag wins, and an empty variable counts as unset.",
    )
    add_arguments(parser)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("serve", help="run the server (the default)")
    tok = sub.add_parser("token", help="issue a signed login token")
    tok.add_argument("--player", required=True)
    tok.add_argument("--ttl", type=_ttl, default=_ttl("12h"), help="e.g. 30m, 12h, 7d")
    acc = sub.add_parser("account", help="see and credit accounts")
    acc_sub = acc.add_subparsers(dest="action", required=True)
    acc_sub.add_parser("list")
    show = acc_sub.add_parser("show")
    show.add_argument("player")
    credit = acc_sub.add_parser("credit")
    credit.add_argument("player")
    credit.add_argument("amount", type=int)
    credit.add_argument("--key", help="idempotency key (default: a new one)")
    sub.add_parser("audit", help="check that accounts, tables and the house add up")
    return parser


@contextlib.asynccontextmanager
async def _redis(settings: Settings) -> AsyncIterator[redis.asyncio.Redis]:
    url = settings.redis_url or data_redis_url(settings.data_dir)
    if url is not None:
        client = redis_client(url, max_connections=4, timeout=30)
        try:
            yield client
        finally:
            await close_client(client)
        return
    async with EmbeddedRedis(settings.data_dir / "redis") as embedded:
        client = embedded.client()
        try:
            yield client
        finally:
            await client.aclose()


def _table_money(stored: StoredTable) -> tuple[int, int, int]:
    return stored_state(stored).money()


async def _account(settings: Settings, args: argparse.Namespace) -> int:
    async with _redis(settings) as client:
        accounts = AccountStore(client)
        if args.action == "list":
            for player, balance in await accounts.list_accounts():
                print(f"{player}\t{balance}")
            return 0
        if args.action == "show":
            found = await accounts.balance(args.player)
            if found is None:
                print(f"no account {args.player!r}", file=sys.stderr)
                return 1
            print(f"{args.player}\t{found}")
            return 0
        if args.amount <= 0:
            print("the amount is a positive whole number of chips", file=sys.stderr)
            return 2
        key = args.key or f"operator:{secrets.token_hex(8)}"
        result = await accounts.credit(args.player, args.amount, key)
        state = "credited" if result.applied else "already applied (same key)"
        print(f"{args.player}\t{result.balance}\t{state}")
        return 0


async def _audit(settings: Settings) -> int:
    async with _redis(settings) as client:
        report = await audit(client, _table_money)
        print(report.explain())
        return 0 if report.ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    """The ``paigow-server`` command."""
    args = _parser().parse_args(argv)
    settings = from_arguments(args)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        if args.command == "token":
            token = tokens.issue(token_secret(settings), args.player, args.ttl, int(time.time()))
            print(token)
            return 0
        if args.command == "account":
            return asyncio.run(_account(settings, args))
        if args.command == "audit":
            return asyncio.run(_audit(settings))
        for name, value in settings.describe():
            print(f"  {name:16} {value}")
        _run(settings)
        return 0
    except (tokens.TokenError, ValueError, OSError, RedisError, EmbeddedRedisError) as exc:
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
