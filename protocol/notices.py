"""The server's messages that belong to no table: they carry no ``table_id`` nor
``seq``, and go only to connections that asked for them (minor 7).

``PROTOCOL.md`` gives the meaning and sender of each; the constraints are in the
annotations (see :mod:`protocol.schema`).
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.structs import Chips, Name


@dataclass(frozen=True, slots=True)
class JackpotChange:
    """Jackpot ``name``'s meter is now ``meter`` chips (after ``watch_jackpots``)."""

    TYPE = "jackpot"
    name: Name
    meter: Chips


Notice = JackpotChange
NOTICES: tuple[type[Notice], ...] = (JackpotChange,)
