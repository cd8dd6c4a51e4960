"""The web client's files as the server serves them: headers, caching, what is refused.

No browser here: plain HTTP against a real server, and the files themselves.
"""

from __future__ import annotations

import asyncio
import hashlib
import http.client
import re

import pytest

from server.app import App
from server.web import CSP, STATIC
from tests.server.helpers import Client

VENDOR = STATIC / "vendor" / "msgpack-3.1.3"


def get(port: int, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    """A GET's response, its body read (blocking: call it in a thread)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", path, headers=headers or {})
    response = conn.getresponse()
    response.read()
    conn.close()
    return response


@pytest.mark.asyncio
async def test_the_page_is_served_with_its_security_headers(app: App) -> None:
    page = await asyncio.to_thread(get, app.port, "/")
    assert page.status == 200
    assert page.getheader("Content-Type") == "text/html; charset=utf-8"
    assert page.getheader("Content-Security-Policy") == CSP
    assert "script-src 'self'" in CSP
    assert "connect-src 'self'" in CSP
    assert page.getheader("X-Content-Type-Options") == "nosniff"
    assert page.getheader("Cache-Control") == "no-cache"
    etag = page.getheader("ETag")
    assert etag
    again = await asyncio.to_thread(get, app.port, "/", {"If-None-Match": etag})
    assert again.status == 304
    script = await asyncio.to_thread(get, app.port, "/js/main.js?v=1")
    assert script.status == 200
    assert script.getheader("Content-Type") == "text/javascript; charset=utf-8"
    library = await asyncio.to_thread(get, app.port, "/vendor/msgpack-3.1.3/msgpack.min.js")
    assert library.getheader("Cache-Control") == "public, max-age=31536000, immutable"


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "path",
    ["/nothing.js", "/../pyproject.toml", "/%2e%2e/__init__.py", "/js/", "/.hidden.js", "/x.py"],
)
async def test_other_paths_are_not_found(app: App, path: str) -> None:
    response = await asyncio.to_thread(get, app.port, path)
    assert response.status == 404


@pytest.mark.asyncio
async def test_the_websocket_shares_the_origin(app: App) -> None:
    """The page connects to /ws on its own origin; the upgrade is the gateway's."""
    client = await Client.hello(f"ws://127.0.0.1:{app.port}/ws")
    try:
        assert client.welcome is not None
    finally:
        await client.close()


def test_the_page_loads_nothing_from_elsewhere() -> None:
    """No CDN, no external font or script: every URL in the page's files is relative."""
    for path in STATIC.rglob("*"):
        if path.suffix in {".html", ".js", ".css"} and VENDOR not in path.parents:
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), path
            assert "import(" not in text or "https://" not in text, path


def test_the_vendored_library_is_the_pinned_one_with_its_licence() -> None:
    readme = (VENDOR / "README.txt").read_text(encoding="utf-8")
    assert "@msgpack/msgpack 3.1.3" in readme
    assert (VENDOR / "LICENSE.txt").read_text(encoding="utf-8").startswith("Copyright")
    for name in ("msgpack.min.js", "LICENSE.txt"):
        digest = hashlib.sha256((VENDOR / name).read_bytes()).hexdigest()
        assert f"{digest}  {name}" in readme


def test_no_script_is_over_500_lines() -> None:
    for path in STATIC.rglob("*.js"):
        if VENDOR not in path.parents:
            assert len(path.read_text(encoding="utf-8").splitlines()) <= 500, path
