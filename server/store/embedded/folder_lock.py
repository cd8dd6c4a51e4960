"""One embedded Redis per data folder: the lock file, held by the server and its child.

The lock (``flock`` on ``.lock`` in the folder) is taken by the process that starts the
embedded ``redis-server``, and the child inherits it: the lock is free only once both
have exited. A server killed with SIGKILL leaves its Redis exiting on its own (the
kernel sends it SIGTERM), and that Redis, as it exits, removes its unix socket and
syncs its append-only file: a new server that started its own Redis in the same folder
meanwhile would lose its socket (operators' commands then fail with "No such file")
and share the append-only file with a dying process. So a new server waits for the
lock instead (bounded), and only an owner that is still alive makes the folder "in
use" at once.

The lock file holds the owner's process id and, once started, its Redis's, so that a
process waiting for it can say whom it waits for.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import signal
from pathlib import Path
from typing import IO

log = logging.getLogger(__name__)


class FolderInUse(RuntimeError):
    """Another live process holds the data folder's lock."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


class FolderLock:
    """The lock of one data folder (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / ".lock"
        self._file: IO[bytes] | None = None
        self._told: int | None = None  # the Redis already told to stop (once)

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._file is not None

    def fileno(self) -> int:
        """The lock's descriptor, for the child to inherit (``pass_fds``)."""
        assert self._file is not None
        return self._file.fileno()

    def try_take(self) -> bool:
        """Take the lock if it is free: True. False if the previous owner died and its
        Redis still holds the lock (it is exiting: wait and try again). Raises
        :class:`FolderInUse` if the owner is alive (or unknown).
        """
        if self._file is not None:
            return True
        # Not "wb": truncating would erase the current holder's record.
        lock = self.path.open("a+b")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            owner, redis_pid = self._holders(lock)
            lock.close()
            if owner is None or owner == os.getpid() or _alive(owner):
                raise FolderInUse(f"{self.path.parent} is in use by another process") from None
            self._hurry(redis_pid)
            return False
        self._file = lock
        self._write(os.getpid(), None)
        return True

    def started(self, redis_pid: int) -> None:
        """Record the Redis started under the lock."""
        self._write(os.getpid(), redis_pid)

    def release(self) -> None:
        """Let the lock go (the child's copy goes with the child)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def waiting_for(self) -> int | None:
        """The Redis process that holds the lock although its owner died, if known."""
        with contextlib.suppress(OSError), self.path.open("rb") as f:
            return self._holders(f)[1]
        return None

    @staticmethod
    def _holders(lock: IO[bytes]) -> tuple[int | None, int | None]:
        lock.seek(0)
        words = lock.read(64).split()
        try:
            owner = int(words[0]) if words else None
            redis_pid = int(words[1]) if len(words) > 1 else None
        except ValueError:
            return None, None
        return owner, redis_pid

    def _write(self, owner: int, redis_pid: int | None) -> None:
        assert self._file is not None
        self._file.seek(0)
        self._file.truncate()
        self._file.write(f"{owner} {redis_pid or ''}\n".encode())
        self._file.flush()

    def _hurry(self, redis_pid: int | None) -> None:
        """Tell the dead owner's Redis to stop, once (Linux did already; elsewhere
        nobody did), and say that we wait for it."""
        if redis_pid is None or redis_pid == self._told:
            return
        self._told = redis_pid
        log.warning("waiting for the previous server's redis-server (pid %d) to exit", redis_pid)
        with contextlib.suppress(OSError):
            os.kill(redis_pid, signal.SIGTERM)
