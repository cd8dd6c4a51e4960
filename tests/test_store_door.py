"""The store's front door holds: import-linter's contracts (``pyproject.toml``,
``make lint``) fail when a module outside ``server.store`` imports ``redis`` or one of
the store's own modules.

Run on a copy of the packages with such an import added: the contracts are the ones
``make lint`` checks, and this shows they catch what they are there to catch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_with(tmp_path: Path, module: str, lines: str) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on a copy of the packages where ``module`` (a path under the
    copy) ends with ``lines``."""
    for package in ("server", "protocol", "clients"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    path = tmp_path / module
    path.write_text(path.read_text() + lines)
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_contracts_hold_on_the_tree_as_it_is(tmp_path: Path) -> None:
    done = lint_with(tmp_path, "server/gateway/gateway.py", "")
    assert done.returncode == 0, done.stdout + done.stderr


def test_redis_or_a_store_module_outside_the_store_breaks_them(tmp_path: Path) -> None:
    done = lint_with(
        tmp_path,
        "server/gateway/gateway.py",
        "\nfrom redis.exceptions import RedisError\nfrom server.store.keys import Keys\n",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Only server.store imports redis BROKEN" in done.stdout
    assert "- server.gateway.gateway -> redis" in done.stdout
    assert "only the package BROKEN" in done.stdout
    assert "- server.gateway.gateway -> server.store.keys" in done.stdout
