"""A real PostgreSQL server for the tests, started and removed by them.

``initdb`` and ``pg_ctl`` from the ``PATH``, ``PAIGOW_PG_BIN`` or Debian's
``/usr/lib/postgresql/<version>/bin`` (``make test`` installs the ``postgresql``
package when missing: ``install_postgres.sh``). The cluster lives in a temporary
folder and listens only on a unix socket there (no TCP port); PostgreSQL refuses to
run as root, so as root it runs as the unprivileged ``nobody`` (through ``runuser``).
Each test gets a database of its own.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import psycopg

from tests.helpers import system_command

USER = "paigow"
_UNPRIVILEGED = "nobody"


def find_bin() -> Path:
    """The folder of ``initdb``, ``pg_ctl`` and ``postgres``."""
    given = os.environ.get("PAIGOW_PG_BIN")
    if given:
        return Path(given)
    found = shutil.which("pg_ctl")
    if found is not None and shutil.which("initdb") is not None:
        return Path(os.path.realpath(found)).parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    if not versions:
        raise RuntimeError(
            "no PostgreSQL server found: run `make postgres` (Debian's postgresql package) "
            "or set PAIGOW_PG_BIN"
        )
    return versions[-1].parent


class LocalPostgres:
    """A PostgreSQL cluster in a temporary folder, on a unix socket only."""

    def __init__(self) -> None:
        self.bin = find_bin()
        self.root = Path(tempfile.mkdtemp(prefix="paigow-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        self.as_root = os.geteuid() == 0
        self._names = itertools.count(1)

    def _run(self, args: Sequence[str], timeout: float = 60) -> None:
        command = [str(self.bin / args[0]), *args[1:]]
        if self.as_root:
            runuser = system_command("runuser")
            if runuser is None:
                raise RuntimeError("runuser (util-linux) is missing: it runs PostgreSQL as nobody")
            command = [runuser, "-u", _UNPRIVILEGED, "--", *command]
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, check=False, cwd=self.root
        )
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(args[:2])} failed: {done.stderr}\n{log}")

    def start(self) -> None:
        """initdb, then start the server and wait until it accepts connections."""
        if self.as_root:
            shutil.chown(self.root, _UNPRIVILEGED, None)
        self._run(["initdb", "-D", str(self.data), "-U", USER, "-A", "trust", "-E", "UTF8"])
        self._run(
            [
                "pg_ctl",
                "-D",
                str(self.data),
                "-l",
                str(self.log),
                "-w",
                "-t",
                "60",
                "-o",
                f"-k {self.root} -c listen_addresses='' -c fsync=off",
                "start",
            ]
        )

    def stop(self) -> None:
        """Stop the server at once and remove its folder."""
        with contextlib.suppress(Exception):
            self._run(["pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop"])
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        """The URL of ``database`` on this server (through its socket)."""
        return f"postgresql://{USER}@/{database}?host={self.root}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        name = f"t{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)


@contextlib.contextmanager
def local_postgres() -> Iterator[LocalPostgres]:
    """A started :class:`LocalPostgres`, stopped and removed afterwards."""
    server = LocalPostgres()
    try:
        server.start()
        yield server
    finally:
        server.stop()
