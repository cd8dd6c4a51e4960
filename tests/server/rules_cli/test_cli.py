"""The ``paigow-rules`` command: per-hand commands, batch mode, census, sim, deal, demo."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from protocol.fairness import commitment, deal
from server.rules.cards import cards_text, parse_cards
from server.rules.houseways import house_way
from server.rules.options import HouseWay
from server.rules_cli import main

SCRIPT = Path(sys.executable).with_name("paigow-rules")
SEED_HEX = bytes(range(32)).hex()


def run(
    capsys: pytest.CaptureFixture[str], argv: list[str], stdin: str | None = None
) -> tuple[int, str, str]:
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        code = main(argv)
    finally:
        sys.stdin = sys.__stdin__
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["rank", "JK 6s 5d 4c 3h"], "Straight, seven high"),
        (["rank", "JK", "6s", "5d", "4c", "3h"], "Straight, seven high"),
        (["rank", "As Ah Ad Ac JK"], "Five aces"),
        (["rank", "As", "Qd"], "Ace-queen"),
        (["rank", "JK As"], "Pair of aces"),
        (["rank", "5s 4h 3d 2c As", "--wheel", "lowest"], "Straight, five high"),
        (["classify", "As Ks Qs Js Ts 4d 2c"], "Royal flush"),
        (["classify", "5s 5h 5d 6c 7h 8s 9c"], "Straight"),
        (["bonus", "As Ks Qs Js Ts JK 2c"], "Royal flush (pays 150 to 1 on the standard table)"),
        (["bonus", "Ks Kh 9d 9c 4h 4s 2c"], "Three pair (does not pay on the standard table)"),
    ],
)
def test_single_hand(capsys: pytest.CaptureFixture[str], argv: list[str], expected: str) -> None:
    assert run(capsys, argv) == (0, expected + "\n", "")


def test_split(capsys: pytest.CaptureFixture[str]) -> None:
    cards = "As Ad Kc Kd 7h 4s 2c"
    code, out, _ = run(capsys, ["split", cards, "--way", "pair-classes", "--json"])
    assert code == 0
    got = json.loads(out)
    expected = house_way(parse_cards(cards), HouseWay.PAIR_CLASSES)
    assert (got["high"], got["low"]) == (cards_text(expected.high), cards_text(expected.low))
    assert got["way"] == "pair-classes"
    assert got["high_name"].startswith(("Two pair", "Pair", "Full"))
    code, out, _ = run(capsys, ["split", cards])
    assert code == 0
    assert out.startswith("high: ")
    assert "\nlow:  " in out


def test_batch_mode_writes_one_json_object_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    lines = "JK 6s 5d 4c 3h\n\nAs Qd\nas,kS,QS,js,10s\n"
    code, out, err = run(capsys, ["rank"], stdin=lines)
    assert (code, err) == (0, "")
    objects = [json.loads(line) for line in out.splitlines()]
    assert [o["name"] for o in objects] == ["Straight, seven high", "Ace-queen", "Royal flush"]
    assert objects[0]["cards"] == "JK 6s 5d 4c 3h"
    assert objects[1]["hand"] == "low"
    assert objects[2]["category"] == "royal flush"


@pytest.mark.parametrize(
    ("command", "key", "expected"),
    [
        ("classify", "category", "royal flush"),
        ("bonus", "class", "royal flush"),
        ("split", "way", "party"),
    ],
)
def test_batch_other_commands(
    capsys: pytest.CaptureFixture[str], command: str, key: str, expected: str
) -> None:
    code, out, _ = run(capsys, [command], stdin="As Ks Qs Js Ts 4d 2c\n" * 3)
    assert code == 0
    objects = [json.loads(line) for line in out.splitlines()]
    assert [o[key] for o in objects] == [expected] * 3


def test_batch_of_many_lines(capsys: pytest.CaptureFixture[str]) -> None:
    # 20,000 lines through the whole command (its speed is the benchmark's business).
    hands = [cards_text(h) for seed in range(3000) for h in deal(seed.to_bytes(32, "big"))]
    code, out, _ = run(capsys, ["bonus"], stdin="\n".join(hands[:20_000]) + "\n")
    assert code == 0
    assert out.count("\n") == 20_000


@pytest.mark.parametrize(
    ("argv", "stdin", "message"),
    [
        (["rank", "Zs 4d 3c 2h 5s"], None, "'Zs': 'Z' is not a rank"),
        (["rank", "As Ax"], None, "'Ax': 'x' is not a suit"),
        (["rank", "As Ks Qs"], None, "expected 5 or 2 cards, got 3"),
        (["rank", "As As"], None, "As is given twice"),
        (["classify", "As Ks Qs Js Ts"], None, "expected 7 cards, got 5"),
        (["bonus"], "As Ks Qs Js Ts 4d 2c\nAs Ks Qs Js Ts 4d 1c\n", "line 2: '1c'"),
        (["rank"], "As Kd\nfoo\n", "line 2: 'foo' is not a card"),
        (["deal", "--seed", "xyz"], None, "'xyz' is not a hex seed"),
        (["deal", "--seed", "00ff"], None, "'00ff' is not 32 bytes"),
        (["sim", "--hands", "-5", "--seed", "1"], None, "--hands -5"),
        (["sim", "--hands", "5", "--seed", "1", "--commission", "101"], None, "--commission 101"),
        (["split", "As Ks Qs Js Ts 4d 2c", "--way", "nope"], None, "invalid choice: 'nope'"),
        (["sim", "--hands", "many", "--seed", "1"], None, "invalid int value: 'many'"),
        (["bogus"], None, "invalid choice: 'bogus'"),
    ],
)
def test_bad_input(
    capsys: pytest.CaptureFixture[str], argv: list[str], stdin: str | None, message: str
) -> None:
    code, _, err = run(capsys, argv, stdin)
    assert code == 2
    assert message in err
    assert "Traceback" not in err


def test_batch_stops_at_the_bad_line_after_writing_the_good_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, ["rank"], stdin="As Kd\nXX\nAs Qd\n")
    assert code == 2
    assert len(out.splitlines()) == 1
    assert "line 2" in err


CENSUS = {
    "five aces": 1,
    "royal flush": 24,
    "straight flush": 180,
    "four of a kind": 828,
    "full house": 4368,
    "flush": 7804,
    "straight": 20532,
    "three of a kind": 63360,
    "two pair": 138600,
    "one pair": 1215024,
    "high card": 1418964,  # "no pair" in the list
}


@pytest.mark.slow
def test_census_of_all_five_card_hands() -> None:
    # Through the installed console script, as an operator runs it.
    done = subprocess.run(
        [str(SCRIPT), "census", "--cards", "5", "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    got = json.loads(done.stdout)
    assert got["hands"] == 2_869_685
    assert got["counts"] == CENSUS
    assert list(got["counts"]) == list(CENSUS)  # best first


def test_census_of_two_card_hands(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, ["census", "--cards", "2", "--json"])
    assert code == 0
    # 13 ranks x C(4,2) natural pairs + 4 joker-ace pairs; C(53,2) hands in all.
    assert json.loads(out)["counts"] == {"one pair": 82, "high card": 1378 - 82}


def test_deal(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, ["deal", "--seed", SEED_HEX, "--json"])
    assert code == 0
    got = json.loads(out)
    hands = deal(bytes(range(32)))
    assert got["commitment"] == commitment(bytes(range(32)))
    assert got["seats"] == [cards_text(h) for h in hands[:6]]
    assert got["dealer"] == cards_text(hands[6])
    code, out, _ = run(capsys, ["deal", "--seed", SEED_HEX])
    assert out.splitlines()[0] == f"commitment {commitment(bytes(range(32)))}"
    assert len(out.splitlines()) == 8


def test_sim_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["sim", "--hands", "400", "--seed", "1", "--way", "party", "--json"]
    code, out, err = run(capsys, [*argv, "--dealer-way", "pair-classes"])
    assert (code, err) == (0, "")
    got = json.loads(out)
    assert got["rounds"] == 400
    assert got["wins"] + got["pushes"] + got["losses"] == 400
    assert got["dealer_way"] == "pair-classes"
    assert got["bonus"]["pay_table"] == "standard"
    # The text "1" is hashed to the 32-byte seed; 64 hex digits are taken as they are.
    assert got["seed"] == "6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b"
    code, out, _ = run(capsys, ["sim", "--hands", "10", "--seed", SEED_HEX, "--json"])
    assert json.loads(out)["seed"] == SEED_HEX


def test_sim_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, ["sim", "--hands", "200", "--seed", "x"])
    assert code == 0
    assert "win " in out
    assert "EV per unit bet" in out


def test_demo(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, ["demo"])
    assert (code, err) == (0, "")
    assert commitment(bytes(range(32))) in out
    assert out.count("seat ") >= 6
    assert "dealer" in out
    assert any(word in out for word in ("WIN", "PUSH", "LOSE"))


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, ["--help"])
    assert code == 0
    assert "census" in out
