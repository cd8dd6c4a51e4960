"""Narrowing of redis-py replies (typed ``bytes | str | None``) for a bytes client."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def as_bytes(value: bytes | str) -> bytes:
    """A reply value as bytes."""
    return value.encode() if isinstance(value, str) else bytes(value)


def as_str(value: bytes | str) -> str:
    """A reply value as text (UTF-8)."""
    return value if isinstance(value, str) else bytes(value).decode()


def as_int(value: Any) -> int:
    """A numeric reply (bytes, str or int) as int; None counts as 0."""
    return 0 if value is None else int(value)


StreamEntry = tuple[str, dict[str, bytes]]


def stream_entries(
    reply: Iterable[tuple[bytes | str | None, Mapping[bytes | str, bytes | str] | None]] | None,
) -> list[StreamEntry]:
    """XRANGE / XREVRANGE entries as ``(id, {field: value})`` with text ids and fields."""
    entries: list[StreamEntry] = []
    for entry_id, fields in reply or ():
        if entry_id is None:
            continue
        entries.append(
            (as_str(entry_id), {as_str(k): as_bytes(v) for k, v in (fields or {}).items()})
        )
    return entries
