"""``paigow-server admin token | list | revoke``: the tokens of the operator's API
(``--admin-port``)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from server.admin import tokens as admin_tokens
from server.cli.common import open_stores, say, server_secret, table_text, ttl, when
from server.config import Settings
from server.store import AdminTokenRecord


def add_parser(sub: Any) -> None:
    """``admin`` and its actions."""
    adm = sub.add_parser("admin", help="tokens of the operator's API")
    adm_sub = adm.add_subparsers(dest="action", required=True)
    mint = adm_sub.add_parser("token", help="mint an admin token (printed once)")
    mint.add_argument("--name", required=True, help="whom it is for (on their ledger entries)")
    mint.add_argument("--ttl", type=ttl, default=ttl("12h"), help="e.g. 30m, 12h, 7d")
    adm_sub.add_parser("list", help="the admin tokens that stand")
    gone = adm_sub.add_parser("revoke", help="revoke an admin token by its id")
    gone.add_argument("token_id")


async def admin(settings: Settings, args: argparse.Namespace) -> int:
    """``admin token | list | revoke``: the operator API's tokens."""
    secret = server_secret(settings) if args.action == "token" else b""
    async with await open_stores(settings) as stores:
        records = stores.admin_tokens
        now = int(time.time())
        if args.action == "token":
            token, claims = admin_tokens.mint(secret, args.name, args.ttl, now)
            await records.record(
                AdminTokenRecord(claims.token_id, args.name, claims.expires_s, now)
            )
            say(f"admin token {claims.token_id} for {args.name}, expires {when(claims.expires_s)}")
            print(token)
            return 0
        if args.action == "list":
            rows = [
                (r.token_id, r.name, when(r.minted_s), when(r.expires_s))
                for r in await records.listed(now)
            ]
            print(table_text(("id", "name", "minted", "expires"), rows) if rows else "no tokens")
            return 0
        if not await records.revoke(args.token_id):
            print(f"paigow-server: no admin token {args.token_id!r}", file=sys.stderr)
            return 1
        print(f"{args.token_id}: revoked")
        return 0
