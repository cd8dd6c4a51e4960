"""The one exception the table state machine raises: an event that is not legal now."""

from __future__ import annotations

from protocol.errors import ErrorCode


class TableError(Exception):
    """An event refused by the table; the state is unchanged.

    ``code`` is the protocol's error code the client receives, ``message`` a
    sentence a person can act on.
    """

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"TableError({self.code.value!r}, {self.message!r})"
