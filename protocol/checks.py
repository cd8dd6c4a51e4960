"""What the compiled decoders call when a value is bad: the slow path of validation.

The decoders that :mod:`protocol.compiler` generates test every field inline and call
one of these only once a test has failed, to build the
:exc:`~protocol.errors.ProtocolError` that names the field (its ``path``) and says
what was expected. The one check on the fast path, :func:`check_extra`, runs only
when a map has keys the schema does not know: their values are ignored but must
still respect the nesting limit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from protocol import limits as L
from protocol.errors import (
    InvalidMessage,
    MissingField,
    NestingTooDeep,
    OutOfRange,
    ProtocolError,
    WrongType,
)

__all__ = [
    "Decoder",
    "check_extra",
    "enum_error",
    "int_error",
    "int_item_error",
    "item_fail",
    "len_error",
    "missing",
    "str_error",
    "type_name",
    "wrong_type",
]

Decoder = Callable[[dict[Any, Any], int], Any]
"""A compiled decoder: ``(map, nesting depth of the map) -> struct``."""


def type_name(value: object) -> str:
    """The wire name of a decoded value's type (``integer``, ``map``...), for messages."""
    names = {bool: "boolean", int: "integer", float: "float", str: "string"}
    names |= {bytes: "binary", tuple: "array", dict: "map", type(None): "nil"}
    return names.get(type(value), type(value).__name__)


def wrong_type(path: str, expected: str, value: object) -> WrongType:
    """The error for ``value`` at ``path`` not being of the ``expected`` wire type."""
    return WrongType(f"expected {expected}, got {type_name(value)}", path)


def int_error(path: str, value: object, lo: int, hi: int) -> InvalidMessage:
    """The error for ``value`` failing an integer field's test: not an integer, or out of range."""
    if type(value) is not int:
        return wrong_type(path, "integer", value)
    return OutOfRange(f"{value} is not in {lo}..{hi}", path)


def int_item_error(path: str, items: tuple[object, ...], lo: int, hi: int) -> InvalidMessage:
    """The error of the first item of ``items`` not an integer in ``lo..hi``, by index."""
    for i, item in enumerate(items):
        if type(item) is not int or not lo <= item <= hi:
            return int_error(f"{path}[{i}]", item, lo, hi)
    return InvalidMessage("invalid item", path)  # unreachable: called only on a bad item


def str_error(path: str, value: object, lo: int, hi: int, hex_: bool) -> InvalidMessage:
    """The error for ``value`` failing a string field's test (type, length, hex digits)."""
    if type(value) is not str:
        return wrong_type(path, "string", value)
    if hex_:
        return OutOfRange(f"expected {lo} lowercase hexadecimal digits", path)
    return OutOfRange(f"length {len(value)} is not in {lo}..{hi}", path)


def enum_error(path: str, value: object, values: tuple[str, ...]) -> InvalidMessage:
    """The error for ``value`` not being one of the strings ``values``."""
    if type(value) is not str:
        return wrong_type(path, "string", value)
    return OutOfRange(f"{value[:32]!r} is not one of {', '.join(values)}", path)


def len_error(path: str, value: tuple[object, ...], lo: int, hi: int) -> OutOfRange:
    """The error for an array whose length is not in ``lo..hi``."""
    return OutOfRange(f"{len(value)} items, expected {lo}..{hi}", path)


def missing(path: str) -> MissingField:
    """The error for a required field absent from its map."""
    return MissingField("required field is missing", path)


def depth_within(value: object, budget: int) -> bool:
    """Whether ``value`` nests containers no deeper than ``budget`` levels."""
    if type(value) is dict:
        if budget < 1:
            return False
        return all(
            depth_within(k, budget - 1) and depth_within(v, budget - 1) for k, v in value.items()
        )
    if type(value) is tuple:
        if budget < 1:
            return False
        return all(depth_within(v, budget - 1) for v in value)
    return True


def check_extra(m: dict[Any, Any], known: frozenset[str], depth: int) -> None:
    """Checks the values of unknown keys (ignored, but still bounded in nesting)."""
    for key, value in m.items():
        if key not in known and not depth_within(value, L.MAX_DEPTH - depth):
            raise NestingTooDeep(f"nested deeper than {L.MAX_DEPTH} levels", str(key)[:32])


def item_fail(decoder: Decoder, items: tuple[Any, ...], depth: int, path: str) -> None:
    """Re-raises the error of the first bad item of ``items``, naming its index."""
    for i, item in enumerate(items):
        try:
            decoder(item, depth)
        except ProtocolError as exc:
            exc.prefix(f"{path}[{i}]")
            raise
    raise AssertionError("no item failed twice")  # pragma: no cover - decoders are pure
