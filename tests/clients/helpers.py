"""Shared helpers of the client tests."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from typing import Any

from rich.console import Console
from textual.app import App

from tests.server.processes import ROOT


def screen_text(app: App[Any]) -> str:
    """The current screen as plain text, as a terminal of the app's size shows it."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        record=True,
        force_terminal=True,
        legacy_windows=False,
        safe_box=False,
    )
    # The same render Textual's own screenshots use, exported as text instead of SVG.
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text()


def run_client(
    args: list[str], within: float = 60, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``paigow-cli ARGS`` as a process, bounded (a hang fails the test, not the suite),
    with ``env`` added to the environment."""
    return subprocess.run(
        [sys.executable, "-m", "clients.cli", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=within,
        check=False,
    )
