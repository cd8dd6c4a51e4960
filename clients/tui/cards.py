"""A card of the player's seven on the table screen, drawn as a small bordered tile."""

from __future__ import annotations

from collections.abc import Callable

from textual.events import Click
from textual.widgets import Static

from clients.text import RED_SUITS, card_label
from protocol.cards import JOKER


class CardWidget(Static):
    """One of your seven cards; click it (or press its number) to pick it for the low hand.

    ``index`` is its place (0..6); a click tells ``on_pick`` the card's number (1..7),
    as the number keys do.
    """

    def __init__(self, index: int, on_pick: Callable[[int], None] | None = None) -> None:
        super().__init__("", classes="card", id=f"card-{index + 1}")
        self.index = index
        self.card: int | None = None
        self.border_title = str(index + 1)
        self._on_pick = on_pick

    def show(self, card: int | None, selected: bool) -> None:
        """Draw ``card`` (None: an empty slot), lifted when selected."""
        self.card = card
        self.set_class(selected, "selected")
        self.set_class(card is None, "empty")
        self.remove_class("red", "black", "joker")
        if card is None:
            self.update("")
            return
        kind = "joker" if card == JOKER else "red" if card & 3 in RED_SUITS else "black"
        self.add_class(kind)
        self.update(card_label(card))

    def on_click(self, event: Click) -> None:
        """Toggle this card in the low hand."""
        if self._on_pick is not None:
            self._on_pick(self.index + 1)
