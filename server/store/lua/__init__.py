"""The store's Lua scripts: one ``.lua`` file each, shipped as package data, in a folder
by job (``tables/``, ``accounts/``, ``guests/``, ``nodes/``, ``archive/``). Each folder's
module names its scripts as constants (``from server.store.lua.tables import COMMIT``),
read by :func:`load`.

Each script receives every key it touches in ``KEYS`` (names come from
:mod:`server.store.keys`; a script never builds one) and runs atomically. A script
that may refuse does all its checks before its first write: Redis does not roll back
a script that fails half-way, so "nothing written" must hold by construction.

Numbers cross into Lua as doubles: every chip amount, version and token stays below
2**53 (the Python side checks amounts), and numbers are formatted with ``%d`` before
being concatenated into strings, because Lua's ``tostring`` keeps only 14 digits.

A file whose name starts with ``_`` is a fragment, never run alone: a script takes it in
by a line ``--#include <name>`` (a Lua comment, so the file reads as Lua as it stands),
which :func:`load` replaces by the fragment's text.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

INCLUDE = "--#include "
"""How a line of a script that takes in a fragment starts; the fragment's name follows."""


@cache
def load(name: str) -> str:
    """The text of the script ``name``: its path in this package, without ``.lua``
    (``"tables/commit"``), with each ``--#include`` line replaced by the text of the
    fragment it names (loaded the same way). Read once, then kept. A name with no file
    raises :class:`FileNotFoundError`, so a module naming a missing script fails when
    it is imported."""
    text = resources.files(__name__).joinpath(f"{name}.lua").read_text(encoding="utf-8")
    return "".join(
        load(line.removeprefix(INCLUDE).strip()) if line.startswith(INCLUDE) else line
        for line in text.splitlines(keepends=True)
    )
