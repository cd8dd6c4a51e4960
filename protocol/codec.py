"""The msgpack codec: ``encode(message) -> bytes`` and ``decode(bytes) -> message``.

Decoding is strict and total: whatever the input, it returns a valid message or
raises a :exc:`~protocol.errors.ProtocolError` whose ``code`` is in the error table
(see :mod:`protocol.errors` for the tree). msgpack's own limits bound every string,
array and map before any Python object is built; the schema then checks every field.
Unknown keys in a map are ignored (their values must still respect the nesting
limit), so a newer peer may add optional fields.

Encoding trusts its input (the server builds its messages from validated state) and
writes every field, in declaration order, with the ``type`` key first: the output is
canonical, so test vectors can compare bytes. :func:`check` validates a message
the way a peer would decode it.

Speed: for each class, the field specs of :mod:`protocol.schema` are compiled once,
at import, into one plain Python function that decodes and validates a map and one
that builds it, with no per-call reflection (the technique ``dataclasses`` uses to
write ``__init__``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar, cast

import msgpack

from protocol import limits as L
from protocol.errors import (
    EncodeError,
    FrameTooLarge,
    InvalidMessage,
    MalformedFrame,
    MissingField,
    NestingTooDeep,
    OutOfRange,
    ProtocolError,
    UnknownMessageType,
    WrongType,
)
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

__all__ = [
    "UNPACK_OPTIONS",
    "as_map",
    "check",
    "decode",
    "decode_client",
    "decode_server",
    "encode",
]

# Passed to msgpack for every frame. Arrays decode as tuples (no copy for card lists);
# ext types, timestamps included, are refused by max_ext_len=0; strings must be UTF-8.
# (msgpack's max_buffer_size belongs to its streaming Unpacker; one frame is one
# message here, and the frame's size is checked before unpacking.)
UNPACK_OPTIONS: Final[Mapping[str, Any]] = {
    "raw": False,
    "use_list": False,
    "strict_map_key": True,
    "max_str_len": L.MAX_STR_BYTES,
    "max_bin_len": L.MAX_BIN_BYTES,
    "max_array_len": L.MAX_ARRAY_LEN,
    "max_map_len": L.MAX_MAP_LEN,
    "max_ext_len": L.MAX_EXT_BYTES,
}

Decoder = Callable[[dict[Any, Any], int], Any]
Encoder = Callable[[Any], dict[str, Any]]

_M = TypeVar("_M", bound="Message")

_MISSING: Final = object()
_unpackb: Final = msgpack.unpackb
# One packer for every frame: packb builds a new one per call, a third of a small
# frame's cost. Sharing is safe: pack runs in C under the GIL with no callback (no
# ``default`` hook) and resets its buffer on error.
_pack: Final = msgpack.Packer(autoreset=True).pack
_HEX_MATCH: Final = re.compile(r"[0-9a-f]*").fullmatch


# --- error helpers used by the generated code (slow path only) ----------------------


def _type_name(value: object) -> str:
    names = {bool: "boolean", int: "integer", float: "float", str: "string"}
    names |= {bytes: "binary", tuple: "array", dict: "map", type(None): "nil"}
    return names.get(type(value), type(value).__name__)


def _wrong_type(path: str, expected: str, value: object) -> WrongType:
    return WrongType(f"expected {expected}, got {_type_name(value)}", path)


def _int_error(path: str, value: object, lo: int, hi: int) -> InvalidMessage:
    if type(value) is not int:
        return _wrong_type(path, "integer", value)
    return OutOfRange(f"{value} is not in {lo}..{hi}", path)


def _int_item_error(path: str, items: tuple[object, ...], lo: int, hi: int) -> InvalidMessage:
    for i, item in enumerate(items):
        if type(item) is not int or not lo <= item <= hi:
            return _int_error(f"{path}[{i}]", item, lo, hi)
    return InvalidMessage("invalid item", path)  # unreachable: called only on a bad item


def _str_error(path: str, value: object, lo: int, hi: int, hex_: bool) -> InvalidMessage:
    if type(value) is not str:
        return _wrong_type(path, "string", value)
    if hex_:
        return OutOfRange(f"expected {lo} lowercase hexadecimal digits", path)
    return OutOfRange(f"length {len(value)} is not in {lo}..{hi}", path)


def _enum_error(path: str, value: object, values: tuple[str, ...]) -> InvalidMessage:
    if type(value) is not str:
        return _wrong_type(path, "string", value)
    return OutOfRange(f"{value[:32]!r} is not one of {', '.join(values)}", path)


def _len_error(path: str, value: tuple[object, ...], lo: int, hi: int) -> OutOfRange:
    return OutOfRange(f"{len(value)} items, expected {lo}..{hi}", path)


def _missing(path: str) -> MissingField:
    return MissingField("required field is missing", path)


def _depth(value: object, budget: int) -> bool:
    """Whether ``value`` nests containers no deeper than ``budget`` levels."""
    if type(value) is dict:
        if budget < 1:
            return False
        return all(_depth(k, budget - 1) and _depth(v, budget - 1) for k, v in value.items())
    if type(value) is tuple:
        if budget < 1:
            return False
        return all(_depth(v, budget - 1) for v in value)
    return True


def _extra(m: dict[Any, Any], known: frozenset[str], depth: int) -> None:
    """Checks the values of unknown keys (ignored, but still bounded in nesting)."""
    for key, value in m.items():
        if key not in known and not _depth(value, L.MAX_DEPTH - depth):
            raise NestingTooDeep(f"nested deeper than {L.MAX_DEPTH} levels", str(key)[:32])


def _item_fail(decoder: Decoder, items: tuple[Any, ...], depth: int, path: str) -> None:
    """Re-raises the error of the first bad item of ``items``, naming its index."""
    for i, item in enumerate(items):
        try:
            decoder(item, depth)
        except ProtocolError as exc:
            exc.prefix(f"{path}[{i}]")
            raise
    raise AssertionError("no item failed twice")  # pragma: no cover - decoders are pure


def _encode_union(value: Any) -> dict[str, Any]:
    return _RESULT_ENCODERS[type(value)](value)


# --- code generation ------------------------------------------------------------------

_NS: dict[str, Any] = {
    "_MISSING": _MISSING,
    "_HEX": _HEX_MATCH,
    "_wt": _wrong_type,
    "_interr": _int_error,
    "_itemerr": _int_item_error,
    "_strerr": _str_error,
    "_enumerr": _enum_error,
    "_lenerr": _len_error,
    "_miss": _missing,
    "_extra": _extra,
    "_itemfail": _item_fail,
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


_CLIENT_DECODERS, _SERVER_DECODERS, _ENCODERS = _build()
_ALL_DECODERS: Final[dict[str, Callable[[dict[Any, Any], int], Message]]] = {
    **_CLIENT_DECODERS,
    **_SERVER_DECODERS,
}


# --- public API -----------------------------------------------------------------------


def as_map(message: Message) -> dict[str, Any]:
    """The msgpack map of a message before packing (nested structs as maps)."""
    try:
        encoder = _ENCODERS[type(message)]
    except KeyError:
        raise EncodeError(f"{type(message).__name__} is not a protocol message") from None
    try:
        return encoder(message)
    except Exception as exc:
        raise EncodeError(f"cannot encode {type(message).__name__}: {exc}") from exc


def encode(message: Message) -> bytes:
    """The bytes of one binary WebSocket frame carrying ``message``.

    Raises :exc:`~protocol.errors.EncodeError` if ``message`` is not a message object
    or holds a value msgpack cannot pack. Values are not range-checked (see :func:`check`).
    """
    try:
        encoder = _ENCODERS[type(message)]
    except KeyError:
        raise EncodeError(f"{type(message).__name__} is not a protocol message") from None
    try:
        return _pack(encoder(message))
    except Exception as exc:
        raise EncodeError(f"cannot encode {type(message).__name__}: {exc}") from exc


def _decode(
    data: object,
    max_size: int,
    decoders: Mapping[str, Callable[[dict[Any, Any], int], _M]],
    side: str,
) -> _M:
    if type(data) is not bytes:
        if isinstance(data, str):
            raise MalformedFrame("a text frame: messages travel in binary frames only")
        if not isinstance(data, bytearray | memoryview):
            raise MalformedFrame(f"expected bytes, got {type(data).__name__}")
        data = bytes(data)
    if len(data) > max_size:
        raise FrameTooLarge(f"frame of {len(data)} bytes exceeds {max_size}")
    try:
        # Keywords spelled out: passing **UNPACK_OPTIONS costs a third of the unpack.
        m = _unpackb(
            data,
            raw=False,
            use_list=False,
            strict_map_key=True,
            max_str_len=L.MAX_STR_BYTES,
            max_bin_len=L.MAX_BIN_BYTES,
            max_array_len=L.MAX_ARRAY_LEN,
            max_map_len=L.MAX_MAP_LEN,
            max_ext_len=L.MAX_EXT_BYTES,
        )
    except msgpack.ExtraData:
        raise MalformedFrame("trailing bytes after the message") from None
    except msgpack.StackError:
        raise NestingTooDeep("nested too deep") from None
    except ValueError as exc:
        text = str(exc)
        if "max_ext_len" in text or "max_bin_len" in text:
            # The limits are 0: these are types the protocol never uses, not sizes.
            raise MalformedFrame("binary and ext values are not part of the protocol") from None
        if "exceeds max_" in text:
            raise FrameTooLarge(text) from None
        raise MalformedFrame(f"not valid msgpack: {exc or type(exc).__name__}") from None
    except Exception as exc:  # msgpack may raise other errors on hostile input
        raise MalformedFrame(f"not valid msgpack: {type(exc).__name__}") from None
    if type(m) is not dict:
        raise MalformedFrame(f"a frame holds one map, not {_type_name(m)}")
    kind = m.get("type")
    decoder = decoders.get(kind) if type(kind) is str else None
    if decoder is None:
        error = _type_error(m, side)
        _annotate(error, m)
        raise error
    try:
        return decoder(m, 1)
    except ProtocolError as exc:
        _annotate(exc, m)
        raise


def _type_error(m: dict[Any, Any], side: str) -> ProtocolError:
    if "type" not in m:
        return _missing("type")
    kind = m["type"]
    if type(kind) is not str:
        return _wrong_type("type", "string", kind)
    if kind in _ALL_DECODERS:
        return UnknownMessageType(f"{kind[:32]!r} is not a message {side}")
    return UnknownMessageType(f"unknown message type {kind[:32]!r}")


def _annotate(exc: ProtocolError, m: dict[Any, Any]) -> None:
    rid = m.get("rid")
    if type(rid) is str and 1 <= len(rid) <= L.MAX_RID_LEN:
        exc.rid = rid
    kind = m.get("type")
    if type(kind) is str and len(kind) <= L.MAX_CODE_LEN:
        exc.msg_type = kind


def decode(data: bytes) -> Message:
    """The message in one frame, of either direction (frames up to ``MAX_FRAME_BYTES``).

    Raises a :exc:`~protocol.errors.DecodeError` subclass, and nothing else, for any
    input that is not one valid message.
    """
    return _decode(data, L.MAX_FRAME_BYTES, _ALL_DECODERS, "of this protocol")


def decode_client(data: bytes) -> ClientMessage:
    """A client-to-server message (what the server calls); other types are unknown here."""
    return _decode(data, L.MAX_CLIENT_FRAME_BYTES, _CLIENT_DECODERS, "a client may send")


def decode_server(data: bytes) -> ServerMessage:
    """A server-to-client message (what a client calls); other types are unknown here."""
    return _decode(data, L.MAX_SERVER_FRAME_BYTES, _SERVER_DECODERS, "a server may send")


def check(message: Message) -> None:
    """Raises the :exc:`~protocol.errors.ProtocolError` a peer would raise on ``message``.

    For tests and debugging: it encodes, decodes and compares, so it costs a round trip.
    """
    decoded = decode(encode(message))
    if decoded != message:
        raise EncodeError(f"{type(message).__name__} does not survive a round trip")
