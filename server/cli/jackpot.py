"""``paigow-server jackpot show``: each progressive jackpot's meter, as the store holds it,
with its settings from the tables file; ``jackpot deliver``: finish the hits a process
left between their payment and the player's account (docs/DESIGN.md, "Progressive
jackpots")."""

from __future__ import annotations

import json
from typing import Any

from server.cli.common import open_stores
from server.config import Settings
from server.jackpots_file import load_jackpots


def add_parser(sub: Any, as_json: Any) -> None:
    """``jackpot show [--json]``, ``jackpot deliver``."""
    jackpot = sub.add_parser("jackpot", help="the progressive jackpots' meters")
    actions = jackpot.add_subparsers(dest="action", required=True)
    actions.add_parser(
        "show", parents=[as_json], help="each jackpot's meter, its totals and settings"
    )
    actions.add_parser(
        "deliver", help="deliver the hits left between the meter and the player's account"
    )


async def jackpot(settings: Settings, args: Any) -> int:
    """Run ``jackpot <action>``; exit 0."""
    async with await open_stores(settings) as stores:
        store = stores.jackpots
        if args.action == "deliver":
            print(f"{await store.deliver_pending()} hits delivered")
            return 0
        defined = load_jackpots(settings.tables_file)
        names = sorted(set(defined) | set(await store.names()))
        rows: list[dict[str, Any]] = []
        for name in names:
            meter = await store.read(name)
            options, tables = defined.get(name, (None, ()))
            rows.append(
                {
                    "jackpot": name,
                    "started": meter.started,
                    "meter": meter.meter if meter.started else (options.seed if options else 0),
                    "seeded": meter.seeded,
                    "contributed": meter.contributed,
                    "paid": meter.paid,
                    "hits": meter.hits,
                    "pending": len(await store.pending(name)),
                    "seed": options.seed if options else None,
                    "contribution_bps": options.contribution_bps if options else None,
                    "wager": options.wager if options else None,
                    "tables": list(tables),
                }
            )
        if args.json:
            print(json.dumps(rows))
            return 0
        if not rows:
            print("no jackpots")
            return 0
        print(
            "jackpot\tmeter\tseed\tcontribution\tseeded\tcontributed\tpaid\thits\tpending\ttables"
        )
        for r in rows:
            rate = "-" if r["contribution_bps"] is None else f"{r['contribution_bps'] / 100:g}%"
            shown = r["meter"] if r["started"] else f"{r['meter']} (not started)"
            print(
                f"{r['jackpot']}\t{shown}\t{r['seed'] if r['seed'] is not None else '-'}\t{rate}\t"
                f"{r['seeded']}\t{r['contributed']}\t{r['paid']}\t{r['hits']}\t{r['pending']}\t"
                f"{','.join(r['tables']) or '-'}"
            )
        return 0
