"""What a Redis appends to its append-only file, for ``bench/load/driver.py``'s rounds mode.

:func:`reading` takes ``INFO persistence`` (the AOF's size now, and its size after the
last rewrite, which tells a rewrite that happened in between) and the size of the file
being appended to; :func:`breakdown` reads the commands appended between two readings
and adds up their bytes by command and key shape (a table's or a player's name in
braces becomes ``{}``, random ids and numbers ``#``), so that a figure per round says where it goes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_DIGITS = re.compile(rb"\d+")
_HEX = re.compile(rb"[0-9a-f]{8,}")  # random ids (transfers, commits, nodes)
_TAG = re.compile(rb"\{[^}]*\}")


@dataclass(frozen=True, slots=True)
class Reading:
    """One reading: ``current`` (``aof_current_size``), ``base`` (``aof_base_size``),
    ``file``, the file appended to (None if not found), and its size then."""

    current: int
    base: int
    file: Path | None
    file_size: int


async def appended_file(client: Any) -> Path | None:
    """The file Redis appends commands to now: ``dir/appendonly.aof`` up to Redis 6,
    the newest ``*.incr.aof`` of ``appenddirname`` since Redis 7 (and Valkey)."""
    config = await client.config_get("*")
    named = {_text(k): _text(v) for k, v in config.items()}
    folder = Path(named.get("dir", "."))
    name = named.get("appendfilename", "appendonly.aof")
    if "appenddirname" in named:
        found = sorted(
            (folder / named["appenddirname"]).glob(f"{name}.*.incr.aof"),
            key=lambda p: int(p.name.split(".")[-3]),
        )
        return found[-1] if found else None
    path = folder / name
    return path if path.exists() else None


async def reading(client: Any, file: Path | None) -> Reading:
    """The AOF's sizes now (``client``: a redis-py asyncio client)."""
    info = await client.info("persistence")
    if not int(info.get("aof_enabled", 0)):
        raise RuntimeError("this Redis keeps no append-only file")
    return Reading(int(info["aof_current_size"]), int(info["aof_base_size"]), file, _size(file))


def _size(file: Path | None) -> int:
    """The file's size (a stat: nothing to wait for)."""
    return file.stat().st_size if file is not None and file.exists() else 0


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def commands(data: bytes) -> list[tuple[list[bytes], int]]:
    """The commands of a slice of an append-only file (RESP arrays), each with its
    size in bytes; a command cut by the slice's end is left out."""
    out: list[tuple[list[bytes], int]] = []
    i = 0
    while i < len(data) and data[i : i + 1] == b"*":
        start = i
        end = data.find(b"\r\n", i)
        if end < 0:
            break
        count = int(data[i + 1 : end])
        i = end + 2
        args: list[bytes] = []
        for _ in range(count):
            end = data.find(b"\r\n", i)
            if end < 0 or data[i : i + 1] != b"$":
                return out
            length = int(data[i + 1 : end])
            args.append(data[end + 2 : end + 2 + length])
            i = end + 2 + length + 2
        if i > len(data):
            break
        out.append((args, i - start))
    return out


def shape(name: bytes) -> str:
    """A key or field name with its owner (in braces), random ids and numbers left out."""
    return _DIGITS.sub(b"#", _HEX.sub(b"#", _TAG.sub(b"{}", name))).decode(errors="replace")


def breakdown(data: bytes) -> dict[str, tuple[int, int]]:
    """``command key-shape`` -> (count, bytes) of the commands in ``data``; for an
    ``HSET``, one line per field shape besides (``hset key .field``: the bytes of
    the field's name and value)."""
    found: dict[str, tuple[int, int]] = {}

    def add(label: str, size: int) -> None:
        n, total = found.get(label, (0, 0))
        found[label] = (n + 1, total + size)

    for args, size in commands(data):
        name = args[0].decode(errors="replace").lower()
        key = shape(args[1]) if len(args) > 1 and name not in ("multi", "exec") else ""
        add(f"{name} {key}".strip(), size)
        if name == "hset":
            for f in range(2, len(args) - 1, 2):
                add(f"  hset {key} .{shape(args[f])}", len(args[f]) + len(args[f + 1]))
    return found
