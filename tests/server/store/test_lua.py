"""The store's Lua files: each one named by a module or taken in by a script, each
script compiled by the real Redis (the store's tests run them)."""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

import pytest
import redis.asyncio

import server.store.lua
from server.store.lua import INCLUDE, load
from server.store.lua.accounts import DELIVER, DELIVER_MANY

LUA = Path(server.store.lua.__file__).parent


def _files() -> set[str]:
    """Every ``.lua`` file of the package, by the name :func:`load` takes."""
    return {p.relative_to(LUA).with_suffix("").as_posix() for p in LUA.rglob("*.lua")}


def _named_by_modules() -> set[str]:
    """The names the package's modules pass to ``load``, read from their source (a
    run-time record would also hold whatever this test loads)."""
    names: set[str] = set()
    for module in LUA.glob("*/*.py"):  # the folders' modules (the package's is the loader)
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "load":
                (arg,) = node.args
                assert isinstance(arg, ast.Constant), f"{module}: {ast.unparse(node)}"
                assert isinstance(arg.value, str)
                names.add(arg.value)
    return names


def _included() -> set[str]:
    """The fragments the files take in."""
    return {
        line.removeprefix(INCLUDE).strip()
        for path in LUA.rglob("*.lua")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith(INCLUDE)
    }


def test_every_file_is_named_and_every_name_is_a_file() -> None:
    scripts = _named_by_modules()
    fragments = _included()
    assert scripts, "no module names a script"
    assert scripts | fragments == _files()
    # A fragment's name says it is one (a leading '_'), and no module runs one alone.
    assert all(name.rsplit("/", 1)[-1].startswith("_") for name in fragments)
    assert not any(name.rsplit("/", 1)[-1].startswith("_") for name in scripts)


def test_a_fragment_is_taken_in_whole() -> None:
    fragment = load("accounts/_deliver")
    assert fragment.startswith("-- What tables send a player")
    assert fragment.endswith("\n")
    assert fragment + "return deliver(KEYS, ARGV)\n" == DELIVER
    assert DELIVER_MANY.startswith(fragment + "\n-- DELIVER for several players")
    assert INCLUDE not in DELIVER + DELIVER_MANY


def test_every_file_ends_its_last_line() -> None:
    """A fragment taken in without its last newline would run into the next line."""
    for path in LUA.rglob("*.lua"):
        assert path.read_text(encoding="utf-8").endswith("\n"), path


def test_a_name_with_no_file_fails() -> None:
    with pytest.raises(FileNotFoundError):
        load("tables/no_such_script")


@pytest.mark.asyncio
async def test_every_file_compiles_in_redis(redis_client: redis.asyncio.Redis) -> None:
    """SCRIPT LOAD compiles without running: a syntax error anywhere, fragments and the
    scripts that take them in included, is refused here."""
    for name in sorted(_files()):
        text = load(name)
        sha = await redis_client.script_load(text)
        assert sha == hashlib.sha1(text.encode()).hexdigest(), name
