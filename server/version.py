"""The server's version: the installed package's, so that it is written in one place
(``pyproject.toml``); and the commit it was built from, when known."""

from __future__ import annotations

import argparse
import functools
import os
import re
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

try:
    SERVER_VERSION = version("paigow-server")
except PackageNotFoundError:  # run from a source tree that was never installed
    SERVER_VERSION = "0+unknown"

COMMIT_ENV = "PAIGOW_BUILD_COMMIT"
"""Set by whoever builds an image or a package from a checkout (the Dockerfile's build
argument of that name): the commit the build came from."""

_SHA = re.compile(r"[0-9a-f]{7,40}")


@functools.cache
def build_commit() -> str:
    """The commit this server was built from: :data:`COMMIT_ENV` if set, else the
    checkout's own ``HEAD`` when run from a git checkout, else ``unknown``."""
    named = os.environ.get(COMMIT_ENV, "").strip()
    if named:
        return named
    checkout = Path(__file__).resolve().parents[1]
    if not (checkout / ".git").exists():
        return "unknown"
    try:
        done = subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and _SHA.fullmatch(sha) else "unknown"


def add_version_flag(parser: argparse.ArgumentParser) -> None:
    """``--version``: print the release (:data:`SERVER_VERSION`) and the commit, and exit."""

    class _Version(argparse.Action):
        def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
            print(f"{parser.prog} {SERVER_VERSION} (commit {build_commit()})")
            parser.exit()

    parser.add_argument(
        "--version", action=_Version, nargs=0, help="print the release and commit, then exit"
    )
