"""``paigow-server account list [--guests] | show | ledger | credit | debit | reverse``:
see the accounts, and the operator API's moves (:mod:`server.admin.operations`)."""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
from typing import Any

from server.admin import operations as ops
from server.cli.common import open_stores, say, table_text, whoami
from server.config import Settings
from server.store import Move, MoveRefused, Refusal, Stores


def add_parser(sub: Any, as_json: argparse.ArgumentParser) -> None:
    """``account`` and its actions."""
    acc = sub.add_parser("account", help="see and credit accounts")
    acc_sub = acc.add_subparsers(dest="action", required=True)
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
        print(table_text(("guest", "last active", "balance"), [(p, a, str(b)) for p, a, b in rows]))
        print(f"{len(rows)} guests")
    return 0


async def account(settings: Settings, args: argparse.Namespace) -> int:
    """Run the ``account`` action asked for."""
    async with await open_stores(settings) as stores:
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
                print(table_text(("player", "name", "balance"), table))
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
                    table_text(
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
    print(table_text(("entry", "kind", "table", "reason", "amount"), table))
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
            by=f"cli:{whoami()}",
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
        say(f"idempotency key {key} (give it again with --key to retry safely)")
    state = _DONE[args.action] if done["applied"] else "already applied (same key)"
    print(f"{args.player}\t{done['balance']}\t{state}")
    return 0
