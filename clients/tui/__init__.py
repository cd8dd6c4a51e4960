"""The full-screen table, built with Textual, on the same client core as the scripts.

Screens: the lobby (your account balance; tables with their limits, seats and
players; join with a buy-in, or watch), the table (seats, dealer, phase and a live
countdown, chips to build a bet, your seven cards to split, sitting a round out,
the reveal and results, the fairness mark), the history of your rounds (a page at
a time), the table's rules and pay table with the server and protocol versions,
and help (``?`` everywhere). It fits 80x24 and grows with the terminal. Hand names
come from the server (``set_hand``, ``house_way`` and the reveal); while two cards
are being chosen, :mod:`clients.handrank` previews them.

Modules: :mod:`~clients.tui.app` (the app and :func:`run_tui`), :mod:`~clients.tui.base`
(the app as the screens see it), :mod:`~clients.tui.lobby`, :mod:`~clients.tui.table`
with :mod:`~clients.tui.cards`, :mod:`~clients.tui.history`, :mod:`~clients.tui.dialogs`
(help, text pages, the amount prompt), and the stylesheet ``paigow.tcss``.
"""

from __future__ import annotations

from clients.tui.app import PaigowApp, run_tui
from clients.tui.base import PaigowBase
from clients.tui.cards import CardWidget
from clients.tui.dialogs import (
    HELP,
    AmountScreen,
    HelpScreen,
    TextScreen,
    info_text,
    versions_text,
)
from clients.tui.history import HistoryScreen
from clients.tui.lobby import LobbyScreen
from clients.tui.table import TableScreen

__all__ = [
    "HELP",
    "AmountScreen",
    "CardWidget",
    "HelpScreen",
    "HistoryScreen",
    "LobbyScreen",
    "PaigowApp",
    "PaigowBase",
    "TableScreen",
    "TextScreen",
    "info_text",
    "run_tui",
    "versions_text",
]
