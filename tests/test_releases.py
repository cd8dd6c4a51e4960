"""Releases (docs/DEVELOPING.md, "Releases"): one version, in ``pyproject.toml``, which
the installed server and ``--version`` say, with its section in ``CHANGELOG.md``; the
previous release the upgrade test builds is there too, with its "Upgrading" notes."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

from server.version import SERVER_VERSION
from tests.deploy.releases import PREVIOUS_TAG
from tests.server.processes import ROOT

CHANGELOG = (ROOT / "CHANGELOG.md").read_text()


def _version() -> str:
    version: str = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    return version


def _section(version: str) -> str:
    found = re.search(rf"^## {re.escape(version)} - (.*?)$(.*?)(?=^## |\Z)", CHANGELOG, re.M | re.S)
    assert found is not None, f"CHANGELOG.md has no section for {version}"
    return found.group(2)


def test_the_version_is_written_once_and_said_everywhere() -> None:
    assert _version() == SERVER_VERSION  # the installed package's: make dev installed it
    done = subprocess.run(
        [sys.executable, "-m", "server", "--version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(rf"paigow-server {re.escape(_version())} \(commit \S+\)\n", done.stdout)


def test_the_changelog_has_this_release_and_the_previous_one() -> None:
    this = _section(_version())
    assert f"### Upgrading from {PREVIOUS_TAG.removeprefix('v')}" in this
    _section(PREVIOUS_TAG.removeprefix("v"))
    headings = re.findall(r"^## (\d+\.\d+\.\d+) - ", CHANGELOG, re.M)
    numbers = [tuple(int(n) for n in h.split(".")) for h in headings]
    assert numbers == sorted(numbers, reverse=True), "newest first"
