"""The error tree, the error and close code tables, and version negotiation."""

from __future__ import annotations

import pytest

from protocol import errors as E
from protocol.version import MAX_SUPPORTED_VERSION, MIN_SUPPORTED_VERSION, negotiate


def _subclasses(cls: type[E.ProtocolError]) -> list[type[E.ProtocolError]]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def test_every_error_class_has_a_code_in_the_table() -> None:
    classes = _subclasses(E.ProtocolError)
    assert len(classes) >= 12
    for cls in classes:
        assert cls.code in E.ERRORS, cls


def test_decode_errors_map_to_the_four_decode_codes() -> None:
    codes = {cls.code for cls in _subclasses(E.DecodeError)}
    assert codes == {"malformed", "too_large", "bad_message", "unknown_type"}


def test_tables_cover_every_code() -> None:
    assert set(E.ERRORS) == set(E.ErrorCode)
    assert set(E.CLOSES) == set(E.CloseCode)
    assert all(4000 <= c < 5000 or 1000 <= c < 1016 for c in E.CloseCode)


def test_docstring_draws_the_whole_tree() -> None:
    doc = E.__doc__ or ""
    classes: list[type[E.ProtocolError]] = [E.ProtocolError, *_subclasses(E.ProtocolError)]
    for cls in classes:
        assert f":exc:`{cls.__name__}`" in doc, cls


def test_path_prefix() -> None:
    exc = E.OutOfRange("9 is not in 0..5", "seat")
    exc.prefix("")
    exc.prefix("[2]")
    exc.prefix("seats")
    assert exc.path == "seats[2].seat"
    assert str(exc) == "seats[2].seat: 9 is not in 0..5"


@pytest.mark.parametrize(
    ("client", "server", "chosen"),
    [
        ((1, 1), (1, 1), 1),
        ((1, 3), (1, 2), 2),
        ((2, 5), (1, 3), 3),
        ((4, 5), (1, 3), None),
        ((1, 1), (2, 3), None),
    ],
)
def test_negotiate(client: tuple[int, int], server: tuple[int, int], chosen: int | None) -> None:
    assert negotiate(*client, *server) == chosen


def test_this_server_speaks_its_own_range() -> None:
    assert negotiate(MIN_SUPPORTED_VERSION, MAX_SUPPORTED_VERSION) == MAX_SUPPORTED_VERSION
