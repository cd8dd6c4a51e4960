"""Field constraints and the schema tree they compile to.

A message class declares each field's wire constraints beside its Python type with
``typing.Annotated``::

    amount: Annotated[int, Int(0, MAX_CHIPS)]
    low: Annotated[tuple[Card, ...], Len(2, 2), UNIQUE]

:func:`struct_spec` reads a class's type hints once and returns a tree of ``*Spec``
nodes; :mod:`protocol.compiler` compiles that tree into encoders and decoders, and the
tests derive hypothesis strategies from it. Every ``int`` needs an :class:`Int`
range, every ``str`` a :class:`Str` or :class:`Hex`, every ``tuple`` a :class:`Len`:
an unbounded field is a schema error at import time.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union


@dataclass(frozen=True, slots=True)
class Int:
    """An integer in ``lo..hi`` inclusive (``bool`` is not an integer)."""

    lo: int
    hi: int


@dataclass(frozen=True, slots=True)
class Str:
    """A string of ``min_len..max_len`` characters."""

    min_len: int
    max_len: int


@dataclass(frozen=True, slots=True)
class Hex:
    """A lowercase hexadecimal string of exactly ``length`` characters."""

    length: int


@dataclass(frozen=True, slots=True)
class Len:
    """An array of ``min_len..max_len`` items."""

    min_len: int
    max_len: int


@dataclass(frozen=True, slots=True)
class Unique:
    """An array whose items are all different."""


UNIQUE = Unique()


# The schema tree.


@dataclass(frozen=True, slots=True)
class IntSpec:
    lo: int
    hi: int


@dataclass(frozen=True, slots=True)
class BoolSpec:
    pass


@dataclass(frozen=True, slots=True)
class StrSpec:
    min_len: int
    max_len: int
    hex: bool = False


@dataclass(frozen=True, slots=True)
class EnumSpec:
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TupleSpec:
    item: Spec
    min_len: int
    max_len: int
    unique: bool


@dataclass(frozen=True, slots=True)
class OptionalSpec:
    inner: Spec


@dataclass(frozen=True, slots=True)
class StructRef:
    """A nested struct, by class (resolved lazily so classes may refer to each other)."""

    cls: type[Any]


@dataclass(frozen=True, slots=True)
class UnionSpec:
    """One of several structs, told apart by their ``kind`` key."""

    classes: tuple[type[Any], ...]


Spec = IntSpec | BoolSpec | StrSpec | EnumSpec | TupleSpec | OptionalSpec | StructRef | UnionSpec


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field of a struct: its name (also the wire key), schema and default."""

    name: str
    spec: Spec
    has_default: bool
    default: Any


@dataclass(frozen=True, slots=True)
class StructSpec:
    """A struct class, its tag (``type`` for messages, ``kind`` for results) and fields."""

    cls: type[Any]
    tag_key: str | None
    tag: str | None
    fields: tuple[FieldSpec, ...]


class SchemaError(TypeError):
    """A message class whose annotations do not bound every field (a programming error)."""


_SPECS: dict[type[Any], StructSpec] = {}


def struct_spec(cls: type[Any]) -> StructSpec:
    """The compiled schema of a dataclass with ``TYPE`` or ``KIND`` (or neither)."""
    found = _SPECS.get(cls)
    if found is not None:
        return found
    hints = typing.get_type_hints(cls, include_extras=True)
    fields = []
    for f in dataclasses.fields(cls):
        has_default = f.default is not dataclasses.MISSING
        try:
            spec = spec_of(hints[f.name])
        except SchemaError as exc:
            raise SchemaError(f"{cls.__name__}.{f.name}: {exc}") from None
        fields.append(FieldSpec(f.name, spec, has_default, f.default if has_default else None))
    tag_key: str | None = None
    tag: str | None = None
    for key in ("type", "kind"):
        value = getattr(cls, key.upper(), None)
        if isinstance(value, str):
            tag_key, tag = key, value
    result = StructSpec(cls, tag_key, tag, tuple(fields))
    _SPECS[cls] = result
    return result


def spec_of(tp: Any) -> Spec:
    """The schema node of one annotation."""
    metas: tuple[Any, ...] = ()
    if typing.get_origin(tp) is Annotated:
        metas = tp.__metadata__
        tp = typing.get_args(tp)[0]
    origin = typing.get_origin(tp)
    if origin is Union or isinstance(tp, types.UnionType):
        args = typing.get_args(tp)
        rest = tuple(a for a in args if a is not type(None))
        if len(rest) < len(args):
            inner = rest[0] if len(rest) == 1 else Union[rest]  # noqa: UP007
            return OptionalSpec(spec_of(inner if not metas else Annotated[inner, *metas]))
        if all(dataclasses.is_dataclass(a) for a in rest):
            return UnionSpec(tuple(rest))
        raise SchemaError(f"unsupported union {tp!r}")
    if origin is Literal:
        values = typing.get_args(tp)
        if not all(isinstance(v, str) for v in values):
            raise SchemaError("only string literals are supported")
        return EnumSpec(values)
    if tp is bool:
        return BoolSpec()
    if tp is int:
        for m in metas:
            if isinstance(m, Int):
                return IntSpec(m.lo, m.hi)
        raise SchemaError("an int needs an Int(lo, hi) range")
    if tp is str:
        for m in metas:
            if isinstance(m, Str):
                return StrSpec(m.min_len, m.max_len)
            if isinstance(m, Hex):
                return StrSpec(m.length, m.length, hex=True)
        raise SchemaError("a str needs a Str(min, max) or Hex(length)")
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) != 2 or args[1] is not Ellipsis:
            raise SchemaError("arrays are tuple[X, ...]")
        bounds = next((m for m in metas if isinstance(m, Len)), None)
        if bounds is None:
            raise SchemaError("a tuple needs a Len(min, max)")
        unique = any(isinstance(m, Unique) for m in metas)
        return TupleSpec(spec_of(args[0]), bounds.min_len, bounds.max_len, unique)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return StructRef(tp)
    raise SchemaError(f"unsupported annotation {tp!r}")
