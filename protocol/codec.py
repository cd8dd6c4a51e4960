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

This module is the frame: msgpack in and out, the frame's size, the message's
``type``. The per-class work is done by functions compiled from the schema at
import (:mod:`protocol.compiler`); their errors are built in :mod:`protocol.checks`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

import msgpack

from protocol import limits as L
from protocol.checks import missing, type_name, wrong_type
from protocol.compiler import ALL_DECODERS as _ALL_DECODERS
from protocol.compiler import CLIENT_DECODERS as _CLIENT_DECODERS
from protocol.compiler import ENCODERS as _ENCODERS
from protocol.compiler import SERVER_DECODERS as _SERVER_DECODERS
from protocol.errors import (
    EncodeError,
    FrameTooLarge,
    MalformedFrame,
    NestingTooDeep,
    ProtocolError,
    UnknownMessageType,
)
from protocol.messages import ClientMessage, Message, ServerMessage

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

_M = TypeVar("_M", bound="Message")

_unpackb: Final = msgpack.unpackb
# One packer for every frame: packb builds a new one per call, a third of a small
# frame's cost. Sharing is safe: pack runs in C under the GIL with no callback (no
# ``default`` hook) and resets its buffer on error.
_pack: Final = msgpack.Packer(autoreset=True).pack


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
        raise MalformedFrame(f"a frame holds one map, not {type_name(m)}")
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
        return missing("type")
    kind = m["type"]
    if type(kind) is not str:
        return wrong_type("type", "string", kind)
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
