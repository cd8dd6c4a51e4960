"""The server's settings: flags first, then ``PAIGOW_*`` environment variables, then defaults."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, fields
from pathlib import Path

_ENV_PREFIX = "PAIGOW_"


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything a server process is configured with (printed at start, secret masked)."""

    host: str = "127.0.0.1"
    port: int = 8765
    redis_url: str | None = None  # None: start a private redis-server under data_dir
    data_dir: Path = Path("data")
    tables_file: Path | None = None  # None: the tables shipped with the server
    token_secret: str | None = None  # None: a secret kept in data_dir (created once)
    guests: bool = True
    guest_balance: int = 10_000
    origins: tuple[str, ...] = ()  # allowed Origin headers; empty: any
    max_connections: int = 20_000
    rate_per_s: int = 20  # messages a connection may send per second (burst: 2x)
    send_queue: int = 256  # outgoing messages queued per connection before it is dropped
    heartbeat_ms: int = 20_000
    handshake_ms: int = 10_000  # time to send hello (PROTOCOL.md: 10 s)
    lease_ms: int = 5_000
    server_name: str = "paigow"

    def describe(self) -> list[tuple[str, str]]:
        """(name, value) pairs for the start-up banner, with the secret masked."""
        rows = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "token_secret":
                value = "(set)" if value else f"(kept in {self.data_dir / 'token-secret'})"
            elif f.name == "redis_url" and value is None:
                value = f"(embedded, under {self.data_dir / 'redis'})"
            elif f.name == "tables_file" and value is None:
                value = "(built-in tables)"
            rows.append((f.name, str(value)))
        return rows


def _env(name: str) -> str | None:
    """``PAIGOW_<NAME>``; an empty value counts as unset (as compose files often leave it)."""
    return os.environ.get(_ENV_PREFIX + name.upper()) or None


def _bool(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not a boolean (yes/no)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The serve command's flags; each defaults to its ``PAIGOW_*`` variable."""
    d = Settings()
    parser.add_argument("--host", default=_env("host") or d.host)
    parser.add_argument("--port", type=int, default=int(_env("port") or d.port))
    parser.add_argument(
        "--redis-url", default=_env("redis_url"), help="an external Redis (default: embedded)"
    )
    parser.add_argument("--data-dir", type=Path, default=Path(_env("data_dir") or d.data_dir))
    parser.add_argument("--tables-file", type=Path, default=_env("tables_file"))
    parser.add_argument("--token-secret", default=_env("token_secret"))
    parser.add_argument(
        "--guests", type=_bool, default=_bool(_env("guests") or "yes"), help="yes/no"
    )
    parser.add_argument(
        "--guest-balance", type=int, default=int(_env("guest_balance") or d.guest_balance)
    )
    parser.add_argument(
        "--origin",
        dest="origins",
        action="append",
        default=[o for o in (_env("origins") or "").split(",") if o],
        help="an allowed Origin (repeat); default: any",
    )
    parser.add_argument(
        "--max-connections", type=int, default=int(_env("max_connections") or d.max_connections)
    )
    parser.add_argument("--rate", type=int, default=int(_env("rate_per_s") or d.rate_per_s))
    parser.add_argument(
        "--send-queue",
        type=int,
        default=int(_env("send_queue") or d.send_queue),
        help="frames queued for a client before it is dropped as too slow",
    )
    parser.add_argument(
        "--heartbeat-ms", type=int, default=int(_env("heartbeat_ms") or d.heartbeat_ms)
    )
    parser.add_argument(
        "--handshake-ms", type=int, default=int(_env("handshake_ms") or d.handshake_ms)
    )
    parser.add_argument("--lease-ms", type=int, default=int(_env("lease_ms") or d.lease_ms))
    parser.add_argument("--server-name", default=_env("server_name") or d.server_name)


def from_arguments(args: argparse.Namespace) -> Settings:
    """Settings from parsed flags (see :func:`add_arguments`)."""
    return Settings(
        host=args.host,
        port=args.port,
        redis_url=args.redis_url,
        data_dir=args.data_dir,
        tables_file=Path(args.tables_file) if args.tables_file else None,
        token_secret=args.token_secret,
        guests=args.guests,
        guest_balance=args.guest_balance,
        origins=tuple(args.origins),
        max_connections=args.max_connections,
        rate_per_s=args.rate,
        send_queue=args.send_queue,
        heartbeat_ms=args.heartbeat_ms,
        handshake_ms=args.handshake_ms,
        lease_ms=args.lease_ms,
        server_name=args.server_name,
    )
