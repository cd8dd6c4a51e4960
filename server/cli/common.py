"""What the operator's commands share: a duration argument, the stores on the server's
Redis and its archive (found as :mod:`server.cli` says), the server's token secret, and
the text of a listing."""

from __future__ import annotations

import argparse
import contextlib
import getpass
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Sequence

from server.app import SECRET_FILE, token_secret
from server.archive import Archive
from server.config import Settings
from server.store import NotTheServers, Stores, open_command_stores

_TTL = re.compile(r"^(\d+)([smhd]?)$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def ttl(text: str) -> int:
    """A ``--ttl`` in seconds: ``90s``, ``30m``, ``12h``, ``7d`` or a bare number."""
    match = _TTL.match(text.strip())
    if not match or int(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration like 90s, 30m, 12h or 7d")
    return int(match.group(1)) * _UNITS[match.group(2)]


def say(text: str) -> None:
    """A line for the operator about what the command acts on (standard error, so that
    standard output stays the command's answer)."""
    print(f"paigow-server: {text}", file=sys.stderr, flush=True)


async def open_stores(settings: Settings) -> Stores:
    """The stores on the server's Redis, found as the package docstring says, said which."""
    return await open_command_stores(settings, say)


@contextlib.asynccontextmanager
async def open_archive(settings: Settings, *, create: bool) -> AsyncIterator[Archive | None]:
    """The archive (None: off; nor, unless ``create``, a SQLite file never written)."""
    target = settings.archive_target()
    archive = Archive(target) if target is not None else None
    if archive is not None and not create and not archive.exists():
        archive = None
    try:
        yield archive
    finally:
        if archive is not None:
            await archive.close()


def server_secret(settings: Settings) -> bytes:
    """The server's token secret: ``--token-secret``, else the one it keeps in its data
    folder (never a new one: tokens signed with it would be refused by the server)."""
    if not settings.token_secret:
        path = (settings.data_dir / SECRET_FILE).resolve()
        if not path.exists():
            raise NotTheServers(
                f"no token secret in {path.parent}: give the server's secret "
                "(--token-secret or PAIGOW_TOKEN_SECRET) or its data folder (--data-dir or "
                "PAIGOW_DATA_DIR), or the token would be refused"
            )
        say(f"signing with the secret kept in {path}")
    return token_secret(settings)


def table_text(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns under a header, numbers (the last column) aligned right."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(
            [
                *(c.ljust(w) for c, w in zip(row[:-1], widths, strict=False)),
                row[-1].rjust(widths[-1]),
            ]
        )
        for row in [header, *rows]
    ]
    return "\n".join(lines)


def when(epoch_s: int) -> str:
    """A moment as ISO 8601, UTC, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch_s))


def whoami() -> str:
    """The operator's login name (their uid if it has none), for ``by`` on the ledger."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return str(os.getuid())
