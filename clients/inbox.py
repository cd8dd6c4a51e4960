"""What a session does with each frame the server sends: a reply settles its request
(an ``error`` no request waits for is a notice), a table event is applied to its table's
model and handed on, and a gap in ``seq`` asks for the table again."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from clients.errors import ClientError
from clients.events import ClientEvent, Notice, Verified
from clients.model import Applied, TableModel
from clients.pending import Pending, raw_map
from protocol.codec import decode_server
from protocol.errors import ProtocolError, UnknownMessageType
from protocol.messages import ErrorReply, JackpotChange, OkReply, Pong, SeedReveal, TableEvent

# The session's logger, as before the split: whoever quiets or reads it keeps doing so.
log = logging.getLogger("clients.session")


class Inbox:
    """The frames of one session. ``pending`` holds its requests, ``tables`` its models
    by table (``model`` gives one, created if new); ``emit`` hands an event to the
    session's listeners, and ``resync`` watches a table again after a gap. ``jackpots``:
    the meters as last told, kept up to date by the ``jackpot`` messages (minor 7)."""

    def __init__(
        self,
        pending: Pending,
        tables: Mapping[str, TableModel],
        model: Callable[[str], TableModel],
        emit: Callable[[ClientEvent], None],
        resync: Callable[[TableModel], None],
        jackpots: dict[str, int] | None = None,
    ) -> None:
        self._jackpots = jackpots if jackpots is not None else {}
        self._pending = pending
        self._tables = tables
        self._model = model
        self._emit = emit
        self._resync = resync

    def receive(self, frame: bytes | str) -> None:
        """Handle one frame from the server."""
        if isinstance(frame, str):
            log.warning("text frame from the server ignored")
            return
        try:
            message = decode_server(frame)
        except UnknownMessageType:
            self._unknown_event(frame)
            return
        except ProtocolError as exc:
            log.warning("undecodable frame from the server: %s", exc)
            self._fail_request(frame, exc)
            return
        if isinstance(message, OkReply | ErrorReply | Pong):
            if not self._pending.settle(message) and isinstance(message, ErrorReply):
                self._emit(Notice(message))
            return
        if isinstance(message, JackpotChange):
            self._jackpots[message.name] = message.meter
            self._emit(message)
            return
        self._table_event(message)

    def _table_event(self, event: TableEvent) -> None:
        model = self._model(event.table_id)
        outcome = model.apply(event)
        if outcome is Applied.GAP:
            if not model.synced or model.resyncing:
                self._resync(model)
            return
        if outcome is Applied.DUPLICATE:
            return
        self._emit(event)
        if isinstance(event, SeedReveal) and model.verification is not None:
            self._emit(Verified(model.verification))

    def _fail_request(self, frame: bytes, exc: ProtocolError) -> None:
        """An undecodable reply fails its request at once rather than by a timeout."""
        data = raw_map(frame)
        rid = data.get("rid") if data is not None else None
        self._pending.fail(rid, ClientError(f"the server's reply could not be read: {exc}"))

    def _unknown_event(self, frame: bytes) -> None:
        """A message type this client does not know: if it is a table event, count its seq."""
        data = raw_map(frame)
        if data is None:
            return
        table_id, seq = data.get("table_id"), data.get("seq")
        if isinstance(table_id, str) and type(seq) is int and table_id in self._tables:
            model = self._tables[table_id]
            if model.count_unknown(seq) is Applied.GAP:
                self._resync(model)
