"""Fuzzing ``decode``: random and mutated frames only ever raise documented errors."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import msgpack
import pytest

from protocol import (
    ErrorCode,
    MalformedFrame,
    Message,
    ProtocolError,
    decode,
    decode_client,
    decode_server,
    encode,
)
from protocol.examples import examples
from protocol.messages import CLIENT_MESSAGES, SERVER_MESSAGES
from protocol.schema import StructSpec, struct_spec
from protocol.vectors import load_vectors

SEED = 20260101
MAX_INPUTS = 300_000
TIME_BUDGET_S = 12.0
DECODE_CODES = {
    ErrorCode.MALFORMED,
    ErrorCode.TOO_LARGE,
    ErrorCode.BAD_MESSAGE,
    ErrorCode.UNKNOWN_TYPE,
}
# Bytes that start msgpack values of every family: where mutations hurt most.
MARKERS = bytes.fromhex("007f808f909fa0bfc0c1c2c3c4c7cacbcccfd0d3d4d9dadbdcdddedfe0ff")
SCALARS: list[Any] = [
    None, True, False, 0, 1, -1, 52, 53, 6, 2**53, 2**64 - 1, -(2**63), 1.0, 0.5, "", "x",
    "t1", "bet", "ok", "betting", "win", "a" * 65, "0" * 64, b"", [], {},
]  # fmt: skip


def _known_fields() -> dict[str, StructSpec]:
    return {cls.TYPE: struct_spec(cls) for cls in (*CLIENT_MESSAGES, *SERVER_MESSAGES)}


class Fuzzer:
    """Deterministic input generator: random bytes, mutated frames, random maps."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.corpus = [encode(m) for _, m in examples()]
        self.corpus += [bytes.fromhex(v["hex"]) for v in load_vectors("errors")]
        self.fields = _known_fields()
        self.keys = sorted({f.name for s in self.fields.values() for f in s.fields} | {"kind"})

    def random_bytes(self) -> bytes:
        return self.rng.randbytes(self.rng.randrange(0, 48))

    def mutate(self) -> bytes:
        rng = self.rng
        data = bytearray(rng.choice(self.corpus))
        for _ in range(rng.randrange(1, 4)):
            op = rng.randrange(6)
            pos = rng.randrange(len(data) + 1)
            if op == 0 and data:
                data[pos % len(data)] ^= 1 << rng.randrange(8)
            elif op == 1 and data:
                data[pos % len(data)] = rng.choice(MARKERS)
            elif op == 2:
                data[pos:pos] = rng.randbytes(rng.randrange(1, 6))
            elif op == 3:
                del data[pos : pos + rng.randrange(1, 6)]
            elif op == 4:
                data = data[:pos]
            else:
                other = rng.choice(self.corpus)
                cut = rng.randrange(len(other) + 1)
                data = data[:pos] + other[cut:]
        return bytes(data)

    def value(self, depth: int) -> Any:
        rng = self.rng
        roll = rng.random()
        if depth > 4 or roll < 0.6:
            return rng.choice(SCALARS)
        if roll < 0.8:
            return [self.value(depth + 1) for _ in range(rng.randrange(0, 8))]
        return {rng.choice(self.keys): self.value(depth + 1) for _ in range(rng.randrange(0, 6))}

    def structured(self) -> bytes:
        """A map of a real type with known keys, some values valid-looking, some not."""
        rng = self.rng
        kind = rng.choice(sorted(self.fields))
        wire: dict[str, Any] = {"type": kind}
        for f in self.fields[kind].fields:
            if rng.random() < 0.9:
                wire[f.name] = self.value(1)
        if rng.random() < 0.2:
            wire[rng.choice(self.keys)] = self.value(1)
        return msgpack.packb(wire)

    def next(self) -> bytes:
        roll = self.rng.random()
        if roll < 0.3:
            return self.random_bytes()
        if roll < 0.75:
            return self.mutate()
        return self.structured()


def _run(decoder: Callable[[bytes], Message], fuzzer: Fuzzer, deadline: float, limit: int) -> int:
    count = 0
    while count < limit and (count % 256 or time.monotonic() < deadline):
        frame = fuzzer.next()
        count += 1
        code: ErrorCode | None = None
        try:
            message = decoder(frame)
        except ProtocolError as exc:
            code = exc.code
            str(exc)  # the message must render, it goes into the error reply
        except Exception as exc:  # the property under test: nothing else escapes
            raise AssertionError(f"{type(exc).__name__} escaped on {frame.hex()}") from exc
        if code is not None:
            assert code in DECODE_CODES, frame.hex()
        else:
            # Whatever decodes is a valid message: it re-encodes and decodes to itself.
            assert decode(encode(message)) == message
    return count


def test_fuzz_decode_raises_only_protocol_errors() -> None:
    fuzzer = Fuzzer(SEED)
    deadline = time.monotonic() + TIME_BUDGET_S
    per_decoder = MAX_INPUTS // 3
    count = sum(
        _run(decoder, fuzzer, deadline, per_decoder)
        for decoder in (decode_client, decode_server, decode)
    )
    # Bounded by time on slow machines; still a real run.
    assert count >= 10_000


@pytest.mark.parametrize("value", ["text frame", None, 17, [b"\x80"]])
def test_non_bytes_inputs_are_malformed(value: object) -> None:
    with pytest.raises(MalformedFrame):
        decode(value)  # type: ignore[arg-type]


def test_bytes_like_inputs_decode_as_bytes() -> None:
    frame = encode(examples()[0][1])
    assert decode(bytearray(frame)) == decode(memoryview(frame)) == decode(frame)  # type: ignore[arg-type]
