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
import os
import sys
from collections.abc import Sequence

from clients.autoplay import STRATEGIES
from clients.core import DEFAULT_URL, ClientError, ConnectionLost
from clients.scripted import cmd_bots, cmd_history, cmd_play, cmd_verify, verify_log
from clients.session_file import claim_session, default_session_path, session_dir
from protocol import limits as L

COMMANDS = ("play", "history", "verify", "bots", "table")
__all__ = ["COMMANDS", "build_parser", "main", "verify_log"]  # verify_log: from scripted


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
