"""The settings' declarations: :class:`Settings`, a field per setting with its type,
default and help text (:func:`about`), and what a process makes of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from server.config.values import network
from server.logs import LogFormat, LogLevel


def about(
    help: str,
    *,
    flag: str | None = None,
    shown: str | None = None,
    parse: Callable[[str], Any] | None = None,
) -> dict[str, Any]:
    """A setting's declaration, besides its name, type and default (the field's): its help
    text; ``flag`` if it is not the field's name spelled ``--like-this``; ``shown``: how
    ``--help`` names the default, where the value itself would not say it; ``parse``:
    how one value is read and checked, where the type alone does not say it."""
    return {"help": help, "flag": flag, "shown": shown, "parse": parse}


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything a server process is configured with (printed at start, secret masked)."""

    host: str = field(
        default="127.0.0.1", metadata=about("address to listen on (0.0.0.0: every interface)")
    )
    port: int = field(
        default=8765,
        metadata=about("port of the WebSocket and the HTTP endpoints (0: any free one)"),
    )
    redis_url: str | None = field(
        default=None,
        metadata=about(
            "an external Redis: redis://, rediss:// or unix:// URL, its sentinels: "
            "redis+sentinel://host:port,host:port/service, or a Redis Cluster: "
            "redis+cluster://host:port,host:port",
            shown="a redis-server started under DATA_DIR/redis",
        ),
    )
    redis_replicas: int | None = field(
        default=None,
        metadata=about(
            "acknowledge a change once this many replicas hold it (WAIT); 0: do not wait",
            shown="1 through Sentinel, else 0",
        ),
    )
    redis_wait_ms: int = field(
        default=1000,
        metadata=about(
            "how long a change waits for its replicas before the table refuses it as "
            "unavailable (retry)"
        ),
    )
    data_dir: Path = field(
        default=Path("data"), metadata=about("folder of the token secret and the embedded Redis")
    )
    tables_file: Path | None = field(
        default=None,
        metadata=about(
            "the tables to host (a TOML file)", shown="the tables shipped with the server"
        ),
    )
    token_secret: str | None = field(
        default=None,
        metadata=about(
            "HMAC secret of the login tokens, 16 bytes or more",
            shown="one made once and kept in DATA_DIR/token-secret",
        ),
    )
    guests: bool = field(default=True, metadata=about("allow clients without a token (yes/no)"))
    guest_balance: int = field(
        default=10_000, metadata=about("chips a new guest account starts with")
    )
    guest_lifetime_ms: int = field(
        default=24 * 3600 * 1000,
        metadata=about(
            "how long a guest's session lasts at most, from the guest's creation (then the "
            "connection closes and the resume is refused)"
        ),
    )
    guest_idle_ms: int = field(
        default=2 * 3600 * 1000,
        metadata=about(
            "a guest inactive this long is closed: its chips go, its history stays in the "
            "archive (0: never; keep it above the session's hour)"
        ),
    )
    guests_per_minute: int = field(
        default=300, metadata=about("new guests a minute at most, in total (0: no limit)")
    )
    guests_per_address: int = field(
        default=30,
        metadata=about("new guests a minute at most from one client address (0: no limit)"),
    )
    guest_address_header: str | None = field(
        default=None,
        metadata=about(
            "deprecated, read as --forwarded-header (and only from a --trusted-proxy)",
            shown="--forwarded-header",
        ),
    )
    # --- Operator identity: players signed in by the operator's JWTs, checked against
    # the operator's keys (a JWKS at a URL or in a file; server/auth/operator.py). Unset
    # (no URL, no file): only this server's own tokens and guests.
    jwt_jwks_url: str | None = field(
        default=None,
        metadata=about(
            "the operator's JWKS URL: players may sign in with JWTs it signs",
            shown="none (no operator JWTs)",
        ),
    )
    jwt_jwks_file: Path | None = field(
        default=None,
        metadata=about(
            "the operator's JWKS in a file, in place of a URL", shown="none (no operator JWTs)"
        ),
    )
    jwt_issuer: str | None = field(
        default=None,
        metadata=about("the 'iss' an operator JWT must carry (required with a JWKS)"),
    )
    jwt_audience: str | None = field(
        default=None,
        metadata=about("the 'aud' an operator JWT must carry (required with a JWKS)"),
    )
    jwt_algorithms: tuple[str, ...] = field(
        default=("RS256", "ES256", "EdDSA"),
        metadata=about(
            "an algorithm operator JWTs may be signed with: RS256, ES256 or EdDSA (repeat "
            "the flag; the variable: comma-separated)",
            flag="--jwt-algorithm",
            shown="RS256,ES256,EdDSA",
        ),
    )
    jwt_player_claim: str = field(
        default="sub", metadata=about("the claim holding the player id (1 to 32 of A-Za-z0-9_.-)")
    )
    jwt_name_claim: str = field(
        default="name", metadata=about("the claim holding the player's display name")
    )
    jwt_roles_claim: str = field(
        default="roles",
        metadata=about("the claim holding the player's roles ('admin' opens the operator API)"),
    )
    jwt_leeway_ms: int = field(
        default=30_000,
        metadata=about("clock skew allowed on an operator JWT's exp and nbf (0 to 300 s)"),
    )
    jwt_jwks_max_age_ms: int = field(
        default=3_600_000,
        metadata=about("how long the operator's keys are kept before reading again"),
    )
    jwt_jwks_refresh_ms: int = field(
        default=10_000,
        metadata=about(
            "the operator's keys are read again at most this often (a token naming an "
            "unknown key asks for it)"
        ),
    )
    archive_url: str | None = field(
        default=None,
        metadata=about(
            "where settled rounds and old ledger entries go: postgresql://user:pw@host/db, "
            "or sqlite:PATH; 'off' keeps everything in Redis",
            shown="sqlite in DATA_DIR/archive.sqlite3",
        ),
    )
    archive_after_ms: int = field(
        default=3600 * 1000,
        metadata=about("how long ledger entries and game logs stay in Redis before moving"),
    )
    archive_every_ms: int = field(
        default=30_000, metadata=about("how often the archiver looks for what to move")
    )
    origins: tuple[str, ...] = field(
        default=(),
        metadata=about(
            "an allowed Origin header (repeat the flag; the variable: comma-separated)",
            flag="--origin",
            shown="any",
        ),
    )
    max_connections: int = field(
        default=20_000,
        metadata=about("open connections; past it a new one is closed with 1013 (try later)"),
    )
    # --- The door: what one client address may hold, and its real address behind a
    # proxy (server/gateway/admission.py, server/gateway/address.py) ---
    connections_per_address: int = field(
        default=1000,
        metadata=about(
            "open connections from one client address (a casino's players may share one "
            "behind NAT); past it a new one is closed with 1013 (0: no limit)"
        ),
    )
    handshakes_per_address: int = field(
        default=100,
        metadata=about(
            "connections from one client address that have not said hello yet; past it "
            "a new one is closed with 1013 (0: no limit)"
        ),
    )
    trusted_proxies: tuple[str, ...] = field(
        default=(),
        metadata=about(
            "an address or CIDR of your proxy (balancer), whose --forwarded-header gives "
            "the client's address (repeat the flag; the variable: comma-separated); from "
            "any other peer the header is ignored",
            flag="--trusted-proxy",
            shown="none: the connection's own address counts",
            parse=network,
        ),
    )
    forwarded_header: str = field(
        default="X-Forwarded-For",
        metadata=about(
            "the header in which a trusted proxy passes the client's address: "
            "X-Forwarded-For (HAProxy's option forwardfor) or Forwarded (RFC 7239)"
        ),
    )
    rate_per_s: int = field(
        default=20,
        metadata=about(
            "messages a connection may send per second (bursts of twice that)", flag="--rate"
        ),
    )
    send_queue: int = field(
        default=256,
        metadata=about("frames queued for a client before it is dropped as too slow (1013)"),
    )
    heartbeat_ms: int = field(
        default=20_000,
        metadata=about(
            "the heartbeat told in welcome: a client silent for twice it is closed (4004); "
            "its pings and the server's pongs keep idle connections open through proxies"
        ),
    )
    handshake_ms: int = field(
        default=10_000,
        metadata=about("time a new connection has to send its hello"),
    )
    lease_ms: int = field(
        default=2_000,
        metadata=about(
            "table lease and node registration lifetime: a crashed node's tables are "
            "held elsewhere within about 1.25 times this"
        ),
    )
    node_name: str | None = field(
        default=None,
        metadata=about(
            "this node's name among the nodes on one Redis (letters, digits, '.', '_', "
            "'-'): tables are placed by name, so a node restarted under its name gets "
            "its tables back",
            shown="<host name>-<port>",
        ),
    )
    # Wallet mode: the players' balances live in the operator's wallet (deploy/README.md).
    wallet_url: str | None = field(
        default=None,
        metadata=about(
            "the operator's wallet API (protocol/wallet-api.yaml): buy-ins are debits there, "
            "cash-outs and released seats credits",
            shown="off: the built-in accounts",
        ),
    )
    wallet_secret: str | None = field(
        default=None, metadata=about("the bearer secret the wallet expects (wallet mode)")
    )
    wallet_timeout_ms: int = field(
        default=3000,
        metadata=about("how long a call to the wallet may take before its outcome is unknown"),
    )
    wallet_resolve_after_ms: int = field(
        default=30_000,
        metadata=about(
            "a debit whose request is gone (a crash, no answer) is resolved with the wallet "
            "once untouched this long"
        ),
    )
    server_name: str = field(default="paigow", metadata=about("name reported in server_info"))
    log_level: LogLevel = field(
        default="info",
        metadata=about("the least important records logged: debug, info, warning or error"),
    )
    log_format: LogFormat = field(
        default="text",
        metadata=about("the log's lines: text, or json (one object per line, for collectors)"),
    )
    # The operator's API and console (server/admin): off unless a port is given, and
    # then on loopback unless told otherwise; every route needs an admin credential.
    admin_port: int | None = field(
        default=None,
        metadata=about(
            "port of the operator's HTTP API and console (0: any free one)", shown="off"
        ),
    )
    admin_host: str = field(
        default="127.0.0.1",
        metadata=about("address of the operator's API (loopback, or a private network behind TLS)"),
    )

    def replicas_to_wait_for(self) -> int:
        """``redis_replicas``, or its default: 1 through Sentinel (there are replicas to
        fail over to), else 0."""
        if self.redis_replicas is not None:
            return self.redis_replicas
        scheme = (self.redis_url or "").split(":", 1)[0].lower()
        return 1 if scheme.endswith("+sentinel") else 0

    def archive_target(self) -> str | None:
        """The archive's URL: ``archive_url``, or SQLite in the data folder by default;
        None when it is ``off``."""
        if self.archive_url is None:
            return f"sqlite:{self.data_dir / 'archive.sqlite3'}"
        if self.archive_url.strip().lower() in ("off", "no", "none"):
            return None
        return self.archive_url

    def describe(self) -> list[tuple[str, str]]:
        """(name, value) pairs for the start-up banner, with the secret masked."""
        rows = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "token_secret":
                value = "(set)" if value else f"(kept in {self.data_dir / 'token-secret'})"
            elif f.name == "redis_url":
                embedded = f"(embedded, under {self.data_dir / 'redis'})"
                value = embedded if value is None else redacted_url(value)
            elif f.name == "redis_replicas" and value is None:
                value = f"{self.replicas_to_wait_for()} (the default)"
            elif f.name == "tables_file" and value is None:
                value = "(built-in tables)"
            elif f.name == "archive_url":
                value = self.archive_target() or "off"
                value = redacted_url(value) if value != "off" else value
            elif f.name == "guest_address_header" and value is None:
                value = "(unset: --forwarded-header)"
            elif f.name in ("jwt_jwks_url", "jwt_jwks_file") and value is None:
                value = "(none)"
            elif f.name == "jwt_jwks_url":
                value = redacted_url(value)
            elif f.name == "wallet_secret":
                value = "(set)" if value else "(none)"
            elif f.name == "wallet_url":
                value = redacted_url(value) if value else "(off: the built-in accounts)"
            elif f.name == "node_name" and value is None:
                value = "(<host name>-<port>)"
            elif f.name == "admin_port" and value is None:
                value = "off"
            rows.append((f.name, str(value)))
        return rows


def redacted_url(url: str) -> str:
    """``url`` with its password (if any) masked, fit to be printed or logged."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))
