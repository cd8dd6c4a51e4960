"""The client's own version, read from the installed package's metadata.

The client ships in the ``paigow-server`` distribution (with the server and the
protocol), so its version is that distribution's, as ``pyproject.toml`` sets it: one
place to change, and never a copy to forget. The protocol version the client asks for
is not this one: it is :data:`protocol.version.PROTOCOL_VERSION`.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import version
from typing import Final

DISTRIBUTION: Final = "paigow-server"


@cache
def client_version() -> str:
    """The installed version of the client (``paigow-server``'s, e.g. ``0.1.0``)."""
    return version(DISTRIBUTION)


def client_name() -> str:
    """What the client calls itself in ``hello`` and on its screens: ``paigow-cli/VERSION``."""
    return f"paigow-cli/{client_version()}"
