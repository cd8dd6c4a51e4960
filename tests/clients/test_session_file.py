"""The session file: each running client its own player unless one is named."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from clients.cli import main
from clients.session_file import claim_session
from server.app import App
from tests.helpers import url
from tests.server.processes import ROOT


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private ``$XDG_STATE_HOME``: the default session files go under it."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    monkeypatch.delenv("PAIGOW_CLI_SESSION", raising=False)
    return tmp_path / "paigow-cli"


def test_a_second_client_gets_a_session_of_its_own(state_home: Path) -> None:
    first = claim_session(None)
    try:
        assert first.path == state_home / "session.json"
        assert first.note is None
        second = claim_session(None)  # while the first runs: the next free file
        try:
            assert second.path == state_home / "session-2.json"
            assert not second.shared
            assert second.note is not None
            assert "another player" in second.note
        finally:
            second.release()
        named = claim_session(str(state_home / "session.json"))  # asked for by its path
        assert named.path == first.path
        assert named.shared
        assert named.note is not None
        assert "takes that player over" in named.note
        bob = claim_session("bob")  # a name: a file of that name beside the others
        assert bob.path == state_home / "bob.json"
        assert not bob.shared
        bob.release()
    finally:
        first.release()
    again = claim_session(None)  # the first has ended: its file is free again
    assert again.path == state_home / "session.json"
    again.release()
    assert claim_session(None, keep=False).path is None


def test_the_lock_is_held_across_processes(state_home: Path) -> None:
    """Another process holding the default file (as a running client does) sends this one
    to the next file; the holder's pid is in the lock file."""
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from clients.session_file import claim_session;"
            "c = claim_session(None); print(c.path, flush=True); sys.stdin.read()",
        ],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline().strip() == str(state_home / "session.json")
            claim = claim_session(None)
            assert claim.path == state_home / "session-2.json"
            claim.release()
            shared = claim_session("session")
            assert shared.shared
            assert f"pid {holder.pid}" in (shared.note or "")
        finally:
            assert holder.stdin is not None
            holder.stdin.close()
            holder.wait(timeout=30)
    free = claim_session(None)
    assert free.path == state_home / "session.json"
    free.release()


@pytest.mark.asyncio
async def test_a_second_command_is_another_player(
    app: App, state_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """While a client runs with the default session, a second command is a new player
    (its own file, said on standard error) rather than the first one's taking over."""
    assert await asyncio.to_thread(main, ["history", "--url", url(app)]) == 0
    first = json.loads((state_home / "session.json").read_text())
    capsys.readouterr()
    running = claim_session(None)  # as a client still running would hold it
    try:
        assert await asyncio.to_thread(main, ["history", "--url", url(app)]) == 0
    finally:
        running.release()
    err = capsys.readouterr().err
    assert "paigow-cli: another paigow-cli is running with session.json" in err
    second = json.loads((state_home / "session-2.json").read_text())
    assert second["player_id"] != first["player_id"]
    # Without --name each is a guest of a name of its own, not both "Guest".
    assert re.fullmatch(r"Guest-[2-9A-Z]{4}", first["name"])
    assert re.fullmatch(r"Guest-[2-9A-Z]{4}", second["name"])
    assert second["name"] != first["name"]
    # With the first one gone, the default is the first player again.
    assert await asyncio.to_thread(main, ["history", "--url", url(app)]) == 0
    again = json.loads((state_home / "session.json").read_text())
    # The same player, of the same name; its resume token is issued again at each
    # welcome (it carries the second it was issued in: comparing whole files failed when
    # a second turned).
    assert {k: v for k, v in again.items() if k != "resume_token"} == {
        k: v for k, v in first.items() if k != "resume_token"
    }
