"""The browser table: the static files of the web client, on the WebSocket's port.

:func:`respond` answers a plain HTTP ``GET`` for a file under ``static/`` (``/`` is
``index.html``) and leaves WebSocket upgrades to the gateway (it returns None for
them), so the page and its WebSocket share one origin and the page's
Content-Security-Policy can say ``connect-src 'self'``. There is no build step: the
files are served as they are in the package.

Caching: the vendored library sits in a folder named for its pinned version, so it
is cached for a year (``immutable``); every other file may change with any release
and is revalidated on each load (``no-cache`` with a strong ``ETag``, a match gets
``304``). Every answer carries the security headers of :data:`SECURITY_HEADERS`.

Compression: a file of :data:`MIN_GZIP` bytes or more is also kept gzipped (made once,
when the file is first read) and sent so to a client whose ``Accept-Encoding``
accepts gzip, with ``Content-Encoding: gzip``; each answer says ``Vary:
Accept-Encoding`` and the gzipped one has its own strong ``ETag`` (another
representation), so a cache never mixes them.
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

STATIC = Path(__file__).resolve().parent / "static"

TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".json": "application/json",
    ".txt": "text/plain; charset=utf-8",
    ".ico": "image/x-icon",
}

# Scripts and styles from this origin only (no inline code, no eval); the WebSocket is
# this origin's too ('self' covers ws: and wss: on the same host and port, CSP level 3).
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    ("Content-Security-Policy", CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("X-Frame-Options", "DENY"),
)
REVALIDATE = "no-cache"
IMMUTABLE = "public, max-age=31536000, immutable"
VENDOR_PREFIX = "vendor/"
MIN_GZIP = 1024  # below, gzip's header and checksum eat most of what it saves


@dataclass(frozen=True, slots=True)
class StaticFile:
    """A file's bytes and the headers that describe them."""

    body: bytes
    content_type: str
    etag: str
    cache_control: str
    gzipped: bytes | None = None  # the body gzipped, when that is worth it
    gzip_etag: str | None = None


_cache: dict[str, tuple[int, StaticFile]] = {}


def static_file(path: str) -> StaticFile | None:
    """The file a URL path names under :data:`STATIC`, or None (no such file, a folder,
    a path leaving the folder, a hidden file or a type not served)."""
    rel = PurePosixPath(unquote(path).lstrip("/") or "index.html")
    if any(part in ("", ".", "..") or part.startswith(".") for part in rel.parts):
        return None
    full = STATIC.joinpath(*rel.parts)
    content_type = TYPES.get(full.suffix)
    if content_type is None:
        return None
    try:
        mtime = full.stat().st_mtime_ns
        if not full.is_file():
            return None
        cached = _cache.get(str(rel))
        if cached is not None and cached[0] == mtime:
            return cached[1]
        body = full.read_bytes()
    except OSError:
        return None
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    cache = IMMUTABLE if str(rel).startswith(VENDOR_PREFIX) else REVALIDATE
    packed = _gzip(body)
    gzip_etag = None if packed is None else etag[:-1] + '-gzip"'
    found = StaticFile(body, content_type, etag, cache, packed, gzip_etag)
    _cache[str(rel)] = (mtime, found)
    return found


def _gzip(body: bytes) -> bytes | None:
    """The body gzipped (the same bytes at each start: no timestamp), or None when it
    is too small or does not shrink."""
    if len(body) < MIN_GZIP:
        return None
    packed = gzip.compress(body, compresslevel=9, mtime=0)
    return packed if len(packed) < len(body) else None


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an ``Accept-Encoding`` value accepts gzip (RFC 9110, 12.5.3): ``gzip``
    (or ``x-gzip``) or ``*`` with a q-value above 0; an explicit gzip entry wins."""
    star: bool | None = None
    for item in accept_encoding.split(","):
        coding, _, params = item.strip().partition(";")
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        name = coding.strip().lower()
        if name in ("gzip", "x-gzip"):
            return q > 0
        if name == "*":
            star = q > 0
    return bool(star)


def _response(status: HTTPStatus, headers: list[tuple[str, str]], body: bytes) -> Response:
    all_headers = Headers([*headers, *SECURITY_HEADERS, ("Content-Length", str(len(body)))])
    return Response(status.value, status.phrase, all_headers, body)


def respond(request: Request) -> Response | None:
    """The answer to a plain HTTP request for the web client; None for a WebSocket
    upgrade (the gateway's), so one origin serves both."""
    if "websocket" in request.headers.get("Upgrade", "").lower():
        return None
    path = request.path.split("?", 1)[0]
    found = static_file(path)
    if found is None:
        body = b"not found\n"
        return _response(
            HTTPStatus.NOT_FOUND, [("Content-Type", "text/plain; charset=utf-8")], body
        )
    packed = found.gzipped is not None and accepts_gzip(request.headers.get("Accept-Encoding", ""))
    etag = found.gzip_etag if packed and found.gzip_etag else found.etag
    body = found.gzipped if packed and found.gzipped is not None else found.body
    headers = [("ETag", etag), ("Cache-Control", found.cache_control), ("Vary", "Accept-Encoding")]
    if etag in (tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")):
        return _response(HTTPStatus.NOT_MODIFIED, headers, b"")
    encoding = [("Content-Encoding", "gzip")] if packed else []
    headers = [("Content-Type", found.content_type), *encoding, *headers]
    return _response(HTTPStatus.OK, headers, body)
