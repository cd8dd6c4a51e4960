"""The session file: a guest's identity kept between runs of ``paigow-cli``.

Every command (the scripted ones and the full-screen table) saves the session's resume
token here once connected, and the next command resumes it, so ``history`` and
``verify`` see the rounds ``play`` played. The file is private to the user (mode 0600):
the resume token is a secret.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from pathlib import Path
from typing import Any

from clients.core import Client


def default_session_path() -> Path:
    """Where the resume token is kept between runs (``$PAIGOW_CLI_SESSION`` overrides)."""
    env = os.environ.get("PAIGOW_CLI_SESSION")
    if env:
        return Path(env)
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "paigow-cli" / "session.json"


def load_session(path: Path | None, url: str) -> dict[str, str]:
    """The saved session for ``url`` ({} if none, unreadable, or for another server)."""
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("url") != url:
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)}


def save_session(path: Path | None, client: Client) -> None:
    """Keep the client's resume token (a secret: the file is private to the user)."""
    if path is None or client.welcome is None or client.resume_token is None:
        return
    data = {
        "url": client.url,
        "resume_token": client.resume_token,
        "player_id": client.welcome.player_id,
        "name": client.welcome.name,
    }
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)


def make_client(args: argparse.Namespace, **options: Any) -> Client:
    """A client for the common options (``url``, ``name``, ``token``, ``session``), resuming
    the saved session of that URL unless an account token is given."""
    session = load_session(args.session, args.url)
    return Client(
        args.url,
        name=args.name or session.get("name"),
        token=args.token,
        resume_token=session.get("resume_token") if args.token is None else None,
        **options,
    )
