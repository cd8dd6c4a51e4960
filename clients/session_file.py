"""The session file: a guest's identity kept between runs of ``paigow-cli``.

Every command (the scripted ones and the full-screen table) saves the session's resume
token here once connected, and the next command resumes it, so ``history`` and
``verify`` see the rounds ``play`` played. The file is private to the user (mode 0600):
the resume token is a secret.

Each running ``paigow-cli`` is its own player unless asked otherwise. A running client
holds a lock on its session file (released by the system when the process ends, however
it ends); a second client started with the default session while the first runs takes
the next free file (``session-2.json``, ``session-3.json``...), so it is a second player
rather than the first one's taking over (which the server would do: a resumed session
closes the connection that had it, 4005). Naming a session (``--session NAME`` or
``--session PATH``, or ``$PAIGOW_CLI_SESSION``) asks for that one whether or not another
client uses it: that is how a player moves to another terminal.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from clients.core import Client

DEFAULT_NAME = "session"
GUEST_MARKS = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
"""The characters of a guest's default name after ``Guest-``: no 0/O or 1/I to confuse."""
MAX_SLOTS = 99
"""How many default session files there may be (``session.json`` .. ``session-99.json``):
as many players as can play on one machine at once, and then some."""


def session_dir() -> Path:
    """The folder of the session files (``$XDG_STATE_HOME/paigow-cli``)."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "paigow-cli"


def session_path(value: str) -> Path:
    """The file ``--session`` names: a path as it is (it has a ``/`` or ends in
    ``.json``), else a name, kept as ``NAME.json`` in :func:`session_dir`."""
    if os.sep in value or "/" in value or value.endswith(".json"):
        return Path(value)
    return session_dir() / f"{value}.json"


def default_session_path() -> Path:
    """The first default session file (``$PAIGOW_CLI_SESSION`` names another)."""
    env = os.environ.get("PAIGOW_CLI_SESSION")
    if env:
        return session_path(env)
    return session_dir() / f"{DEFAULT_NAME}.json"


@dataclass
class Claim:
    """The session file a client uses, and the lock it holds on it while it runs.

    ``shared`` tells that another running client holds the same file (asked for by
    name): this one takes that player over. ``note`` says, for a person, what was
    chosen and why, when it is not simply the file asked for.
    """

    path: Path | None
    lock: IO[bytes] | None = None
    shared: bool = False
    note: str | None = None

    def release(self) -> None:
        """Let the file go (the process's end does it too)."""
        if self.lock is not None:
            with contextlib.suppress(OSError):
                self.lock.close()
            self.lock = None


def _lock(path: Path) -> tuple[IO[bytes] | None, str | None]:
    """Try the lock of ``path``: (the open lock file, None), or (None, the holder's pid)
    when another process holds it. Raises ``OSError`` when the folder is unusable."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = path.with_name(path.name + ".lock")
    handle = lock_path.open("a+b")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().decode(errors="replace").strip() or "?"
        handle.close()
        return None, holder
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()).encode())
    handle.flush()
    return handle, None


def claim_session(asked: str | None, *, keep: bool = True) -> Claim:
    """The session file for a client: the one ``asked`` for (``--session``), shared if
    another client has it; else the first default file no running client holds.

    ``keep`` false (``--no-session``) claims nothing. A folder that cannot be written
    leaves the client without a session file, as ``--no-session`` would, and says so.
    """
    if not keep:
        return Claim(None)
    named = asked if asked is not None else os.environ.get("PAIGOW_CLI_SESSION") or None
    try:
        if named is not None:
            path = session_path(named)
            lock, holder = _lock(path)
            if lock is not None:
                return Claim(path, lock)
            note = (
                f"{path} is in use by another paigow-cli (pid {holder}): this one takes "
                "that player over, and the other is disconnected"
            )
            return Claim(path, None, shared=True, note=note)
        first = session_dir() / f"{DEFAULT_NAME}.json"
        for slot in range(1, MAX_SLOTS + 1):
            path = first if slot == 1 else first.with_name(f"{DEFAULT_NAME}-{slot}.json")
            lock, holder = _lock(path)
            if lock is None:
                continue
            chosen: str | None = None
            if slot > 1:
                chosen = (
                    f"another paigow-cli is running with {first.name}: this one is another "
                    f"player, kept in {path.name} (--session NAME keeps a player of that "
                    "name; --session PATH takes over the player of that file)"
                )
            return Claim(path, lock, note=chosen)
    except OSError as exc:
        return Claim(None, note=f"no session file ({exc}): this run is a new guest")
    return Claim(None, note=f"{MAX_SLOTS} clients are running: this one is a new guest")


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


def guest_name() -> str:
    """A guest's default name, ``Guest-`` and four random characters (``Guest-7KQ2``): a
    player who gives no ``--name`` is told apart from the others at a table (the server
    would name every one of them "Guest"). Kept in the session file with the resume
    token, so the same player keeps it from run to run."""
    return "Guest-" + "".join(secrets.choice(GUEST_MARKS) for _ in range(4))


def make_client(args: argparse.Namespace, **options: Any) -> Client:
    """A client for the common options (``url``, ``name``, ``token``, ``session``), resuming
    the saved session of that URL unless an account token is given. A guest without a
    name (none given, none saved) gets :func:`guest_name`; an account's name is the
    operator's, so none is made up for it."""
    session = load_session(args.session, args.url)
    name = args.name or session.get("name")
    if name is None and args.token is None:
        name = guest_name()
    return Client(
        args.url,
        name=name,
        token=args.token,
        resume_token=session.get("resume_token") if args.token is None else None,
        **options,
    )
