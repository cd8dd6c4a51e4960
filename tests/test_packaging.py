"""The package's metadata: pyproject.toml as the build backend reads it."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
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


# Imports the store's scripts from the unpacked wheel alone (put first on the path, before
# the checkout's editable install) and prints where they came from and how many there are.
LOAD_FROM_WHEEL = """
import sys
sys.path.insert(0, sys.argv[1])
import server.store.lua
from server.store.lua import accounts, archive, guests, nodes, tables
print(server.store.lua.__file__)
print(server.store.lua.load.cache_info().currsize)
"""


def test_the_wheel_ships_every_file_of_the_packages(tmp_path: Path) -> None:
    """Every file of the packages but documents is in the built wheel: the Lua scripts
    (server/store/lua/**/*.lua), the static files, the shipped tables; and the scripts
    load from the wheel alone, the way an installed server reads them."""
    source = tmp_path / "source"
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, source / name)
    for package in ("server", "protocol", "clients"):
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    built = subprocess.run(
        [sys.executable, "-c", "from setuptools import build_meta; build_meta.build_wheel('dist')"],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (source / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = set(archive.namelist())
        archive.extractall(tmp_path / "installed")
    files = {
        path.relative_to(source).as_posix()
        for package in ("server", "protocol", "clients")
        for path in (source / package).rglob("*")
        if path.is_file() and path.suffix != ".md"
    }
    assert files - shipped == set()
    scripts = {name for name in files if name.endswith(".lua")}
    assert len(scripts) >= 20, scripts  # the store's scripts are among them

    done = subprocess.run(
        [sys.executable, "-c", LOAD_FROM_WHEEL, str(tmp_path / "installed")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    where, count = done.stdout.split()
    assert Path(where).is_relative_to(tmp_path / "installed")
    assert int(count) == len(scripts)  # every file read once (a fragment too)
