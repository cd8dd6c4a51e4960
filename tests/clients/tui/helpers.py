"""Helpers of the TUI tests: waiting on the app, moving through the lobby."""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot
from textual.widgets import DataTable

from clients.tui import AmountScreen, LobbyScreen, PaigowApp, TableScreen
from protocol.codec import decode_server
from protocol.vectors import SERVER_TO_CLIENT, load_vectors
from tests.clients.helpers import screen_text
from tests.helpers import until

SIZE = (80, 24)


async def until_app(pilot: Pilot[int], predicate: Callable[[], bool], within: float = 10) -> None:
    """Let the app run until ``predicate()`` holds; fail after ``within`` seconds, showing
    the screen (a fixed pause is either too long or, on a loaded machine, too short)."""
    await until(
        predicate,
        within,
        "the app",
        every=0.05,
        pause=pilot.pause,
        detail=lambda: f"the screen:\n{screen_text(pilot.app)}",
    )


async def press_alone(pilot: Pilot[int], key: str) -> None:
    """Press ``key`` at the table on screen as a key meant alone is pressed: after the
    gap that ends a burst, and nothing more until its own gap has passed (the keys that
    change the seat act only so, clients/tui/keys.py)."""
    screen = pilot.app.screen
    assert isinstance(screen, TableScreen)
    await pilot.pause(screen.KEY_GAP_S)
    await pilot.press(key)
    await until_app(pilot, lambda: not screen.keys.holding)


def lobby_listed(tui: PaigowApp) -> bool:
    """Whether the lobby is on screen with every table in its list (rows to move over)."""
    lobby = tui.screen
    if not (isinstance(lobby, LobbyScreen) and lobby.summaries):
        return False
    return lobby.query_one("#tables", DataTable).row_count == len(lobby.summaries)


async def sit_at(pilot: Pilot[int], tui: PaigowApp, table_id: str) -> TableScreen:
    """From the lobby, move to ``table_id``, join with the default buy-in, await its screen."""
    await until_app(pilot, lambda: lobby_listed(tui))
    lobby = tui.screen
    assert isinstance(lobby, LobbyScreen)
    row = [t.table_id for t in lobby.summaries].index(table_id)
    await pilot.press(*["down"] * row, "j")
    await until_app(pilot, lambda: isinstance(tui.screen, AmountScreen))
    await pilot.press("enter")  # accept the default buy-in
    await until_app(pilot, lambda: isinstance(tui.screen, TableScreen))
    assert isinstance(tui.screen, TableScreen)
    return tui.screen


def vector(name: str) -> object:
    """The server-to-client message of the protocol's test vector ``name``, decoded."""
    for v in load_vectors("messages"):
        if v["direction"] == SERVER_TO_CLIENT and v["name"] == name:
            return decode_server(bytes.fromhex(v["hex"]))
    raise KeyError(name)
