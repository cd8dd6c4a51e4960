"""The table's rule for typed keys (clients/tui/keys.py): a shell command typed into the
table's window does nothing; a key meant for the table acts. The rule with given times,
then at a real table."""

from __future__ import annotations

import re

import pytest

from clients.core import Client
from clients.tui import PaigowApp, TableScreen
from clients.tui.dialogs import ConfirmScreen
from clients.tui.keys import KeyGuard, Kind, Verdict
from server.app import App
from tests.clients.helpers import screen_text
from tests.clients.tui.helpers import SIZE, press_alone, sit_at, until_app
from tests.helpers import url

P, E, A, U = Kind.PLAIN, Kind.ENTER, Kind.ALONE, Kind.UNKNOWN


def _typed(guard: KeyGuard, keys: list[tuple[str, Kind, float]]) -> list[Verdict]:
    return [guard.press(key, kind, at, "what it does").verdict for key, kind, at in keys]


def test_a_typed_ls_and_enter_does_nothing() -> None:
    guard = KeyGuard(0.3)
    verdicts = _typed(guard, [("l", A, 10.0), ("s", P, 10.1), ("enter", E, 10.2)])
    assert verdicts == [Verdict.HOLD, Verdict.DROP, Verdict.DROP]
    assert guard.due(11.0) is None  # the held l was dropped by the s
    # After a pause, a key alone acts again.
    assert _typed(guard, [("l", A, 12.0)]) == [Verdict.HOLD]
    assert guard.due(12.2) is None  # not yet: the gap after it has not passed
    assert guard.due(12.31) == "l"
    assert guard.due(13.0) is None  # once


def test_an_unknown_key_spoils_its_burst_and_says_so() -> None:
    guard = KeyGuard(0.3)
    first = guard.press("c", U, 1.0)
    assert first.verdict is Verdict.DROP
    assert first.hint == "'c' is not a key at the table: ? lists them"
    # "cd .." and Enter: every key after it in the burst is dropped, Enter too.
    assert _typed(guard, [("3", P, 1.1), ("enter", E, 1.2)]) == [Verdict.DROP] * 2
    assert guard.press("escape", Kind.FREE, 1.25).verdict is Verdict.ACT  # always
    assert _typed(guard, [("3", P, 2.0), ("enter", E, 2.1)]) == [Verdict.ACT] * 2


def test_chips_then_enter_bet_at_once_but_a_seat_key_needs_to_be_alone() -> None:
    guard = KeyGuard(0.3)
    assert _typed(guard, [("2", P, 1.0), ("3", P, 1.05), ("enter", E, 1.1)]) == [Verdict.ACT] * 3
    late = guard.press("l", A, 1.2, "leave")  # right after Enter: typed with it
    assert late.verdict is Verdict.DROP
    assert late.hint == "l (leave) acts only pressed alone: not done"
    held = guard.press("x", A, 5.0)
    assert held.verdict is Verdict.HOLD
    interrupted = guard.press("up", Kind.OTHER, 5.1)  # types nothing: not counted
    assert interrupted.verdict is Verdict.ACT
    assert guard.due(5.31) == "x"


@pytest.mark.asyncio
async def test_a_shell_command_typed_at_the_table_leaves_nothing_done(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ls`` and Enter, then ``cd ..`` and Enter, with a bet built: still seated, no bet
    placed, and a word saying why; then ``l`` alone leaves."""
    # A second between keys of a burst: the pilot's keys of one press are well within
    # it on a loaded machine, and the test's pauses well beyond.
    monkeypatch.setattr(TableScreen, "KEY_GAP_S", 1.0)
    tui = PaigowApp(Client(url(app), name="Kit"))
    async with tui.run_test(size=SIZE) as pilot:
        table = await sit_at(pilot, tui, "slow")
        model = table.model
        await until_app(pilot, lambda: table.info is not None and model.my_seat is not None)
        await pilot.press("3")
        assert table.pending_bet == 25
        await pilot.pause(1.2)
        await pilot.press("l", "s", "enter")
        await until_app(pilot, lambda: "l (leave) was not pressed alone" in screen_text(tui))
        await pilot.pause(1.2)  # the time l would have waited to act
        await pilot.press("c", "d", "space", "full_stop", "full_stop", "enter")
        await until_app(pilot, lambda: "'c' is not a key at the table" in screen_text(tui))
        await pilot.pause(1.2)
        assert model.my_seat is not None  # not left
        assert model.my_seat.bet == 0  # nothing placed
        assert table.pending_bet == 25
        await pilot.press("l")
        await until_app(pilot, lambda: model.your_seat is None)


@pytest.mark.asyncio
async def test_q_at_the_table_quits(app: App) -> None:
    """``q`` quits from a table as from the lobby (it did nothing there); with a bet in
    the round being played, it asks first."""
    tui = PaigowApp(Client(url(app), name="Quin"))
    async with tui.run_test(size=SIZE) as pilot:
        table = await sit_at(pilot, tui, "slow")
        model = table.model
        await until_app(pilot, lambda: table.info is not None and model.my_seat is not None)
        await pilot.press("3", "enter")  # the only player: betting closes, cards come
        await until_app(pilot, lambda: model.phase == "setting" and bool(model.your_cards))
        await press_alone(pilot, "q")
        await until_app(pilot, lambda: "Your bet of 25 is in this round" in _words(tui))
        await pilot.press("n")
        await until_app(pilot, lambda: tui.screen_stack[-1] is table)
        assert tui.return_code is None
        await press_alone(pilot, "w")  # the house way sets the hand; the round ends
        await until_app(pilot, lambda: model.phase in ("idle", "betting"), within=30)
        await press_alone(pilot, "q")  # no bet in play: at once
        await until_app(pilot, lambda: tui.return_code == 0)
        assert not any(isinstance(s, ConfirmScreen) for s in tui.screen_stack)


def _words(tui: PaigowApp) -> str:
    return " ".join(re.sub("[│┃]", " ", screen_text(tui)).split())
