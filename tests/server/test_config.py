"""The settings: flags and ``PAIGOW_*`` variables made from one declaration each."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from server.cli import main
from server.config import Settings, add_arguments, declared, from_arguments
from tests.server.processes import ROOT, run_cli


def settings(args: list[str], environ: dict[str, str]) -> Settings:
    parser = argparse.ArgumentParser()
    add_arguments(parser, environ)
    return from_arguments(parser.parse_args(args))


def test_without_flags_or_variables_the_declared_defaults() -> None:
    assert settings([], {}) == Settings()


def test_every_setting_from_its_variable() -> None:
    environ = {
        "PAIGOW_HOST": "0.0.0.0",
        "PAIGOW_PORT": "9000",
        "PAIGOW_REDIS_URL": "redis://r:6379/0",
        "PAIGOW_REDIS_REPLICAS": "2",
        "PAIGOW_REDIS_WAIT_MS": "250",
        "PAIGOW_DATA_DIR": "/var/lib/paigow",
        "PAIGOW_TABLES_FILE": "/etc/paigow/tables.toml",
        "PAIGOW_TOKEN_SECRET": "s" * 32,
        "PAIGOW_GUESTS": "no",
        "PAIGOW_GUEST_BALANCE": "500",
        "PAIGOW_GUEST_LIFETIME_MS": "7200000",
        "PAIGOW_GUEST_IDLE_MS": "0",
        "PAIGOW_GUESTS_PER_MINUTE": "100",
        "PAIGOW_GUESTS_PER_ADDRESS": "5",
        "PAIGOW_GUEST_ADDRESS_HEADER": "X-Forwarded-For",
        "PAIGOW_ARCHIVE_URL": "postgresql://paigow@db/paigow",
        "PAIGOW_ARCHIVE_AFTER_MS": "600000",
        "PAIGOW_ARCHIVE_EVERY_MS": "10000",
        "PAIGOW_ORIGINS": "https://a.example, https://b.example,",
        "PAIGOW_MAX_CONNECTIONS": "10",
        "PAIGOW_CONNECTIONS_PER_ADDRESS": "7",
        "PAIGOW_HANDSHAKES_PER_ADDRESS": "3",
        "PAIGOW_TRUSTED_PROXIES": "10.0.0.5, 172.16.0.0/12",
        "PAIGOW_FORWARDED_HEADER": "Forwarded",
        "PAIGOW_RATE_PER_S": "5",
        "PAIGOW_SEND_QUEUE": "32",
        "PAIGOW_HEARTBEAT_MS": "3000",
        "PAIGOW_HANDSHAKE_MS": "4000",
        "PAIGOW_LEASE_MS": "6000",
        "PAIGOW_NODE_NAME": "node-7",
        "PAIGOW_SERVER_NAME": "east",
        "PAIGOW_LOG_LEVEL": "WARNING",
        "PAIGOW_LOG_FORMAT": "json",
    }
    assert set(environ) == {d.env for d in declared()}
    assert settings([], environ) == Settings(
        host="0.0.0.0",
        port=9000,
        redis_url="redis://r:6379/0",
        redis_replicas=2,
        redis_wait_ms=250,
        data_dir=Path("/var/lib/paigow"),
        tables_file=Path("/etc/paigow/tables.toml"),
        token_secret="s" * 32,
        guests=False,
        guest_balance=500,
        guest_lifetime_ms=7_200_000,
        guest_idle_ms=0,
        guests_per_minute=100,
        guests_per_address=5,
        guest_address_header="X-Forwarded-For",
        archive_url="postgresql://paigow@db/paigow",
        archive_after_ms=600_000,
        archive_every_ms=10_000,
        origins=("https://a.example", "https://b.example"),
        max_connections=10,
        connections_per_address=7,
        handshakes_per_address=3,
        trusted_proxies=("10.0.0.5", "172.16.0.0/12"),
        forwarded_header="Forwarded",
        rate_per_s=5,
        send_queue=32,
        heartbeat_ms=3000,
        handshake_ms=4000,
        lease_ms=6000,
        node_name="node-7",
        server_name="east",
        log_level="warning",
        log_format="json",
    )


def test_an_empty_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAIGOW_TABLES_FILE", "")
    monkeypatch.setenv("PAIGOW_REDIS_URL", "")
    monkeypatch.setenv("PAIGOW_SEND_QUEUE", "32")
    parser = argparse.ArgumentParser()
    add_arguments(parser)  # the process's environment
    got = from_arguments(parser.parse_args([]))
    assert got.tables_file is None
    assert got.redis_url is None
    assert got.send_queue == 32


def test_a_flag_wins_over_its_variable() -> None:
    environ = {"PAIGOW_PORT": "9000", "PAIGOW_RATE_PER_S": "5", "PAIGOW_ORIGINS": "https://a"}
    got = settings(["--port", "9001", "--rate", "7", "--origin", "https://b"], environ)
    assert (got.port, got.rate_per_s, got.origins) == (9001, 7, ("https://b",))
    got = settings(["--origin", "https://b", "--origin", "https://c", "--guests", "no"], {})
    assert (got.origins, got.guests) == (("https://b", "https://c"), False)
    assert settings([], environ).origins == ("https://a",)


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("PAIGOW_PORT", "abc", "'abc' is not a whole number"),
        ("PAIGOW_GUESTS", "maybe", "'maybe' is not a boolean"),
        ("PAIGOW_LEASE_MS", "1.5", "'1.5' is not a whole number"),
        ("PAIGOW_LOG_FORMAT", "xml", "'xml' is not one of text, json"),
        ("PAIGOW_LOG_LEVEL", "loud", "'loud' is not one of debug, info, warning, error"),
    ],
)
def test_a_bad_variable_is_a_usage_error_naming_it(
    variable: str, value: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        settings([], {variable: value})
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"{variable}: {says}" in err


def test_a_bad_variable_or_flag_exits_2_as_a_process_even_with_help() -> None:
    done = run_cli(["--help"], env={"PAIGOW_PORT": "abc"})
    assert done.returncode == 2
    assert "PAIGOW_PORT: 'abc' is not a whole number" in done.stderr
    assert "Traceback" not in done.stderr
    done = run_cli(["--port", "abc", "token", "--player", "alice"])
    assert done.returncode == 2
    assert "argument --port: 'abc' is not a whole number" in done.stderr
    assert "Traceback" not in done.stderr


def test_help_lists_every_flag_with_its_variable_and_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # as one line, however wrapped
    for d in declared():
        assert f"{d.flag} " in text
        assert f"[{d.env}; default: {d.shown}]" in text
    assert "[PAIGOW_RATE_PER_S; default: 20]" in text
    assert "[PAIGOW_GUESTS; default: yes]" in text
    assert "``" not in text  # reST quotes of the docstrings are not shown


def test_the_flags_and_variables_are_the_ones_the_deployment_guide_lists() -> None:
    """deploy/README.md's table names every flag, its variable and its default."""
    rows = re.findall(
        r"^\| `(--[a-z-]+)`[^|]*\| `(PAIGOW_[A-Z_]+)`[^|]*\| ([^|]+) \|",
        (ROOT / "deploy" / "README.md").read_text(),
        re.MULTILINE,
    )
    documented = {flag: (env, default.strip()) for flag, env, default in rows}
    assert set(documented) == {d.flag for d in declared()}
    for d in declared():
        env, default = documented[d.flag]
        assert env == d.env
        if default.startswith("`"):
            assert default == f"`{d.shown}`", d.flag


def test_every_setting_reaches_the_container_and_is_documented() -> None:
    """compose.yaml passes each variable on from deploy/.env (or fixes it itself), and
    paigow.env.example documents each: a setting missing from either is one an operator
    sets in vain."""
    compose = (ROOT / "deploy" / "compose.yaml").read_text()
    example = (ROOT / "deploy" / "paigow.env.example").read_text()
    fixed = {
        "PAIGOW_REDIS_URL",
        "PAIGOW_HOST",
        "PAIGOW_PORT",
        "PAIGOW_DATA_DIR",
        "PAIGOW_ARCHIVE_URL",
    }
    for d in declared():
        assert re.search(rf"^#?{d.env}=", example, re.MULTILINE), d.env
        if d.env in fixed:
            assert re.search(rf"^    {d.env}: \S", compose, re.MULTILINE), d.env
        elif d.env == "PAIGOW_TOKEN_SECRET":  # required, not defaulted
            assert f'{d.env}: "${{{d.env}:?' in compose
        elif d.env == "PAIGOW_TABLES_FILE":  # a path in the container: see compose.yaml
            assert f"# {d.env}: /etc/paigow/tables.toml" in compose
        elif d.env == "PAIGOW_TRUSTED_PROXIES":  # the balancer's fixed address by default
            assert f'    {d.env}: "${{{d.env}:-172.30.87.10}}"' in compose
            assert "ipv4_address: 172.30.87.10\n" in compose
        elif d.env == "PAIGOW_NODE_NAME":  # each node's own
            for n in (1, 2, 3):
                assert f"      {d.env}: node-{n}\n" in compose
        else:
            assert f'    {d.env}: "${{{d.env}:-}}"' in compose, d.env
