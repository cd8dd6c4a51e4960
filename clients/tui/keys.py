"""The table's rule for typed keys: a key acts when it was meant for the table, not when
it is part of something typed into the wrong window.

Every letter of a shell command typed at the table used to be a table key: ``ls`` and
Enter left the seat, asked the house way and set the hand. The rule, over *bursts* (a
key pressed within :attr:`KeyGuard.gap_s` of the one before belongs to its burst):

- A printable key the table does not know shows a hint, and spoils its burst: the keys
  after it in the same burst are not taken.
- The keys that change the seat, the round or the session (:attr:`Kind.ALONE`: leave,
  cash out, rebuy, sit out, rebet, clear, the house way's setting, quit) act only when
  pressed alone: no key in the gap before them, none in the gap after (they wait that
  long before acting). Another key in that time drops them, with a hint, and spoils the
  burst.
- Enter (place the bet built, set the hand picked) acts at once, after chip or card keys
  too ("3" then Enter bets), unless its burst is spoiled.
- The other table keys (chips, cards, the bonus toggle, the suggestion, rules, history)
  act at once unless their burst is spoiled; Escape and ``?`` always act: they only
  leave the screen or show the keys. Keys that type nothing (arrows, Tab) are not
  counted.

Pure: the times are given, so the rule is checked without a terminal.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass
from enum import Enum

from textual.binding import Binding, BindingType


class Kind(Enum):
    """What a key is to the table."""

    FREE = "free"  # always acts (Escape, ?)
    PLAIN = "plain"  # acts at once unless its burst is spoiled
    ENTER = "enter"  # acts at once unless its burst is spoiled; the burst's last word
    ALONE = "alone"  # acts only pressed alone
    UNKNOWN = "unknown"  # printable, not a table key: a hint, and its burst is spoiled
    OTHER = "other"  # types nothing (arrows, Tab): not counted


class Verdict(Enum):
    """What to do with a key now."""

    ACT = "act"
    HOLD = "hold"  # an ALONE key: act after the gap if no key comes (:meth:`KeyGuard.due`)
    DROP = "drop"


@dataclass(frozen=True)
class Decision:
    """A key's verdict, and a hint for the player (None: nothing to say)."""

    verdict: Verdict
    hint: str | None = None


TYPED_TOGETHER = "keys typed together are not taken at the table (? lists the keys)"


class KeyGuard:
    """The rule above for one screen's keys; ``gap_s``: the most time between two keys of
    one burst, and the quiet an ALONE key needs on each side."""

    def __init__(self, gap_s: float) -> None:
        self.gap_s = gap_s
        self._last: float | None = None  # when the last counted key came
        self._spoiled = False  # the current burst's keys are not taken
        self._held: tuple[str, str] | None = None  # an ALONE key waiting: (key, what it does)

    def press(self, key: str, kind: Kind, now: float, does: str = "") -> Decision:
        """A key pressed at ``now`` (seconds, monotonic); ``does``: what the key does, in
        a word or two, for the hints (``leave``)."""
        if kind is Kind.OTHER:
            return Decision(Verdict.ACT)
        in_burst = self._last is not None and now - self._last < self.gap_s
        self._last = now
        if not in_burst:
            self._spoiled = False
        hint: str | None = None
        if self._held is not None:  # a key came in the held key's gap: it was not alone
            held, held_does = self._held
            self._held = None
            self._spoiled = True
            hint = f"{held}{_does(held_does)} was not pressed alone: not done; {TYPED_TOGETHER}"
        if kind is Kind.FREE:
            return Decision(Verdict.ACT, hint)
        if self._spoiled:
            return Decision(Verdict.DROP, hint)
        if kind is Kind.UNKNOWN:
            self._spoiled = True
            return Decision(Verdict.DROP, f"{key!r} is not a key at the table: ? lists them")
        if kind is Kind.ALONE:
            if in_burst:
                self._spoiled = True
                return Decision(Verdict.DROP, f"{key} ({does}) acts only pressed alone: not done")
            self._held = (key, does)
            return Decision(Verdict.HOLD)
        return Decision(Verdict.ACT)

    @property
    def holding(self) -> bool:
        """Whether an ALONE key waits for the gap after it."""
        return self._held is not None

    def due(self, now: float) -> str | None:
        """The held key, now that the gap after it has passed with no key (then it acts);
        None when there is none, or its gap has not passed yet."""
        if self._held is None or self._last is None or now - self._last < self.gap_s:
            return None
        key, _ = self._held
        self._held = None
        return key

    def forget(self) -> None:
        """Drop a held key (the screen is left)."""
        self._held = None


def _does(what: str) -> str:
    return f" ({what})" if what else ""


def find_binding(key: str, bindings: Iterable[BindingType]) -> Binding | None:
    """The first of ``bindings`` for ``key`` (None: the key is not bound)."""
    for binding in bindings:
        if isinstance(binding, Binding) and key in binding.key.split(","):
            return binding
    return None


def key_kind(
    binding: Binding | None, printable: bool, alone: Set[str], free: Set[str], enter: str
) -> Kind:
    """What a key is to the table, from its binding (None: unbound): ``alone``, ``free``
    and ``enter`` name the actions of :attr:`Kind.ALONE`, :attr:`Kind.FREE` and
    :attr:`Kind.ENTER` keys."""
    if binding is None:
        return Kind.UNKNOWN if printable else Kind.OTHER
    action = binding.action.partition("(")[0]  # "digit(3)": the action digit
    if action in free:
        return Kind.FREE
    if action == enter:
        return Kind.ENTER
    return Kind.ALONE if action in alone else Kind.PLAIN
