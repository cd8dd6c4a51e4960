"""``python -m tests.e2e.jackpot_seam ARGS``: the server (``paigow-server ARGS``) with
two test seams, set here only, in this module that ships with the tests and never with
the server (the server itself has no seam to set: a ``python -m server`` given the same
environment deals from its seeds, tests/e2e/test_process_jackpot.py shows it):

- every deal is :data:`RIGGED`: seat 0 holds a natural seven-card straight flush (the
  progressive's top hand), seat 1 nothing that pays;
- with ``PAIGOW_SEAM_KILL`` set, the process kills itself with SIGKILL at that moment of
  a round's jackpot calls, once (the file named by ``PAIGOW_SEAM_KILL_MARK`` says it
  happened; a process of the test finding it goes on): ``after_hit`` right after a hit
  took its share from the meter and before the player's account has it (the win made,
  not yet committed to its player), ``before_calls`` right after the round's own commit
  and before its first call.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

from protocol.cards import JOKER
from server import cli
from server.store import JackpotStore
from server.table import betting

KILL_ENV = "PAIGOW_SEAM_KILL"
MARK_ENV = "PAIGOW_SEAM_KILL_MARK"


def card(rank: int, suit: int) -> int:
    """The code of a card of ``rank`` (2..14) and ``suit`` (0..3)."""
    return (rank - 2) << 2 | suit


TOP = tuple(card(r, 0) for r in range(8, 15))
"""A natural seven-card straight flush, eight to ace of one suit."""
NOTHING = (card(2, 1), card(3, 2), card(4, 3), card(6, 1), card(9, 2), card(11, 3), card(13, 1))
"""Seven cards without a pair, a straight or a flush."""


def _rigged() -> tuple[tuple[int, ...], ...]:
    rest = [c for c in range(JOKER + 1) if c not in TOP and c not in NOTHING]
    others = tuple(tuple(rest[7 * k : 7 * k + 7]) for k in range(5))
    return (TOP, NOTHING, *others)


RIGGED = _rigged()
"""The seven hands of every deal: seats 0..5, then the dealer."""


def _rigged_deal(seed: bytes) -> tuple[tuple[int, ...], ...]:
    return RIGGED


def _die_once(moment: str) -> None:
    if os.environ.get(KILL_ENV) != moment:
        return
    mark = Path(os.environ[MARK_ENV])
    try:
        with mark.open("x") as f:  # one process of the test dies, once
            f.write(str(os.getpid()))
    except FileExistsError:
        return
    os.kill(os.getpid(), signal.SIGKILL)


_hit_step = JackpotStore.hit_step
_contribute = JackpotStore.contribute


async def _hit_step_then(self: JackpotStore, *args: Any, **kwargs: Any) -> Any:
    hit = await _hit_step(self, *args, **kwargs)
    _die_once("after_hit")
    return hit


async def _contribute_after(self: JackpotStore, *args: Any, **kwargs: Any) -> Any:
    if kwargs.get("seat") == 0:  # the winner's round: the test's other table sits at 1
        _die_once("before_calls")
    return await _contribute(self, *args, **kwargs)


if __name__ == "__main__":
    betting.deal = _rigged_deal  # type: ignore[attr-defined]
    JackpotStore.hit_step = _hit_step_then  # type: ignore[method-assign]
    JackpotStore.contribute = _contribute_after  # type: ignore[method-assign]
    sys.exit(cli.main(sys.argv[1:]))
