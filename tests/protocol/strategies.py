"""Hypothesis strategies for every message, derived from the schema the codec compiles.

Derived from :mod:`protocol.schema` so that a new field is covered without editing
this file; the cross-field rules of a few classes are applied by ``_FIXUPS``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from protocol import limits as L
from protocol.messages import Bet, Hello
from protocol.schema import (
    BoolSpec,
    EnumSpec,
    IntSpec,
    OptionalSpec,
    Spec,
    StrSpec,
    StructRef,
    TupleSpec,
    UnionSpec,
    struct_spec,
)


def _fix_hello(kw: dict[str, Any]) -> dict[str, Any]:
    low, high = sorted((kw["min_version"], kw["max_version"]))
    kw.update(min_version=low, max_version=high, guest=kw["token"] is None)
    if kw["resume_token"] is None:
        kw["last_seq"] = ()
    return kw


def _fix_bet(kw: dict[str, Any]) -> dict[str, Any]:
    if not kw["amount"]:
        kw["bonus"] = 0
        kw["wagers"] = ()
    kinds = {w.kind: w for w in kw["wagers"]}  # each kind once
    kw["wagers"] = tuple(kinds.values())
    if "bonus" in kinds:  # in both, the same
        kw["bonus"] = kinds["bonus"].amount
    return kw


_FIXUPS: dict[type[Any], Callable[[dict[str, Any]], dict[str, Any]]] = {
    Hello: _fix_hello,
    Bet: _fix_bet,
}


def _text(min_size: int, max_size: int) -> st.SearchStrategy[str]:
    # Every string is also bounded in UTF-8 bytes by msgpack's max_str_len.
    return st.text(min_size=min_size, max_size=max_size).filter(
        lambda s: len(s.encode()) <= L.MAX_STR_BYTES
    )


def strategy(spec: Spec) -> st.SearchStrategy[Any]:
    """Values valid for ``spec`` (and only those)."""
    if isinstance(spec, IntSpec):
        return st.integers(spec.lo, spec.hi)
    if isinstance(spec, BoolSpec):
        return st.booleans()
    if isinstance(spec, StrSpec):
        if spec.hex:
            return st.text("0123456789abcdef", min_size=spec.min_len, max_size=spec.max_len)
        return _text(spec.min_len, spec.max_len)
    if isinstance(spec, EnumSpec):
        return st.sampled_from(spec.values)
    if isinstance(spec, TupleSpec):
        items = st.lists(
            strategy(spec.item),
            min_size=spec.min_len,
            max_size=min(spec.max_len, 8),
            unique=spec.unique,
        )
        return items.map(tuple)
    if isinstance(spec, OptionalSpec):
        return st.none() | strategy(spec.inner)
    if isinstance(spec, StructRef):
        return struct_strategy(spec.cls)
    if isinstance(spec, UnionSpec):
        return st.one_of([struct_strategy(c) for c in spec.classes])
    raise TypeError(spec)


def struct_strategy(cls: type[Any]) -> st.SearchStrategy[Any]:
    """Instances of a message or struct class, every field drawn from its schema."""
    fields = {f.name: _deferred(f.spec) for f in struct_spec(cls).fields}
    fix = _FIXUPS.get(cls)

    def build(kw: dict[str, Any]) -> Any:
        return cls(**(fix(dict(kw)) if fix else kw))

    return st.fixed_dictionaries(fields).map(build)


def _deferred(spec: Spec) -> st.SearchStrategy[Any]:
    # Deferred so that recursive use (a struct inside a struct) builds lazily.
    return st.deferred(lambda: strategy(spec))
