"""Compiles the schema into one decoder and one encoder function per struct class.

For each message and nested struct class, the field specs of :mod:`protocol.schema`
are compiled once, at import, into one plain Python function that decodes and
validates a map (``_d_<Class>(map, depth)``) and one that builds it
(``_e_<Class>(struct)``), with no per-call reflection (the technique ``dataclasses``
uses to write ``__init__``). A failed test calls into :mod:`protocol.checks` for the
error; the hot path calls nothing.

:mod:`protocol.codec` uses the tables built here: :data:`CLIENT_DECODERS`,
:data:`SERVER_DECODERS`, :data:`ALL_DECODERS` (by wire ``type``) and :data:`ENCODERS`
(by class).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any, Final, cast

from protocol import checks
from protocol import limits as L
from protocol.errors import OutOfRange, ProtocolError
from protocol.messages import (
    CLIENT_MESSAGES,
    SERVER_MESSAGES,
    ClientMessage,
    Message,
    ServerMessage,
)
from protocol.schema import (
    BoolSpec,
    EnumSpec,
    IntSpec,
    OptionalSpec,
    Spec,
    StrSpec,
    StructRef,
    StructSpec,
    TupleSpec,
    UnionSpec,
    struct_spec,
)

__all__ = ["ALL_DECODERS", "CLIENT_DECODERS", "ENCODERS", "SERVER_DECODERS", "Encoder"]

Encoder = Callable[[Any], dict[str, Any]]
"""A compiled encoder: ``struct -> map`` (nested structs as maps), ready to pack."""

_MISSING: Final = object()
_HEX_MATCH: Final = re.compile(r"[0-9a-f]*").fullmatch


def _encode_union(value: Any) -> dict[str, Any]:
    """The map of one of a union's structs (a result), by its class."""
    return _RESULT_ENCODERS[type(value)](value)


# The globals of the generated functions: constants and the slow-path error builders
# under short names, and (added by _const and _compile) every compiled function.
_NS: dict[str, Any] = {
    "_MISSING": _MISSING,
    "_HEX": _HEX_MATCH,
    "_wt": checks.wrong_type,
    "_interr": checks.int_error,
    "_itemerr": checks.int_item_error,
    "_strerr": checks.str_error,
    "_enumerr": checks.enum_error,
    "_lenerr": checks.len_error,
    "_miss": checks.missing,
    "_extra": checks.check_extra,
    "_itemfail": checks.item_fail,
    "_PE": ProtocolError,
    "_OOR": OutOfRange,
    "_eunion": _encode_union,
}
_RESULT_ENCODERS: dict[type[Any], Encoder] = {}
_counter = itertools.count()


def _const(value: object) -> str:
    """A name in the generated code's namespace bound to ``value``."""
    name = f"_k{next(_counter)}"
    _NS[name] = value
    return name


def _check(spec: Spec, var: str, path: str, depth: str, ind: str) -> list[str]:
    """Lines validating ``var`` against ``spec`` and rebinding it to the decoded value.

    ``path`` is a Python expression for the field's path; ``depth`` one for the
    nesting level of the map that holds ``var``.
    """
    if isinstance(spec, IntSpec):
        return [
            f"{ind}if type({var}) is not int or {var} < {spec.lo} or {var} > {spec.hi}:",
            f"{ind}    raise _interr({path}, {var}, {spec.lo}, {spec.hi})",
        ]
    if isinstance(spec, BoolSpec):
        return [
            f"{ind}if type({var}) is not bool:",
            f"{ind}    raise _wt({path}, 'boolean', {var})",
        ]
    if isinstance(spec, StrSpec):
        cond = f"type({var}) is not str or not {spec.min_len} <= len({var}) <= {spec.max_len}"
        if spec.hex:
            cond = f"type({var}) is not str or len({var}) != {spec.min_len} or not _HEX({var})"
        return [
            f"{ind}if {cond}:",
            f"{ind}    raise _strerr({path}, {var}, {spec.min_len}, {spec.max_len}, {spec.hex})",
        ]
    if isinstance(spec, EnumSpec):
        values = _const(frozenset(spec.values))
        return [
            f"{ind}if type({var}) is not str or {var} not in {values}:",
            f"{ind}    raise _enumerr({path}, {var}, {spec.values!r})",
        ]
    if isinstance(spec, OptionalSpec):
        return [f"{ind}if {var} is not None:", *_check(spec.inner, var, path, depth, ind + "    ")]
    if isinstance(spec, StructRef):
        dec = _decoder_name(spec.cls)
        return [
            f"{ind}try:",
            f"{ind}    {var} = {dec}({var}, {depth} + 1)",
            f"{ind}except _PE as x:",
            f"{ind}    x.prefix({path})",
            f"{ind}    raise",
        ]
    if isinstance(spec, UnionSpec):
        # The decoders do not exist yet: the table is filled once all are compiled.
        table = _const({})
        by_tag = {cast(str, struct_spec(c).tag): _decoder_name(c) for c in spec.classes}
        _PENDING_UNIONS.append((table, by_tag))
        names = tuple(sorted(by_tag))
        return [
            f"{ind}if type({var}) is not dict:",
            f"{ind}    raise _wt({path}, 'map', {var})",
            f"{ind}k = {var}.get('kind')",
            f"{ind}f = {table}.get(k) if type(k) is str else None",
            f"{ind}if f is None:",
            f"{ind}    raise _enumerr({path} + '.kind', k, {names!r})",
            f"{ind}try:",
            f"{ind}    {var} = f({var}, {depth} + 1)",
            f"{ind}except _PE as x:",
            f"{ind}    x.prefix({path})",
            f"{ind}    raise",
        ]
    if isinstance(spec, TupleSpec):
        if spec.min_len == spec.max_len:
            size_bad = f"len({var}) != {spec.min_len}"
        else:
            size_bad = f"not {spec.min_len} <= len({var}) <= {spec.max_len}"
        lines = [
            f"{ind}if type({var}) is not tuple:",
            f"{ind}    raise _wt({path}, 'array', {var})",
            f"{ind}if {size_bad}:",
            f"{ind}    raise _lenerr({path}, {var}, {spec.min_len}, {spec.max_len})",
        ]
        item = spec.item
        unique_checked = False
        if isinstance(item, IntSpec) and item.hi - item.lo <= 1024:
            # Small ranges (cards): type tests (unrolled when the length is fixed), then
            # one C-level set operation for the range, and for uniqueness if asked.
            allowed = _const(frozenset(range(item.lo, item.hi + 1)))
            bad_item = f"raise _itemerr({path}, {var}, {item.lo}, {item.hi})"
            if spec.min_len == spec.max_len and spec.max_len <= 8:
                types = " or ".join(f"type({var}[{i}]) is not int" for i in range(spec.max_len))
                lines += [f"{ind}if {types or 'False'}:", f"{ind}    {bad_item}"]
            else:
                lines += [
                    f"{ind}for e in {var}:",
                    f"{ind}    if type(e) is not int:",
                    f"{ind}        {bad_item}",
                ]
            if spec.unique:
                unique_checked = True
                lines += [
                    f"{ind}if len({allowed}.intersection({var})) != len({var}):",
                    f"{ind}    if not {allowed}.issuperset({var}):",
                    f"{ind}        {bad_item}",
                    f"{ind}    raise _OOR('an item appears twice', {path})",
                ]
            else:
                lines += [f"{ind}if not {allowed}.issuperset({var}):", f"{ind}    {bad_item}"]
        elif isinstance(item, IntSpec):
            lines += [
                f"{ind}for e in {var}:",
                f"{ind}    if type(e) is not int or e < {item.lo} or e > {item.hi}:",
                f"{ind}        raise _itemerr({path}, {var}, {item.lo}, {item.hi})",
            ]
        elif isinstance(item, StructRef):
            # Short arrays (seats, hands) are built by one tuple display per length (a
            # comprehension costs a function call of its own); on failure, find the bad
            # index.
            dec = _decoder_name(item.cls)
            lines += [f"{ind}try:", f"{ind}    dd = {depth} + 2", f"{ind}    k = len({var})"]
            if spec.max_len <= _UNROLL:
                for n in range(spec.min_len, spec.max_len + 1):
                    items = "".join(f"{dec}({var}[{i}], dd), " for i in range(n))
                    lines += [f"{ind}    {'if' if n == spec.min_len else 'elif'} k == {n}:"]
                    lines += [f"{ind}        {var} = ({items})"]
            else:
                lines += [f"{ind}    {var} = tuple([{dec}(e, dd) for e in {var}])"]
            lines += [
                f"{ind}except _PE:",
                f"{ind}    _itemfail({dec}, {var}, {depth} + 2, {path})",
            ]
        else:
            out = f"{var}_out"
            lines += [
                f"{ind}{out} = []",
                f"{ind}try:",
                f"{ind}    for i, e in enumerate({var}):",
                *_check(item, "e", "''", f"({depth} + 1)", ind + "        "),
                f"{ind}        {out}.append(e)",
                f"{ind}except _PE as x:",
                f"{ind}    x.prefix({path} + '[' + str(i) + ']')",
                f"{ind}    raise",
                f"{ind}{var} = tuple({out})",
            ]
        if spec.unique and not unique_checked:
            dup = f"len(set({var})) != len({var})"
            if spec.max_len == 2:
                dup = f"len({var}) == 2 and {var}[0] == {var}[1]"
            lines += [
                f"{ind}if {dup}:",
                f"{ind}    raise _OOR('an item appears twice', {path})",
            ]
        return lines
    raise TypeError(f"no code for {spec!r}")  # pragma: no cover - schema.spec_of is closed


_PENDING_UNIONS: list[tuple[str, dict[str, str]]] = []
_UNROLL = 8  # arrays of structs up to this length are decoded without a comprehension


def _mutable_twin(cls: type[Any]) -> type[Any]:
    """A class with the slots of the frozen dataclass ``cls`` and no ``__setattr__``.

    CPython lets an object change ``__class__`` between two classes whose instances
    have the same layout (same base, same ``__slots__`` in the same order), so a
    decoder fills a twin with plain stores and then makes it a ``cls``. The twin never
    escapes the codec.
    """
    slots = cls.__dict__.get("__slots__")
    if cls.__bases__ != (object,) or not isinstance(slots, tuple):  # pragma: no cover
        raise AssertionError(f"{cls.__name__} must be a slotted dataclass of object")
    twin = type(f"_Mutable{cls.__name__}", (), {"__slots__": slots})
    probe: Any = twin()
    probe.__class__ = cls  # fails at import, not at the first frame, if layouts differ
    return twin


def _decoder_name(cls: type[Any]) -> str:
    return f"_d_{cls.__name__}"


def _encoder_name(cls: type[Any]) -> str:
    return f"_e_{cls.__name__}"


def _encode_expr(spec: Spec, expr: str) -> str:
    if isinstance(spec, StructRef):
        return f"{_encoder_name(spec.cls)}({expr})"
    if isinstance(spec, UnionSpec):
        return f"_eunion({expr})"
    if isinstance(spec, OptionalSpec):
        inner = _encode_expr(spec.inner, "v")
        if inner == "v":
            return expr
        return f"(None if {expr} is None else {_encode_expr(spec.inner, expr)})"
    if isinstance(spec, TupleSpec):
        if isinstance(spec.item, StructRef) and spec.max_len <= _UNROLL:
            return f"_el_{spec.item.cls.__name__}({expr})"
        inner = _encode_expr(spec.item, "x")
        return expr if inner == "x" else f"[{inner} for x in {expr}]"
    return expr


def _struct_deps(spec: Spec) -> list[type[Any]]:
    if isinstance(spec, StructRef):
        return [spec.cls]
    if isinstance(spec, UnionSpec):
        return list(spec.classes)
    if isinstance(spec, OptionalSpec):
        return _struct_deps(spec.inner)
    if isinstance(spec, TupleSpec):
        return _struct_deps(spec.item)
    return []


def _compile(cls: type[Any], done: dict[type[Any], StructSpec]) -> None:
    """Generates ``_d_<Class>`` and ``_e_<Class>`` for ``cls`` and the structs it holds."""
    if cls in done:
        return
    spec = struct_spec(cls)
    done[cls] = spec
    for f in spec.fields:
        for dep in _struct_deps(f.spec):
            _compile(dep, done)
    name = cls.__name__
    required = sum(1 for f in spec.fields if not f.has_default) + (1 if spec.tag_key else 0)
    known = frozenset(f.name for f in spec.fields) | (
        {spec.tag_key} if spec.tag_key else frozenset()
    )
    # The object is built as an instance of a mutable twin with the same slots, whose
    # plain attribute stores are a quarter of the cost of the frozen class's
    # object.__setattr__ calls, then handed its real class (see _mutable_twin).
    lines = [
        f"def {_decoder_name(cls)}(m, d):",
        "    if type(m) is not dict:",
        "        raise _wt('', 'map', m)",
        f"    o = {_const(_mutable_twin(cls))}()",
        f"    n = {required}",
    ]
    for f in spec.fields:
        key = repr(f.name)
        setter = f"o.{f.name} = "
        if not f.has_default:
            lines += [
                "    try:",
                f"        v = m[{key}]",
                "    except KeyError:",
                f"        raise _miss({key}) from None",
                *_check(f.spec, "v", key, "d", "    "),
                f"    {setter}v",
            ]
        else:
            lines += [
                f"    v = m.get({key}, _MISSING)",
                "    if v is _MISSING:",
                f"        {setter}{_const(f.default)}",
                "    else:",
                "        n += 1",
                *_check(f.spec, "v", key, "d", "        "),
                f"        {setter}v",
            ]
    lines += ["    if len(m) != n:", f"        _extra(m, {_const(known)}, d)"]
    lines.append(f"    o.__class__ = {_const(cls)}")
    if hasattr(cls, "__post_init__"):
        lines.append("    o.__post_init__()")
    lines.append("    return o")
    items = [f"{spec.tag_key!r}: {spec.tag!r}"] if spec.tag_key else []
    items += [f"{f.name!r}: {_encode_expr(f.spec, 'o.' + f.name)}" for f in spec.fields]
    lines += [f"def {_encoder_name(cls)}(o):", f"    return {{{', '.join(items)}}}"]
    # Short arrays of this struct: one list display per length, no comprehension.
    enc = _encoder_name(cls)
    lines += [f"def _el_{name}(s):", "    k = len(s)"]
    for n in range(_UNROLL + 1):
        lines += [
            f"    if k == {n}:",
            f"        return [{', '.join(f'{enc}(s[{i}])' for i in range(n))}]",
        ]
    lines += [f"    return [{enc}(x) for x in s]"]
    exec(compile("\n".join(lines), f"<protocol codec {name}>", "exec"), _NS)


def _max_depth(spec: Spec) -> int:
    """Nesting depth the schema allows below a value of ``spec`` (0 for scalars)."""
    if isinstance(spec, OptionalSpec):
        return _max_depth(spec.inner)
    if isinstance(spec, TupleSpec):
        return 1 + _max_depth(spec.item)
    if isinstance(spec, StructRef):
        return 1 + max((_max_depth(f.spec) for f in struct_spec(spec.cls).fields), default=0)
    if isinstance(spec, UnionSpec):
        return max(_max_depth(StructRef(c)) for c in spec.classes)
    return 0


_ClientDecoders = dict[str, Callable[[dict[Any, Any], int], ClientMessage]]
_ServerDecoders = dict[str, Callable[[dict[Any, Any], int], ServerMessage]]


def _build() -> tuple[_ClientDecoders, _ServerDecoders, dict[type[Any], Encoder]]:
    """Compiles every message class; returns the decoders by type and encoders by class."""
    done: dict[type[Any], StructSpec] = {}
    for cls in (*CLIENT_MESSAGES, *SERVER_MESSAGES):
        _compile(cls, done)
        if _max_depth(StructRef(cls)) > L.MAX_DEPTH:  # pragma: no cover - schema guard
            raise AssertionError(f"{cls.__name__} nests deeper than MAX_DEPTH")
    for table_name, by_tag in _PENDING_UNIONS:
        _NS[table_name].update({tag: _NS[fn] for tag, fn in by_tag.items()})
    for cls, spec in done.items():
        if spec.tag_key == "kind":
            _RESULT_ENCODERS[cls] = _NS[_encoder_name(cls)]
    client = {cast(str, done[c].tag): _NS[_decoder_name(c)] for c in CLIENT_MESSAGES}
    server = {cast(str, done[c].tag): _NS[_decoder_name(c)] for c in SERVER_MESSAGES}
    encoders = {c: _NS[_encoder_name(c)] for c in (*CLIENT_MESSAGES, *SERVER_MESSAGES)}
    if len(client) + len(server) != len(CLIENT_MESSAGES) + len(SERVER_MESSAGES) or (
        client.keys() & server.keys()
    ):  # pragma: no cover - schema guard
        raise AssertionError("message types must be unique")
    return client, server, encoders


CLIENT_DECODERS, SERVER_DECODERS, ENCODERS = _build()
ALL_DECODERS: Final[dict[str, Callable[[dict[Any, Any], int], Message]]] = {
    **CLIENT_DECODERS,
    **SERVER_DECODERS,
}
