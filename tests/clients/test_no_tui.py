"""The full-screen table's libraries (Textual, Rich) are the package's `cli` extra:
without them ``paigow-cli`` says which extra to install instead of a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.clients.helpers import run_client


def _client(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``paigow-cli ARGS`` as a process in which Textual cannot be imported: a module
    ahead of the installed one on the path fails as a missing package does."""
    shadow = tmp_path / "shadow"
    shadow.mkdir(exist_ok=True)
    (shadow / "textual.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'textual'\", name='textual')\n"
    )
    return run_client(
        list(args), env={"PYTHONPATH": str(shadow), "XDG_STATE_HOME": str(tmp_path / "state")}
    )


def test_the_table_without_textual_names_the_extra(tmp_path: Path) -> None:
    # Port 9 (discard) on loopback: nothing listens, and nothing is reached before the
    # import fails.
    done = _client(["--no-session", "ws://127.0.0.1:9/"], tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "paigow-server[cli]" in done.stderr, done.stderr
    assert "make play" in done.stderr
    assert "Textual" in done.stderr


def test_the_scripted_commands_need_no_textual(tmp_path: Path) -> None:
    """Only the table needs the extra: ``play`` still starts (its help, here)."""
    done = _client(["play", "--help"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "--strategy" in done.stdout
