"""The package's metadata: pyproject.toml as the build backend reads it."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

READ = """
import warnings
from setuptools.config.pyprojecttoml import apply_configuration
from setuptools.dist import Distribution

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    dist = apply_configuration(Distribution(), "pyproject.toml")
print(dist.metadata.license_expression)
print(" ".join(dist.metadata.license_files or ()))
for warning in caught:
    print(f"WARNING {warning.category.__name__}: {warning.message}")
"""


def test_the_metadata_reads_without_a_warning() -> None:
    """The license is an SPDX expression with its file, as setuptools 77 and later ask:
    the table form printed a deprecation warning at every install."""
    done = subprocess.run(
        [sys.executable, "-c", READ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["MIT", "LICENSE"], done.stdout
    assert lines[2:] == [], done.stdout  # no warning
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


def _one(pattern: str, text: str, where: str) -> str:
    found = re.findall(pattern, text, re.MULTILINE)
    assert len(found) == 1, f"{where}: {found}"
    return str(found[0])


def test_one_uv_version_everywhere() -> None:
    """The Makefile installs uv ``UV_VERSION``, pyproject.toml's ``required-version``
    refuses any other, and the image installs its ``ARG UV_VERSION``: one bumped without
    the others breaks ``make`` (uv refuses to run) or builds the image with another uv."""
    makefile = _one(
        r"^UV_VERSION\s*:?=\s*(\S+)\s*$", (ROOT / "Makefile").read_text(), "Makefile UV_VERSION"
    )
    with (ROOT / "pyproject.toml").open("rb") as f:
        required = tomllib.load(f)["tool"]["uv"]["required-version"]
    dockerfile = _one(
        r"^ARG UV_VERSION=(\S+)\s*$",
        (ROOT / "deploy" / "Dockerfile").read_text(),
        "deploy/Dockerfile ARG UV_VERSION",
    )
    assert re.fullmatch(r"\d+\.\d+\.\d+", makefile), makefile
    assert required == f"=={makefile}"
    assert dockerfile == makefile
