"""The page's files compressed on the wire when the browser accepts it (gzip), as they
are when it does not; the bytes of both are printed (the figure of the issue)."""

from __future__ import annotations

import asyncio
import gzip
import http.client

import pytest

from server.app import App
from server.web import STATIC

# Every file the page loads (the vendored library, the styles, each module).
FILES = [
    "/",
    "/css/app.css",
    "/favicon.svg",
    "/vendor/msgpack-3.1.3/msgpack.min.js",
    *sorted("/" + str(p.relative_to(STATIC)) for p in (STATIC / "js").rglob("*.js")),
]


def fetch(port: int, path: str, headers: dict[str, str]) -> tuple[http.client.HTTPResponse, bytes]:
    """A GET's response and its body as it came over the wire (still encoded)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response, body


@pytest.mark.asyncio
async def test_static_files_are_gzipped_when_accepted_and_plain_otherwise(app: App) -> None:
    plain_total = gzip_total = 0
    for path in FILES:
        plain, plain_body = await asyncio.to_thread(fetch, app.port, path, {})
        assert plain.status == 200, path
        assert plain.getheader("Content-Encoding") is None, path
        packed, packed_body = await asyncio.to_thread(
            fetch, app.port, path, {"Accept-Encoding": "gzip, deflate, br"}
        )
        assert packed.status == 200, path
        assert packed.getheader("Vary") == "Accept-Encoding", path
        assert int(packed.getheader("Content-Length") or -1) == len(packed_body), path
        if packed.getheader("Content-Encoding") == "gzip":
            assert gzip.decompress(packed_body) == plain_body, path
            # Another representation, another strong ETag; each revalidates as itself.
            assert packed.getheader("ETag") != plain.getheader("ETag"), path
            again, _ = await asyncio.to_thread(
                fetch,
                app.port,
                path,
                {"Accept-Encoding": "gzip", "If-None-Match": packed.getheader("ETag") or ""},
            )
            assert again.status == 304, path
        else:  # too small to gain anything: sent as it is
            assert packed_body == plain_body, path
            assert len(plain_body) < 1024, path
        plain_total += len(plain_body)
        gzip_total += len(packed_body)
    # A refusal of gzip (q=0), or an encoding it does not know, gets the plain bytes.
    for accept in ("gzip;q=0", "br", "identity"):
        refused, _ = await asyncio.to_thread(fetch, app.port, "/", {"Accept-Encoding": accept})
        assert refused.getheader("Content-Encoding") is None, accept
    print(f"web client on the wire: {plain_total} bytes plain, {gzip_total} gzipped")
    assert gzip_total < plain_total / 2
