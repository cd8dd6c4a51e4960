"""The web client's message tables are generated from protocol/ (make schema-js): the
committed file is what the generator writes now."""

from __future__ import annotations

from protocol.messages import SERVER_MESSAGES
from protocol.requests import CLIENT_MESSAGES
from protocol.schema import struct_spec
from protocol.schema_js import render
from protocol.structs import RESULT_CLASSES
from server.web import STATIC


def test_the_committed_schema_js_is_the_generated_one() -> None:
    committed = (STATIC / "js" / "schema.js").read_text()
    assert committed == render(), "server/web/static/js/schema.js is stale: run make schema-js"


def test_every_message_class_has_its_table() -> None:
    text = render()
    for cls in (*CLIENT_MESSAGES, *SERVER_MESSAGES, *RESULT_CLASSES):
        tag = struct_spec(cls).tag
        assert f"\n  {tag}: [" in text, cls
