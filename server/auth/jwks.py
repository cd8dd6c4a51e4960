"""The operator's signing keys (a JWKS, RFC 7517), fetched over HTTP or read from a file,
for :mod:`server.auth.operator_jwt` to check their JWTs with.

:meth:`KeySet.find` answers the key a token's ``kid`` names. The keys are kept and read
again when they are older than ``max_age_s``, or when a token names a ``kid`` they do not
hold (the operator rotated its keys) -- but not more often than once every
``min_refresh_s``, whatever the tokens name: a flood of made-up kids costs the operator
one request per interval. A fetch that fails keeps the keys already held (the operator's
login service may be briefly down; its keys have not changed for that).

Only public signing keys are kept: a key marked ``"use": "enc"``, a symmetric key
(``kty: oct``: HS256 with a public key as its secret is the classic confusion) or one
PyJWT cannot read is skipped, with the others kept.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import jwt

log = logging.getLogger(__name__)

MAX_JWKS_BYTES = 1 << 20  # a key set is a few kilobytes; more is refused unread


class JwksUnavailable(Exception):
    """The key set could not be read (nor was one held before)."""


def parse_jwks(data: object) -> dict[str | None, jwt.PyJWK]:
    """The public signing keys of a JWKS document, by ``kid`` (None: a key without one).

    Raises :class:`JwksUnavailable` when ``data`` is no key set, or holds no usable key.
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("keys"), list):
        raise JwksUnavailable("not a JWKS: an object with a 'keys' array")
    keys: dict[str | None, jwt.PyJWK] = {}
    for entry in data["keys"]:
        if not isinstance(entry, Mapping):
            continue
        if entry.get("use", "sig") != "sig" or entry.get("kty") == "oct":
            continue
        try:
            key = jwt.PyJWK(dict(entry))
        except jwt.PyJWTError as exc:
            log.warning("JWKS key %r skipped: %s", entry.get("kid"), exc)
            continue
        kid = entry.get("kid")
        keys[kid if isinstance(kid, str) else None] = key
    if not keys:
        raise JwksUnavailable("the JWKS holds no usable signing key")
    return keys


class KeySet:
    """Keys from ``load`` (an awaitable reading the JWKS document), kept as the module's
    docstring says. ``clock``: monotonic seconds."""

    def __init__(
        self,
        load: Callable[[], Any],
        *,
        max_age_s: float = 3600.0,
        min_refresh_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        source: str = "JWKS",
    ) -> None:
        self._load = load
        self.max_age_s = max_age_s
        self.min_refresh_s = min_refresh_s
        self._clock = clock
        self.source = source
        self._keys: dict[str | None, jwt.PyJWK] | None = None
        self._fetched_at = float("-inf")  # when the keys held were read
        self._tried_at = float("-inf")  # when a read was last tried, failed or not
        self._lock = asyncio.Lock()
        self.fetches = 0
        """Reads tried so far (for the tests and the curious)."""

    async def find(self, kid: str | None) -> jwt.PyJWK | None:
        """The key named ``kid`` (None: the token names none, and the set holds one key
        only), reading the set again where the module's docstring says; None when there
        is no such key even after that. Raises :class:`JwksUnavailable` when no key
        set was ever read."""
        now = self._clock()
        stale = self._keys is None or now - self._fetched_at >= self.max_age_s
        if stale and self._may_read(now):
            await self._refresh(now)
        key = self._pick(kid)
        if key is None and self._keys is not None and self._may_read(self._clock()):
            await self._refresh(self._clock())
            key = self._pick(kid)
        if self._keys is None:
            raise JwksUnavailable(f"no keys could be read from {self.source}")
        return key

    def _may_read(self, now: float) -> bool:
        # Whatever asks (a stale set, an unknown kid, a failed read), at most one read
        # an interval: the operator is never hammered.
        return now - self._tried_at >= self.min_refresh_s

    def _pick(self, kid: str | None) -> jwt.PyJWK | None:
        if self._keys is None:
            return None
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    async def _refresh(self, asked_at: float) -> None:
        async with self._lock:
            if self._tried_at >= asked_at:
                return  # another caller read the set while this one waited
            self._tried_at = self._clock()
            self.fetches += 1
            try:
                keys = parse_jwks(await self._load())
            except (JwksUnavailable, OSError, ValueError, aiohttp.ClientError, TimeoutError) as exc:
                log.warning("operator keys not read from %s: %s", self.source, exc)
                return
            self._keys = keys
            self._fetched_at = self._tried_at

    async def close(self) -> None:
        """Release what reading the keys holds (an HTTP client)."""


class UrlKeySet(KeySet):
    """The key set at ``url`` (fetched with aiohttp, ``timeout_s`` a request)."""

    def __init__(self, url: str, *, timeout_s: float = 5.0, **kwargs: Any) -> None:
        super().__init__(self._fetch, source=url, **kwargs)
        self.url = url
        self.timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._http: aiohttp.ClientSession | None = None

    async def _fetch(self) -> object:
        if self._http is None:
            self._http = aiohttp.ClientSession(timeout=self.timeout)
        async with self._http.get(self.url, headers={"Accept": "application/json"}) as response:
            if response.status != 200:
                raise JwksUnavailable(f"HTTP {response.status}")
            body = await response.content.read(MAX_JWKS_BYTES + 1)
            if len(body) > MAX_JWKS_BYTES:
                raise JwksUnavailable("the JWKS is too large")
            return json.loads(body)

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None


class FileKeySet(KeySet):
    """The key set in the file at ``path`` (read again as the module's docstring says;
    a file replaced by the operator is picked up at the next refresh)."""

    def __init__(self, path: Path, **kwargs: Any) -> None:
        super().__init__(self._read, source=os.fspath(path), **kwargs)
        self.path = path

    async def _read(self) -> object:
        text = await asyncio.to_thread(self.path.read_bytes)
        if len(text) > MAX_JWKS_BYTES:
            raise JwksUnavailable("the JWKS is too large")
        return json.loads(text)
