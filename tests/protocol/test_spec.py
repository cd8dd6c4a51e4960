"""PROTOCOL.md and the code agree: every message, field, error code and close code."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from protocol import CLIENT_MESSAGES, CLOSES, ERRORS, RESULT_CLASSES, SERVER_MESSAGES
from protocol import structs as S
from protocol.cards import cards_text
from protocol.examples import SEED
from protocol.fairness import commitment, deal
from protocol.schema import struct_spec

SPEC = (Path(__file__).parents[2] / "protocol" / "PROTOCOL.md").read_text(encoding="utf-8")
# Described once for all messages (sections 3 and 9), not in each message's table.
ENVELOPE = {"rid", "table_id", "seq"}
NESTED = (
    S.TableSeq,
    S.TableSummary,
    S.SeatView,
    S.HandView,
    S.SeatResult,
    S.SeatRefund,
    S.TableBalance,
    S.PayLine,
    S.RoundRecord,
    S.JackpotMeter,
    S.JackpotLine,
    S.JackpotInfo,
)


def _sections(title: str) -> str:
    """The text of every section headed `` `title` `` (a type can head two: request, result)."""
    pattern = re.compile(rf"^(#+) `{re.escape(title)}`\s*$", re.MULTILINE)
    texts = []
    for match in pattern.finditer(SPEC):
        level = len(match.group(1))
        end = re.compile(rf"^#{{1,{level}}} ", re.MULTILINE).search(SPEC, match.end())
        texts.append(SPEC[match.end() : end.start() if end else len(SPEC)])
    assert texts, f"no section for `{title}` in PROTOCOL.md"
    return "\n".join(texts)


def _check_fields(cls: type[Any], title: str) -> None:
    text = _sections(title)
    for field in struct_spec(cls).fields:
        if field.name not in ENVELOPE:
            assert f"| `{field.name}` |" in text, f"{title}: field {field.name} not documented"


@pytest.mark.parametrize("cls", [*CLIENT_MESSAGES, *SERVER_MESSAGES], ids=lambda c: c.TYPE)
def test_every_message_and_field_is_documented(cls: type[Any]) -> None:
    _check_fields(cls, cls.TYPE)


@pytest.mark.parametrize("cls", RESULT_CLASSES, ids=lambda c: c.KIND)
def test_every_result_and_field_is_documented(cls: type[Any]) -> None:
    _check_fields(cls, cls.KIND)


@pytest.mark.parametrize("cls", NESTED, ids=lambda c: c.__name__)
def test_every_nested_map_and_field_is_documented(cls: type[Any]) -> None:
    _check_fields(cls, cls.__name__)


def test_error_table_matches_codes() -> None:
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| .* \| (yes|no) \|$", SPEC, re.MULTILINE))
    assert {code: info.retryable for code, info in ERRORS.items()} == {
        code: answer == "yes" for code, answer in rows.items()
    }


def test_close_table_matches_codes() -> None:
    documented = {int(c) for c in re.findall(r"^\| (\d{4}) \|", SPEC, re.MULTILINE)}
    assert documented == {int(code) for code in CLOSES}


def test_worked_fairness_example_is_what_fairness_computes() -> None:
    assert SEED.hex() in SPEC
    assert commitment(SEED) in SPEC
    for hand in deal(SEED):
        assert f"| {' '.join(map(str, hand))} | {cards_text(hand)} |" in SPEC
