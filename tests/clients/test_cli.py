"""The scripted client: play with JSON lines, history and verify, and the bots."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from clients.bots import run_bots
from clients.cli import main
from server.app import App
from tests.clients.helpers import url_of


@pytest.mark.asyncio
async def test_play_json_then_history_and_verify(
    app: App, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = str(tmp_path / "session.json")
    common = ["--url", url_of(app), "--session", session, "--json"]
    play = ["play", *common, "--table", "fast", "--bet", "10", "--rounds", "2"]
    code = await asyncio.to_thread(main, [*play, "--strategy", "random", "--seed", "3"])
    out = capsys.readouterr().out
    assert code == 0, out
    lines = [json.loads(line) for line in out.splitlines()]
    types = {line["type"] for line in lines}
    assert {"client.connected", "snapshot", "cards", "reveal", "results", "seed"} <= types
    summary = lines[-1]
    assert summary["type"] == "client.summary"
    assert summary["rounds"] == 2
    assert summary["verified"] == 2
    assert not summary["errors"]
    log = tmp_path / "play.jsonl"
    log.write_text(out)

    assert await asyncio.to_thread(main, ["verify", "--log", str(log), "--json"]) == 0
    offline = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(offline) >= 2
    assert all(v["ok"] for v in offline)

    # The same guest, resumed from the session file, reads its history and verifies it.
    assert await asyncio.to_thread(main, ["history", *common]) == 0
    history = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(history) == 2
    assert all(h["table_id"] == "fast" for h in history)
    round_no = history[0]["round"]
    assert await asyncio.to_thread(main, ["verify", str(round_no), *common]) == 0
    checked = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(v["round"], v["ok"]) for v in checked] == [(round_no, True)]
    assert await asyncio.to_thread(main, ["verify", "999", *common]) == 2
    capsys.readouterr()


def test_verify_log_catches_a_wrong_seed(tmp_path: Path) -> None:
    from clients.cli import verify_log

    commitment = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    seed = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    good = [
        json.dumps({"type": "commitment", "table_id": "t", "round": 1, "commitment": commitment}),
        json.dumps(
            {
                "type": "cards",
                "table_id": "t",
                "round": 1,
                "seat": 0,
                "cards": [4, 51, 34, 2, 12, 18, 11],
            }
        ),
        json.dumps(
            {"type": "seed", "table_id": "t", "round": 1, "seed": seed, "commitment": commitment}
        ),
    ]
    assert [v.ok for v in verify_log(good, None)] == [True]
    tampered = [good[0], good[1].replace("[4, 51", "[51, 4"), good[2]]
    [result] = verify_log(tampered, None)
    assert not result.ok
    assert "seat 0" in result.detail


@pytest.mark.asyncio
async def test_bots_play_and_verify(app: App) -> None:
    report = await run_bots(url_of(app), ["fast"], count=3, rounds=2, bet=10, seed=1)
    assert report.ok, report.as_dict()
    assert report.rounds == 6
    assert report.verified == 6


@pytest.mark.asyncio
async def test_history_follows_every_page(
    app: App, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Five rounds read two at a time: every round once, newest first; --limit cuts."""
    session = str(tmp_path / "session.json")
    common = ["--url", url_of(app), "--session", session, "--json"]
    play = ["play", *common, "--table", "fast", "--bet", "10", "--rounds", "5"]
    assert await asyncio.to_thread(main, play) == 0
    notes = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    played = [n["round"] for n in notes if n["type"] == "client.round"]
    assert len(played) == 5

    history = ["history", *common, "--page-size", "2"]
    assert await asyncio.to_thread(main, history) == 0
    rounds = [json.loads(line)["round"] for line in capsys.readouterr().out.splitlines()]
    # Three pages (2 + 2 + 1): all five rounds, each once, newest first.
    assert rounds == sorted(played, reverse=True)

    assert await asyncio.to_thread(main, [*history, "--limit", "4"]) == 0
    newest = [json.loads(line)["round"] for line in capsys.readouterr().out.splitlines()]
    assert newest == rounds[:4]

    text = ["history", "--url", url_of(app), "--session", session, "--page-size", "2"]
    assert await asyncio.to_thread(main, [*text, "--limit", "4"]) == 0
    assert "older rounds not shown" in capsys.readouterr().out
    assert await asyncio.to_thread(main, [*text, "--limit", "5"]) == 0
    assert "older rounds not shown" not in capsys.readouterr().out
