"""The scripted client: play with JSON lines, history and verify, and the bots."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio

from clients.bots import run_bots
from clients.cli import main
from clients.core import Client
from protocol.structs import RoundRecord
from server.app import App
from server.gamelog import pack_record, unpack_records
from server.store.tables.commit_args import Write
from server.store.tables.store import TableStore
from tests.clients.helpers import run_client
from tests.helpers import until, url
from tests.server.processes import free_port


@pytest.mark.asyncio
async def test_play_json_then_history_and_verify(
    app: App, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = str(tmp_path / "session.json")
    common = ["--url", url(app), "--session", session, "--json"]
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
    report = await run_bots(url(app), ["fast"], count=3, rounds=2, bet=10, seed=1)
    assert report.ok, report.as_dict()
    assert report.rounds == 6
    assert report.verified == 6


async def _play(
    capsys: pytest.CaptureFixture[str], common: list[str], rounds: int
) -> list[dict[str, Any]]:
    """The JSON lines of ``paigow-cli play`` of ``rounds`` rounds at table ``fast``."""
    play = ["play", *common, "--table", "fast", "--bet", "10", "--rounds", str(rounds)]
    code = await asyncio.to_thread(main, play)
    out = capsys.readouterr().out
    assert code == 0, out
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.asyncio
async def test_history_follows_every_page(
    app: App, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Five rounds read two at a time: every round once, newest first; --limit cuts."""
    session = str(tmp_path / "session.json")
    common = ["--url", url(app), "--session", session, "--json"]
    notes = await _play(capsys, common, 5)
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

    text = ["history", "--url", url(app), "--session", session, "--page-size", "2"]
    assert await asyncio.to_thread(main, [*text, "--limit", "4"]) == 0
    assert "older rounds not shown" in capsys.readouterr().out
    assert await asyncio.to_thread(main, [*text, "--limit", "5"]) == 0
    assert "older rounds not shown" not in capsys.readouterr().out


async def _log_records(
    redis_client: redis.asyncio.Redis, player: str, records: list[RoundRecord]
) -> None:
    """Log ``records`` in ``player``'s history, through a commit of a table of their own."""
    store = TableStore(redis_client)
    token = await store.leases.acquire("later", "test", 10_000)
    assert token is not None
    logs = [(player, pack_record(r)) for r in records]
    result = await store.commits.write(
        Write("later", token=token, expected_version=0, new_version=1, parts={"h": b"s"}, logs=logs)
    )
    assert result.ok


async def _played_record(redis_client: redis.asyncio.Redis, player: str) -> RoundRecord:
    """The player's newest record."""
    page = await TableStore(redis_client).history.page(player, None, 1)
    [played] = unpack_records([blob for _, blob in page.items], None).rounds
    return played


@pytest.mark.asyncio
async def test_verify_finds_a_round_past_the_newest_page(
    app: App, redis_client: redis.asyncio.Redis, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A round with 60 newer records (more than a page of 50) is still found and checked."""
    session = str(tmp_path / "session.json")
    common = ["--url", url(app), "--session", session, "--json"]
    notes = await _play(capsys, common, 1)
    player = next(n["player_id"] for n in notes if n["type"] == "client.connected")
    [round_no] = [n["round"] for n in notes if n["type"] == "client.round"]
    played = await _played_record(redis_client, player)
    assert played.round == round_no
    # 60 later rounds of the same table logged after it.
    await _log_records(
        redis_client, player, [replace(played, round=round_no + n) for n in range(1, 61)]
    )

    for table in ([], ["--table", "fast"]):
        assert await asyncio.to_thread(main, ["verify", str(round_no), *common, *table]) == 0
        checked = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert [(v["table_id"], v["round"], v["ok"]) for v in checked] == [("fast", round_no, True)]
    # A round never played: every page is read, and none has it.
    assert await asyncio.to_thread(main, ["verify", str(round_no + 100), *common]) == 2
    assert json.loads(capsys.readouterr().out)["found"] == 0


@pytest.mark.asyncio
async def test_verify_a_round_number_two_tables_played(
    app: App, redis_client: redis.asyncio.Redis, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Round numbers are per table: ``verify N`` checks each table's round N and says so,
    rather than picking one silently; ``--table`` checks one."""
    session = str(tmp_path / "session.json")
    common = ["--url", url(app), "--session", session]
    notes = await _play(capsys, [*common, "--json"], 1)
    player = next(n["player_id"] for n in notes if n["type"] == "client.connected")
    played = await _played_record(redis_client, player)
    # The same round number at another table, logged after it (so it is the newest).
    await _log_records(redis_client, player, [replace(played, table_id="other")])

    verify = ["verify", str(played.round), *common]
    assert await asyncio.to_thread(main, [*verify, "--json"]) == 0
    checked = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert sorted((v["table_id"], v["ok"]) for v in checked) == [("fast", True), ("other", True)]
    assert await asyncio.to_thread(main, verify) == 0
    out = capsys.readouterr().out
    assert f"round {played.round} was played at 2 tables (other, fast)" in out
    assert await asyncio.to_thread(main, [*verify, "--json", "--table", "fast"]) == 0
    [one] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (one["table_id"], one["round"], one["ok"]) == ("fast", played.round, True)


@pytest.mark.parametrize("command", [["history"], ["play", "--table", "fast", "--bet", "10"]])
def test_no_server_exits_2(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing listens at the URL: the connection error is exit code 2, as bad usage."""
    url = f"ws://127.0.0.1:{free_port()}/"
    assert main([*command, "--url", url, "--no-session"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("paigow-cli: cannot connect to ")


@pytest.mark.asyncio
async def test_a_server_refusal_exits_1(app: App, capsys: pytest.CaptureFixture[str]) -> None:
    """The server answers with an error (here: no such table): exit code 1, its words shown."""
    play = ["play", "--url", url(app), "--no-session", "--table", "nosuch", "--bet", "10"]
    assert await asyncio.to_thread(main, play) == 1
    err = capsys.readouterr().err
    assert err.startswith("paigow-cli: ")
    assert "nosuch" in err  # the server's sentence, naming the table


@pytest.mark.asyncio
@pytest.mark.parametrize("bet", ["3", "7", "10000"])  # under 10, not a multiple of 5, over 500
async def test_play_with_a_bet_the_table_refuses_exits_1(app: App, bet: str) -> None:
    """A bet the table refuses every round ends the play at once, with the table's limits
    on standard error and exit code 1, and the seat left (it used to wait for ever)."""
    play = ["play", "--url", url(app), "--no-session", "--table", "fast", "--bet", bet, "--json"]
    done = await asyncio.to_thread(run_client, play)
    assert done.returncode == 1, done.stdout + done.stderr
    # The table's own sentence, once (no second wording of it beside).
    assert done.stderr == "paigow-cli: the bet is 10 to 500 chips, in multiples of 5\n"
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    [error] = [line for line in lines if line["type"] == "client.error"]
    assert error["code"] == "bet_limits"
    # The refused player does not keep a seat.
    async with Client(url(app)) as watcher:
        model = await watcher.watch("fast")
        assert all(seat.status == "empty" for seat in model.seats)


@pytest.mark.asyncio
async def test_text_play_reads_as_sentences(app: App, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --json, what the player did reads as sentences with suited cards, after
    the events received before it; no card codes or key=value lines."""
    play = ["play", "--url", url(app), "--no-session", "--table", "fast", "--bet", "10"]
    assert await asyncio.to_thread(main, play) == 0
    lines = capsys.readouterr().out.splitlines()
    text = "\n".join(lines)
    assert not re.search(r"\[\d+, \d+\]", text), text  # no card codes
    assert "=" not in text, text  # no key=value notes
    [bet] = [n for n, line in enumerate(lines) if re.fullmatch(r"round \d+: you bet 10", line)]
    [hand] = [n for n, line in enumerate(lines) if " you set high " in line]
    assert re.search(r"\(low hand (10|[2-9JQKA])[♠♥♦♣] (10|[2-9JQKA])[♠♥♦♣]\)$|JK★", lines[hand])
    [cards] = [n for n, line in enumerate(lines) if line.startswith("your cards: ")]
    [outcome] = [n for n, line in enumerate(lines) if re.fullmatch(r"round \d+: you \w+", line)]
    assert bet < hand
    assert cards < hand < outcome


def test_json_seats_are_said_to_be_the_wire_s(capsys: pytest.CaptureFixture[str]) -> None:
    """JSON lines number seats 0-5 (the wire's), the screen 1-6: the help says so."""
    with pytest.raises(SystemExit):
        main(["play", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "seats are numbered 0-5" in help_text
    assert "number seats 1-6" in help_text


@pytest.mark.asyncio
async def test_play_taken_over_exits_1_and_says_why(
    app: App, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another client resuming the session of a running ``play`` ends it at once (exit
    1, the reason on standard error) rather than leaving it waiting for rounds."""
    session = tmp_path / "session.json"
    play = ["play", "--url", url(app), "--session", str(session), "--table", "slow"]
    running = asyncio.create_task(
        asyncio.to_thread(main, [*play, "--bet", "10", "--rounds", "5", "--stay"])
    )
    token = await until(lambda: session.exists() and json.loads(session.read_text()))
    async with Client(url(app), resume_token=token["resume_token"]) as other:
        assert other.player_id == token["player_id"]
        assert await asyncio.wait_for(running, 30) == 1
    err = capsys.readouterr().err
    assert "paigow-cli: disconnected (4005): session resumed elsewhere" in err
