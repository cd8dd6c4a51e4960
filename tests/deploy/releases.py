"""The previous release, built from this repository's own history for the upgrade test.

:data:`PREVIOUS_TAG` names it and :data:`PREVIOUS_COMMIT` is the commit that tag points
at, kept here so that a clone without tags builds it all the same. Cutting a release
moves both to the release just cut (docs/DEVELOPING.md, "Releases"). The build is the
tree of that commit (``git archive``) with a virtualenv made by the project's pinned uv
from that tree's own ``uv.lock``, cached under the temporary folder by commit: the first
build downloads what uv has not cached yet, later ones take a second or two.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.server.processes import ROOT

PREVIOUS_TAG = "v0.1.0"
PREVIOUS_COMMIT = "677431afb68b710343a53747f677abc8beafeceb"

BUILD_WITHIN_S = 600.0


class ReleaseUnavailable(RuntimeError):
    """The checkout has neither the tag nor the commit (a shallow clone, say)."""


@dataclass(frozen=True, slots=True)
class Release:
    """A release's source tree and the Python of its own virtualenv."""

    commit: str
    source: Path
    python: Path


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, timeout=120, check=False
    )


def resolve(tag: str = PREVIOUS_TAG, commit: str = PREVIOUS_COMMIT) -> str:
    """The commit to build: the tag's, if the checkout has the tag, else the recorded
    ``commit`` (a clone that fetched no tags). A tag that names another commit than the
    recorded one is an error: one of the two was moved by mistake."""
    found = _git("rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}")
    if found.returncode == 0:
        sha = found.stdout.decode().strip()
        if sha != commit:
            raise AssertionError(f"{tag} is {sha}, but tests/deploy/releases.py records {commit}")
        return sha
    if _git("cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
        raise ReleaseUnavailable(f"neither {tag} nor {commit} is in this checkout")
    return commit


def _uv() -> str:
    pinned = ROOT / ".tools" / "bin" / "uv"
    if pinned.exists():
        return str(pinned)
    found = shutil.which("uv")
    if found is None:
        raise AssertionError("no uv: make dev installs the pinned one in .tools")
    return found


def build(commit: str) -> Release:
    """The release of ``commit``, built once per machine (a lock keeps parallel test
    workers from building it twice at once); a build cut off half-way is started over."""
    cache = Path(tempfile.gettempdir()) / f"paigow-release-{commit[:12]}"
    cache.mkdir(parents=True, exist_ok=True)
    source, venv, done = cache / "src", cache / "venv", cache / "built"
    with (cache / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(source, ignore_errors=True)
            shutil.rmtree(venv, ignore_errors=True)
            source.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", "--format=tar", commit],
                capture_output=True,
                timeout=120,
                check=True,
            )
            subprocess.run(
                ["tar", "-x", "-C", str(source)], input=archive.stdout, timeout=120, check=True
            )
            env = {
                **os.environ,
                "UV_PROJECT_ENVIRONMENT": str(venv),
                "UV_PYTHON": getattr(sys, "_base_executable", sys.executable),
                "UV_PYTHON_DOWNLOADS": "never",
            }
            env.pop("VIRTUAL_ENV", None)
            synced = subprocess.run(
                [_uv(), "sync", "--locked", "--no-dev", "--no-editable"],
                cwd=source,
                env=env,
                capture_output=True,
                text=True,
                timeout=BUILD_WITHIN_S,
                check=False,
            )
            if synced.returncode != 0:
                raise AssertionError(f"building {commit} failed:\n{synced.stdout}{synced.stderr}")
            done.write_text(commit)
    return Release(commit, source, venv / "bin" / "python")


def previous_release() -> Release:
    """The previous release, built (see the module docstring)."""
    return build(resolve())
