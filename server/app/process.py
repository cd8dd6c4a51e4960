"""The server process's life: :func:`run` starts a node (:class:`~server.app.node.App`),
says where it listens, and stops it on SIGTERM or SIGINT (or an operator's drain)."""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
from typing import NoReturn

from server.app.node import App
from server.collector import THRESHOLDS, collect_on_a_timer
from server.config import Settings
from server.tasks import cancel_and_wait

log = logging.getLogger(__name__)


async def run(settings: Settings, ready: asyncio.Event | None = None) -> None:
    """Run until SIGTERM or SIGINT, then stop gracefully."""
    app = App(settings)
    stop = asyncio.Event()
    app.on_drain = stop.set  # an operator's drain stops the process as SIGTERM does
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    collector: asyncio.Task[NoReturn] | None = None
    try:
        await app.start()
        # With thousands of connections, full collections stall the loop (docs/DESIGN.md,
        # "The event loop and the collector"); everything built at start-up is
        # long-lived, so it leaves the collector.
        gc.collect()
        gc.freeze()
        # The young and middle generations are collected on a timer, the old one
        # hourly (server/collector.py).
        gc.set_threshold(*THRESHOLDS)
        collector = asyncio.create_task(collect_on_a_timer(), name="gc")
        # The address a person opens first; the "listening" line, last, is what scripts
        # and tests wait for.
        lines = [
            f"paigow-server: to play, open {browser_url(settings.host, app.port)} in a browser",
            f"paigow-server listening on ws://{settings.host}:{app.port}/",
        ]
        for line in lines:
            if settings.log_format == "json":  # every line of the output is then JSON
                log.info(line)
            else:
                print(line, flush=True)
        if app.admin is not None:
            log.info("operator API on http://%s:%d/", settings.admin_host, app.admin.port)
        if ready is not None:
            ready.set()
        await stop.wait()
    finally:
        if collector is not None:
            await cancel_and_wait(collector)
        await app.stop()


def browser_url(host: str, port: int) -> str:
    """The ``http://`` address a person opens to reach a server listening on ``host``:
    a wildcard address (every interface) is opened as ``localhost``."""
    if host in ("", "0.0.0.0", "::", "[::]"):
        host = "localhost"
    elif ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address
    return f"http://{host}:{port}/"
