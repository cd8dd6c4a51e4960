"""Benchmark of the pure table state machine (issue 4): steps and six-player rounds per second.

A round here is everything a six-seat table does in one round: six bets, the deal,
six players setting their hands, the reveal, the settlement and the next betting
opening, each step producing its messages and ledger entries, as the server runs it.
Run with ``python -m bench.micro.table``.
"""

from __future__ import annotations

import gc
import platform
import time

from protocol.fairness import deal
from server.rules.houseways import house_way
from server.table.events import Event, PlaceBet, SetHand, SitDown, Tick
from server.table.machine import step
from server.table.state import TableConfig, TableState, new_table

ROUNDS = 2_000
CONFIG = TableConfig(table_id="bench", name="Bench", max_buy_in=10**12)


def _seed(n: int) -> bytes:
    return n.to_bytes(32, "big")


def _seated() -> tuple[TableState, int]:
    state, now = new_table(CONFIG), 0
    for i in range(6):
        state = step(state, SitDown(f"p{i}", f"P{i}", i, 10**12, _seed(0)), now).state
    return state, now


def _round(state: TableState, now: int, n: int) -> tuple[TableState, int, int, int]:
    """One whole round; returns the state, the time, steps taken and messages produced."""
    steps = messages = 0

    def go(event: Event) -> None:
        nonlocal state, steps, messages
        t = step(state, event, now)
        state = t.state
        steps += 1
        messages += len(t.events)

    for i in range(6):
        go(PlaceBet(f"p{i}", 100, 10))
    now += CONFIG.dealing_ms
    go(Tick(_seed(n)))
    assert state.seed is not None
    hands = deal(state.seed)
    for i in range(6):
        low = house_way(hands[i], CONFIG.rules.house_way, CONFIG.rules.wheel).low
        go(SetHand(f"p{i}", (low[0], low[1])))
    now += CONFIG.revealing_ms
    go(Tick(_seed(n)))
    now += CONFIG.settling_ms
    go(Tick(_seed(n + 1)))
    return state, now, steps, messages


def main() -> None:
    """Print table steps per second and full six-player rounds per second."""
    state, now = _seated()
    state, now, _, _ = _round(state, now, 0)  # warm-up: builds the rules' tables once
    gc.collect()
    steps = messages = 0
    start = time.perf_counter()
    for n in range(ROUNDS):
        state, now, s, m = _round(state, now, n + 1)
        steps += s
        messages += m
    elapsed = time.perf_counter() - start
    print(f"table state machine ({platform.python_implementation()} {platform.python_version()})")
    print(f"  six-player rounds:  {ROUNDS / elapsed:10,.0f} /s  ({ROUNDS} rounds)")
    print(f"  table steps:        {steps / elapsed:10,.0f} /s  ({steps / ROUNDS:.0f} per round)")
    per_round = messages / ROUNDS
    print(f"  messages out:       {messages / elapsed:10,.0f} /s  ({per_round:.0f} per round)")


if __name__ == "__main__":
    main()
