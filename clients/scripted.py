"""The scripted commands of ``paigow-cli``: ``play`` (rounds without a screen, one line
or JSON object per event), ``history`` (the player's past rounds, a page at a time),
``verify`` (rounds re-derived from their seeds, from the server's history or a ``play
--json`` log) and ``bots``.

Each takes the parsed options and the stream to write to, and returns the exit code;
:mod:`clients.cli` parses the command line and turns their errors into exit codes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from clients.autoplay import play_rounds
from clients.core import Client, ClientError, ClientEvent
from clients.events import Disconnected
from clients.model import Verification, check_deal, verify_record
from clients.session_file import make_client, save_session
from clients.text import describe, note_line, record_line, to_json
from protocol import limits as L
from protocol.codec import as_map
from protocol.messages import OkReply
from protocol.structs import HistoryPage, RoundRecord


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
