"""``paigow-cli``: the reference client's command line.

- ``paigow-cli [URL]``: the full-screen table (lobby, table, history, help on ``?``);
- ``paigow-cli play --table T --bet N --rounds K --strategy house-way|random [--json]``:
  plays without a screen, one line per event (one JSON object per line with ``--json``);
- ``paigow-cli history [--limit N|all]``: the player's past rounds, newest first (all of
  them by default, read a page at a time);
- ``paigow-cli verify [ROUND]``: re-derives logged rounds from their seeds, from the
  server's history (ROUND: its newest record, however far back; else the newest
  ``--limit``) or (``--log FILE``) from the JSON lines of an earlier ``play``;
- ``paigow-cli bots``: N bots playing, for load and soak tests.

A guest's identity lives in its session: every command saves the resume token in a
session file (``--session``, default under ``$XDG_STATE_HOME``) and the next command
resumes it, so ``history`` and ``verify`` see the rounds ``play`` played. Each running
client is its own player: a second one started while the first runs gets a session file
of its own (see :mod:`clients.session_file`); ``--session NAME`` picks a player. Exit
codes: 0 success, 1 a failed check or a server refusal (a ``ServerError``, or a
``SessionEnded``), 2 bad usage, no server (a ``ConnectionLost``) or the full-screen table
without its libraries (the package's ``cli`` extra).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from clients.autoplay import STRATEGIES, play_rounds
from clients.core import DEFAULT_URL, Client, ClientError, ClientEvent, ConnectionLost
from clients.events import Disconnected
from clients.model import Verification, check_deal, verify_record
from clients.session_file import (
    claim_session,
    default_session_path,
    make_client,
    save_session,
    session_dir,
)
from clients.text import describe, note_line, record_line, to_json
from protocol import limits as L
from protocol.codec import as_map
from protocol.messages import OkReply
from protocol.structs import HistoryPage, RoundRecord

COMMANDS = ("play", "history", "verify", "bots", "table")


# --- commands -----------------------------------------------------------------------


def _emit(out: TextIO, as_json: bool, data: dict[str, Any], line: str | None) -> None:
    if as_json:
        out.write(json.dumps(data, ensure_ascii=False) + "\n")
    elif line:
        out.write(line + "\n")
    out.flush()


async def _connect(client: Client) -> None:
    """Connect, saying on standard error each time the server says to try later (1013)
    and the client waits to try again."""
    queue = client.listen()

    def say(event: ClientEvent) -> None:
        if isinstance(event, Disconnected) and event.retrying:
            print(f"paigow-cli: {describe(event)}", file=sys.stderr, flush=True)

    async def saying() -> None:
        while True:
            say(await queue.get())

    task = asyncio.create_task(saying())
    try:
        await client.connect()
    finally:
        await _cancel(task)
        client.unlisten(queue)
        while not queue.empty():
            say(queue.get_nowait())


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def cmd_play(args: argparse.Namespace, out: TextIO) -> int:
    """Play ``--rounds`` rounds headless; every event is written as it comes.

    A bet the table refuses for good (limits, chip unit, no chips left) ends the play:
    the seat is left (unless ``--stay``) and the refusal raised, which ``main`` turns
    into exit code 1 with the server's words.
    """
    client = make_client(args)
    queue = client.listen()

    def write(event: ClientEvent) -> None:
        _emit(out, args.json, to_json(event), describe(event))

    async def printer() -> None:
        while True:
            write(await queue.get())

    # Printing already while connecting: a server that says to try later (1013) is
    # tried again, and each wait is a line.
    waiting = asyncio.create_task(printer())
    try:
        await client.connect()
    finally:
        await _cancel(waiting)
    save_session(args.session, client)

    def note(kind: str, data: dict[str, object]) -> None:
        while not queue.empty():  # the events received before it come first
            write(queue.get_nowait())
        line = note_line(kind, data)
        _emit(out, args.json, {"type": f"client.{kind}", "table_id": args.table, **data}, line)

    printing = asyncio.create_task(printer())
    try:
        try:
            stats = await play_rounds(
                client,
                args.table,
                bet=args.bet,
                bonus=args.bonus,
                rounds=args.rounds,
                buy_in=args.buy_in,
                strategy=args.strategy,
                rng=random.Random(args.seed),
                on_note=note,
            )
        finally:
            if not args.stay and client.connected:
                with contextlib.suppress(ClientError, TimeoutError):
                    await client.leave(args.table)
            await asyncio.sleep(0)  # let the printer write what is queued
            while not queue.empty():
                write(queue.get_nowait())
        summary = {
            "type": "client.summary",
            "table_id": args.table,
            "rounds": stats.rounds,
            "voids": stats.voids,
            "wagered": stats.wagered,
            "net": stats.net,
            "verified": stats.verified,
            "unverified": len(stats.unverified),
            "errors": stats.errors,
        }
        line = (
            f"played {stats.rounds} round(s) at {args.table}: net {stats.net:+d}, "
            f"{stats.verified} verified, {len(stats.unverified)} not verified"
        )
        _emit(out, args.json, summary, line)
        return 1 if stats.unverified else 0
    finally:
        printing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await printing
        save_session(args.session, client)
        await client.close()


async def _records(
    client: Client, table: str | None, limit: int | None, page_size: int = L.MAX_HISTORY_PAGE
) -> tuple[list[RoundRecord], bool]:
    """The newest ``limit`` records (None: every one the server keeps), newest first, and
    whether older ones exist beyond them.

    Pages are followed through ``next_cursor``, ``page_size`` rounds per request; one
    record past ``limit`` is asked for, so "more" is known rather than guessed (with a
    table filter a page can hold fewer rounds than asked, or none, and still continue).
    """
    records: list[RoundRecord] = []
    cursor: str | None = None
    while limit is None or len(records) <= limit:
        want = page_size if limit is None else min(page_size, limit + 1 - len(records))
        page = await client.history(cursor=cursor, limit=want, table_id=table)
        records.extend(page.rounds)
        cursor = page.next_cursor
        if cursor is None:
            break
    if limit is None or len(records) <= limit:
        return records, False
    return records[:limit], True


async def _find_round(
    client: Client, table: str | None, round_no: int, page_size: int = L.MAX_HISTORY_PAGE
) -> list[RoundRecord]:
    """Every table's newest record of round ``round_no`` (only ``table``'s, if given),
    newest first; [] when the history has none.

    Round numbers are per table, so without ``table`` the whole history is read: two
    tables can each have a round 1, and neither is picked silently over the other.
    """
    found: dict[str, RoundRecord] = {}
    cursor: str | None = None
    while True:
        page = await client.history(cursor=cursor, limit=page_size, table_id=table)
        for record in page.rounds:
            if record.round == round_no:
                found.setdefault(record.table_id, record)
        cursor = page.next_cursor
        if cursor is None or (table is not None and found):
            return list(found.values())


async def cmd_history(args: argparse.Namespace, out: TextIO) -> int:
    """Print the player's past rounds, newest first (every page, or the newest ``--limit``)."""
    client = make_client(args, reconnect=False)
    await _connect(client)
    async with client:
        save_session(args.session, client)
        records, more = await _records(client, args.table, args.limit, args.page_size)
    if not records:
        _emit(out, args.json, {"type": "client.history", "rounds": 0}, "no rounds played yet")
    for r in records:
        data = as_map(OkReply(rid="h", result=HistoryPage(rounds=(r,))))["result"]["rounds"][0]
        _emit(out, args.json, {"type": "client.round", **data}, record_line(r))
    if more and not args.json:
        # Only for people: JSON readers get exactly one line per round.
        out.write("(older rounds not shown; --limit all shows every one)\n")
    return 0


def _verification_out(out: TextIO, as_json: bool, v: Verification) -> None:
    mark = "verified" if v.ok else "NOT VERIFIED"
    data = {"type": "client.verified", "table_id": v.table_id, "round": v.round}
    line = f"#{v.round} {v.table_id}: {mark}: {v.detail}"
    _emit(out, as_json, {**data, "ok": v.ok, "detail": v.detail}, line)


def verify_log(lines: Sequence[str], table: str | None) -> list[Verification]:
    """Verify every round with a seed in the JSON lines of ``paigow-cli play --json``."""
    rounds: dict[tuple[str, int], dict[str, Any]] = {}
    for line in lines:
        with contextlib.suppress(ValueError):
            data = json.loads(line)
            if not isinstance(data, dict) or "table_id" not in data or "round" not in data:
                continue
            if table is not None and data["table_id"] != table:
                continue
            entry = rounds.setdefault((data["table_id"], data["round"]), {"dealt": {}, "split": {}})
            kind = data.get("type")
            if kind in ("commitment", "snapshot") and data.get("commitment"):
                entry.setdefault("commitment", data["commitment"])
            if kind == "snapshot" and data.get("your_cards") and data.get("your_seat") is not None:
                entry["dealt"][data["your_seat"]] = data["your_cards"]
            if kind == "cards":
                entry["dealt"][data["seat"]] = data["cards"]
            if kind in ("reveal", "snapshot"):
                for h in data.get("hands", []):
                    entry["split"][h["hand"]] = h["high"] + h["low"]
            if kind == "seed":
                entry["seed"] = data["seed"]
                entry.setdefault("commitment", data["commitment"])
    out = []
    for (table_id, round_no), entry in sorted(rounds.items()):
        if "seed" not in entry:
            continue
        ok, detail, checked = check_deal(
            entry["seed"], entry["commitment"], dealt=entry["dealt"], split=entry["split"]
        )
        out.append(Verification(table_id, round_no, ok, detail, checked))
    return out


async def cmd_verify(args: argparse.Namespace, out: TextIO) -> int:
    """Re-derive logged rounds from their seeds; exit 1 if any check fails."""
    if args.log is not None:
        text = await asyncio.to_thread(Path(args.log).read_text, encoding="utf-8")
        lines = text.splitlines()
        results = verify_log(lines, args.table)
    else:
        client = make_client(args, reconnect=False)
        await _connect(client)
        async with client:
            save_session(args.session, client)
            if args.round is None:
                records, _ = await _records(client, args.table, args.limit)
            else:  # however old it is, not only among the newest --limit
                records = await _find_round(client, args.table, args.round)
                if len(records) > 1 and not args.json:
                    tables = ", ".join(r.table_id for r in records)
                    out.write(
                        f"round {args.round} was played at {len(records)} tables ({tables}): "
                        "each is checked (--table TABLE checks one)\n"
                    )
        results = [verify_record(r) for r in records]
    if args.round is not None:
        results = [v for v in results if v.round == args.round]
    if not results:
        what = f"round {args.round}" if args.round is not None else "any round"
        _emit(out, args.json, {"type": "client.verified", "found": 0}, f"no record of {what}")
        return 2
    for v in results:
        _verification_out(out, args.json, v)
    return 0 if all(v.ok for v in results) else 1


async def cmd_bots(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``--count`` bots (see :mod:`clients.bots`) and print their totals."""
    from clients.bots import run_bots

    tables = args.tables.split(",")
    report = await run_bots(
        args.url, tables, count=args.count, rounds=args.rounds, bet=args.bet, seed=args.seed
    )
    _emit(out, args.json, {"type": "client.bots", **report.as_dict()}, report.summary())
    return 0 if report.ok else 1


# --- parsing ------------------------------------------------------------------------


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default=os.environ.get("PAIGOW_URL", DEFAULT_URL))
    parser.add_argument("--name", help="display name (guests)")
    parser.add_argument("--token", default=os.environ.get("PAIGOW_TOKEN"), help="account token")
    parser.add_argument(
        "--session",
        metavar="NAME|PATH",
        help="the player to be: a session kept as NAME (under "
        f"{session_dir()}) or in the file PATH, resumed by the next run that names it, "
        "even while another client uses it (then this one takes that player over); "
        f"default: {default_session_path().name}, or while another paigow-cli uses it "
        "the next free session-N.json (a new player)",
    )
    parser.add_argument(
        "--no-session",
        dest="keep_session",
        action="store_false",
        help="keep none: a new guest every run",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per line: the protocol's own maps, so seats are numbered "
        "0-5 and cards are card codes, as on the wire (the screen and the text lines "
        "number seats 1-6 and show cards with their suits)",
    )


def _count_or_all(text: str) -> int | None:
    """A positive count, or None for ``all``."""
    if text.strip().lower() == "all":
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number or 'all', not {text!r}")
    return value


def _page_size(text: str) -> int:
    """A history page size the protocol accepts (1..50)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= L.MAX_HISTORY_PAGE:
        raise argparse.ArgumentTypeError(f"expected 1..{L.MAX_HISTORY_PAGE}, not {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand (the interactive table has its own, see main)."""
    parser = argparse.ArgumentParser(prog="paigow-cli", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    play = sub.add_parser("play", help="play rounds without a screen")
    _common(play)
    play.add_argument("--table", required=True)
    play.add_argument("--bet", type=int, required=True)
    play.add_argument("--bonus", type=int, default=0)
    play.add_argument("--rounds", type=int, default=1)
    play.add_argument("--buy-in", type=int)
    play.add_argument("--strategy", choices=STRATEGIES, default="house-way")
    play.add_argument("--seed", type=int, help="seed of the random strategy")
    play.add_argument("--stay", action="store_true", help="keep the seat at the end")
    history = sub.add_parser(
        "history",
        help="your past rounds",
        description="Your past rounds, newest first, read from the server a page at a time.",
    )
    _common(history)
    history.add_argument("--table", help="only this table's rounds")
    history.add_argument(
        "--limit",
        type=_count_or_all,
        default=None,
        metavar="N|all",
        help="how many rounds to show, newest first (default: all, every round the server "
        "keeps for you)",
    )
    history.add_argument(
        "--page-size",
        type=_page_size,
        default=L.MAX_HISTORY_PAGE,
        metavar="N",
        help=f"rounds asked per request, 1..{L.MAX_HISTORY_PAGE} (default: %(default)s); "
        "smaller pages only mean more requests",
    )
    verify = sub.add_parser("verify", help="re-derive rounds from their seeds")
    _common(verify)
    verify.add_argument(
        "round",
        type=int,
        nargs="?",
        help="the round (default: the newest --limit); round numbers are per table, so "
        "without --table every table's round of that number is checked",
    )
    verify.add_argument("--table", help="only this table's rounds")
    verify.add_argument(
        "--limit",
        type=_count_or_all,
        default=50,
        metavar="N|all",
        help="without ROUND, history records to check, newest first (default: "
        "%(default)s); ROUND is looked for in the whole history",
    )
    verify.add_argument("--log", help="a `play --json` log to check, offline")
    bots = sub.add_parser("bots", help="N bots playing (load tests)")
    _common(bots)
    bots.add_argument("--tables", default="jade")
    bots.add_argument("--count", type=int, default=6)
    bots.add_argument("--rounds", type=int, default=3)
    bots.add_argument("--bet", type=int, default=10)
    bots.add_argument("--seed", type=int)
    table = sub.add_parser("table", help="the full-screen table (the default)")
    _common(table)
    table.add_argument("url_arg", nargs="?", metavar="URL")
    return parser


# The full-screen table's libraries come with the package's `cli` extra; the scripted
# commands run without them.
TUI_PACKAGES = ("textual", "rich")
NO_TUI = (
    "paigow-cli: the full-screen table needs Textual, which this installation lacks: "
    "install the package's cli extra (make play, or pip install 'paigow-server[cli]'); "
    "the scripted commands (play, history, verify) run without it"
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``paigow-cli``; returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or args_list[0] not in (*COMMANDS, "-h", "--help"):
        args_list = ["table", *args_list]
    args = build_parser().parse_args(args_list)
    if args.command == "bots":
        return _run(args)
    # The claim (its lock) is held while the command runs: each client its own player.
    args.claim = claim_session(args.session, keep=args.keep_session)
    args.session = args.claim.path
    try:
        if args.claim.note:
            print(f"paigow-cli: {args.claim.note}", file=sys.stderr)
        if args.command == "table":
            try:
                from clients.tui import run_tui
            except ImportError as exc:
                if (exc.name or "").partition(".")[0] not in TUI_PACKAGES:
                    raise  # a fault of ours, not a missing extra
                print(NO_TUI, file=sys.stderr)
                return 2
            if args.url_arg:
                args.url = args.url_arg
            return run_tui(args)
        return _run(args)
    finally:
        args.claim.release()


def _run(args: argparse.Namespace) -> int:
    """Run a scripted command; its errors become exit codes (see the module docstring)."""
    runners = {"play": cmd_play, "history": cmd_history, "verify": cmd_verify, "bots": cmd_bots}
    try:
        return asyncio.run(runners[args.command](args, sys.stdout))
    except ConnectionLost as exc:  # no server reached, or it went away for good
        print(f"paigow-cli: {exc}", file=sys.stderr)
        return 2
    except ClientError as exc:  # a refusal: ServerError, or SessionEnded by the server
        print(f"paigow-cli: {exc}", file=sys.stderr)
        return 1
    except TimeoutError:  # a request unanswered, or a table that stopped moving
        print("paigow-cli: the server did not answer in time", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
