"""Property tests: every message type survives encode -> decode unchanged."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import (
    CLIENT_MESSAGES,
    SERVER_MESSAGES,
    Message,
    as_map,
    decode,
    decode_client,
    decode_server,
    encode,
)
from protocol import limits as L
from tests.protocol.strategies import struct_strategy

ROUNDTRIP = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _roundtrip(message: Message) -> bytes:
    frame = encode(message)
    decoded = decode(frame)
    assert decoded == message
    assert type(decoded) is type(message)
    assert encode(decoded) == frame  # canonical: same message, same bytes
    assert next(iter(as_map(message))) == "type"
    return frame


@pytest.mark.parametrize("cls", CLIENT_MESSAGES, ids=lambda c: c.TYPE)
@ROUNDTRIP
@given(data=st.data())
def test_client_message_roundtrip(cls: type[Any], data: st.DataObject) -> None:
    message = data.draw(struct_strategy(cls))
    frame = _roundtrip(message)
    if len(frame) <= L.MAX_CLIENT_FRAME_BYTES:
        assert decode_client(frame) == message


@pytest.mark.parametrize("cls", SERVER_MESSAGES, ids=lambda c: c.TYPE)
@ROUNDTRIP
@given(data=st.data())
def test_server_message_roundtrip(cls: type[Any], data: st.DataObject) -> None:
    message = data.draw(struct_strategy(cls))
    frame = _roundtrip(message)
    assert decode_server(frame) == message
