"""A server started with its default settings loads none of the slow libraries of the
features it does not use: aiohttp (the operator's API, the wallet, a JWKS fetched over
HTTP), PyJWT and cryptography (operator JWTs), psycopg (a PostgreSQL archive). Each
costs a restart after a crash part of a second before the node serves again
(docs/DESIGN.md, "Start time").

What is checked is which modules the process loaded, not how long it took: the machine
may be loaded. The real start path is the command line's (``python -m server``), its
module list written at exit by a ``sitecustomize`` put ahead on the path; a node
started with ``--admin-port`` shows the check sees such an import when there is one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.helpers import quick_tables
from tests.server.processes import ROOT, ServerProcess, free_port, server_args

FEATURE_LIBRARIES = ("aiohttp", "jwt", "psycopg", "cryptography")
"""The slow libraries of the features a node runs only when configured."""

# redis looks whether cryptography is installed (for OCSP) by importing the package
# itself, two small modules: what is slow is its primitives (cryptography.hazmat...).
ALLOWED = frozenset({"cryptography", "cryptography.__about__"})

SITECUSTOMIZE = """\
import atexit, json, os, sys

def _write():
    with open(os.environ["LOADED_MODULES_FILE"], "w") as f:
        json.dump(sorted(sys.modules), f)

atexit.register(_write)
"""


def feature_modules(names: list[str]) -> list[str]:
    """The modules among ``names`` of the feature libraries (the allowed two aside)."""
    return sorted(m for m in names if m.split(".")[0] in FEATURE_LIBRARIES and m not in ALLOWED)


def test_importing_the_server_loads_no_feature_library() -> None:
    # What `python -m server` imports before it reads its command line.
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys, server.app, server.cli; print(json.dumps(sorted(sys.modules)))",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert "server.cli" in loaded
    assert feature_modules(loaded) == []


async def started_and_stopped(
    redis_url: str, tmp_path: Path, extra: list[str]
) -> tuple[list[str], str]:
    """Start ``python -m server`` with the defaults (and ``extra``) on ``redis_url``, stop
    it with SIGTERM once it listens: the modules it had loaded, and its output."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    listed = tmp_path / "modules.json"
    tables = tmp_path / "tables.toml"
    tables.write_text(quick_tables("imports"))
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    proc = ServerProcess(
        server_args(redis_url, tables, tmp_path / "data", secret="s" * 32, extra=extra),
        tmp_path / "server.log",
        env={"PYTHONPATH": path, "LOADED_MODULES_FILE": str(listed)},
    )
    try:
        await proc.started()
        proc.terminate()
        assert await proc.exited() == 0, proc.output()[-3000:]
    finally:
        proc.close()
    return json.loads(listed.read_text()), proc.output()


@pytest.mark.asyncio
async def test_a_node_with_the_default_settings_loads_no_feature_library(
    redis_url: str, tmp_path: Path
) -> None:
    loaded, out = await started_and_stopped(redis_url, tmp_path, [])
    # It listened (started() waits for it) with an archive (SQLite, the default's).
    assert "sqlite3" in loaded
    assert feature_modules(loaded) == [], out[-3000:]


@pytest.mark.asyncio
async def test_a_node_with_the_operator_api_loads_aiohttp(redis_url: str, tmp_path: Path) -> None:
    # The check sees a feature's library when the feature is configured.
    loaded, out = await started_and_stopped(redis_url, tmp_path, ["--admin-port", str(free_port())])
    assert "aiohttp.web" in feature_modules(loaded), out[-3000:]
    assert "jwt" not in loaded  # no JWKS: the operator's API takes admin tokens only
