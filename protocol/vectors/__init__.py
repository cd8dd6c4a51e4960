"""Language-neutral test vectors of the protocol (JSON files beside this module).

``messages.json`` holds valid frames: ``name``, ``direction`` (``client->server`` or
``server->client``), ``hex`` (the frame's bytes), ``message`` (the decoded map as
JSON) and ``canonical`` (whether encoding ``message`` gives exactly ``hex``).
``errors.json`` holds invalid frames: ``name``, ``direction``, ``hex``, ``error`` (the
error code a decoder must report), ``exception`` (this package's exception class) and
``note``. ``generate.py`` writes both files from :mod:`protocol.examples`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

VECTORS_DIR: Final = Path(__file__).resolve().parent
CLIENT_TO_SERVER: Final = "client->server"
SERVER_TO_CLIENT: Final = "server->client"


def load_vectors(name: str) -> list[dict[str, Any]]:
    """The vectors of ``messages`` or ``errors``."""
    with (VECTORS_DIR / f"{name}.json").open(encoding="utf-8") as f:
        data: list[dict[str, Any]] = json.load(f)["vectors"]
    return data
