"""``paigow-server token``: a player's signed login token; ``session revoke NAME``: end
their sessions at once."""

from __future__ import annotations

import argparse
import time
from typing import Any

from server.admin import operations as ops
from server.auth import tokens
from server.cli.common import open_stores, server_secret, ttl
from server.config import Settings


def add_token_parser(sub: Any) -> None:
    """``token --player NAME --ttl 12h``."""
    tok = sub.add_parser("token", help="issue a signed login token")
    tok.add_argument("--player", required=True)
    tok.add_argument("--ttl", type=ttl, default=ttl("12h"), help="e.g. 30m, 12h, 7d")


def add_session_parser(sub: Any) -> None:
    """``session revoke NAME``."""
    ses = sub.add_parser("session", help="end a player's sessions")
    ses_sub = ses.add_subparsers(dest="action", required=True)
    revoke = ses_sub.add_parser("revoke", help="close their connections, refuse their resumes")
    revoke.add_argument("player")


def token(settings: Settings, args: argparse.Namespace) -> int:
    """Print a login token for ``--player``, signed with the server's secret."""
    print(tokens.issue(server_secret(settings), args.player, args.ttl, int(time.time())))
    return 0


async def session(settings: Settings, args: argparse.Namespace) -> int:
    """End the player's sessions on every node."""
    async with await open_stores(settings) as stores:
        done = await ops.revoke_sessions(stores, args.player)
        print(f"{args.player}: sessions ended ({done['nodes_told']} server processes told)")
        return 0
