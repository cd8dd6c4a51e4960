"""The committed test vectors, checked both ways against the codec."""

from __future__ import annotations

import json
from typing import Any

import msgpack
import pytest

from protocol import (
    ERRORS,
    RESULT_CLASSES,
    ErrorCode,
    ProtocolError,
    as_map,
    decode_client,
    decode_server,
    encode,
)
from protocol import messages as M
from protocol.examples import examples
from protocol.vectors import CLIENT_TO_SERVER, SERVER_TO_CLIENT, load_vectors
from protocol.vectors.generate import error_vectors, message_vectors

MESSAGES = load_vectors("messages")
ERROR_VECTORS = load_vectors("errors")


def _decoder(direction: str) -> Any:
    assert direction in (CLIENT_TO_SERVER, SERVER_TO_CLIENT)
    return decode_client if direction == CLIENT_TO_SERVER else decode_server


@pytest.mark.parametrize("vector", MESSAGES, ids=lambda v: v["name"])
def test_message_vector_decodes(vector: dict[str, Any]) -> None:
    frame = bytes.fromhex(vector["hex"])
    message = _decoder(vector["direction"])(frame)
    assert json.loads(json.dumps(as_map(message))) == vector["message"]
    if vector["canonical"]:
        assert msgpack.unpackb(frame) == vector["message"]


@pytest.mark.parametrize("vector", [v for v in MESSAGES if v["canonical"]], ids=lambda v: v["name"])
def test_message_vector_encodes(vector: dict[str, Any]) -> None:
    # The other way: the meaning, as this package's object, encodes to exactly the bytes.
    message = dict(examples())[vector["name"]]
    assert encode(message).hex() == vector["hex"]


@pytest.mark.parametrize("vector", ERROR_VECTORS, ids=lambda v: v["name"])
def test_error_vector(vector: dict[str, Any]) -> None:
    with pytest.raises(ProtocolError) as info:
        _decoder(vector["direction"])(bytes.fromhex(vector["hex"]))
    assert info.value.code == ErrorCode(vector["error"])
    assert type(info.value).__name__ == vector["exception"]


def test_every_message_type_has_a_vector() -> None:
    covered = {msgpack.unpackb(bytes.fromhex(v["hex"]))["type"] for v in MESSAGES}
    every = {cls.TYPE for cls in (*M.CLIENT_MESSAGES, *M.SERVER_MESSAGES)}
    assert covered == every


def test_every_result_kind_has_a_vector() -> None:
    kinds = {
        v["message"]["result"]["kind"]
        for v in MESSAGES
        if v["message"]["type"] == "ok" and v["message"]["result"] is not None
    }
    assert kinds == {cls.KIND for cls in RESULT_CLASSES}


def test_every_decode_error_code_has_a_vector() -> None:
    decode_codes = {
        ErrorCode.MALFORMED,
        ErrorCode.TOO_LARGE,
        ErrorCode.BAD_MESSAGE,
        ErrorCode.UNKNOWN_TYPE,
    }
    assert {ErrorCode(v["error"]) for v in ERROR_VECTORS} == decode_codes
    assert decode_codes <= ERRORS.keys()


def test_committed_vectors_are_current() -> None:
    # The JSON files are what generate.py writes today (run it after changing messages).
    assert message_vectors() == MESSAGES
    assert error_vectors() == ERROR_VECTORS


def test_error_replies_to_a_readable_request_carry_its_rid() -> None:
    # Section 3: only a request whose rid could not be read gets an error with rid nil;
    # a rate-limited request's reply carries its rid like any other.
    errors = [v for v in MESSAGES if v["message"]["type"] == "error"]
    assert {v["message"]["code"] for v in errors} >= {"rate_limited"}
    assert all(v["message"]["rid"] is not None for v in errors)


def test_error_keeps_request_id_and_type() -> None:
    # A server can still address its error reply when a field is bad.
    frame = msgpack.packb({"type": "bet", "rid": "r9", "table_id": "t1", "amount": -5})
    with pytest.raises(ProtocolError) as info:
        decode_client(frame)
    assert (info.value.rid, info.value.msg_type, info.value.path) == ("r9", "bet", "amount")
