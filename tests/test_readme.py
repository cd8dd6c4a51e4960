"""The README's commands run as written from the repository's folder after ``make``."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ("paigow-server", "paigow-cli", "paigow-rules")


def _shell_lines(text: str) -> list[str]:
    """Every line of the ``sh`` blocks."""
    blocks = re.findall(r"^```sh\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_the_commands_carry_their_path() -> None:
    """``make`` installs the commands in .venv, not on PATH: each is shown with its path."""
    lines = _shell_lines((ROOT / "README.md").read_text(encoding="utf-8"))
    commands = [line for line in lines if line.split()[0].endswith(COMMANDS)]
    assert len(commands) >= 10
    bare = [line for line in commands if not line.startswith(".venv/bin/")]
    assert bare == []


def test_it_says_how_to_seat_a_second_local_player() -> None:
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "A second player on the same machine: run `make play` again in another terminal." in text
    assert "--session bob" in text
