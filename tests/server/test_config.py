"""The settings: flags and ``PAIGOW_*`` variables made from one declaration each."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from server.cli import main
from server.config import SECRET_SETTINGS, Settings, add_arguments, declared, from_arguments
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
        "PAIGOW_JWT_JWKS_URL": "https://login.example/jwks.json",
        "PAIGOW_JWT_JWKS_FILE": "/etc/paigow/jwks.json",
        "PAIGOW_JWT_ISSUER": "https://login.example/",
        "PAIGOW_JWT_AUDIENCE": "paigow",
        "PAIGOW_JWT_ALGORITHMS": "ES256,EdDSA",
        "PAIGOW_JWT_PLAYER_CLAIM": "uid",
        "PAIGOW_JWT_NAME_CLAIM": "nick",
        "PAIGOW_JWT_ROLES_CLAIM": "groups",
        "PAIGOW_JWT_LEEWAY_MS": "5000",
        "PAIGOW_JWT_JWKS_MAX_AGE_MS": "60000",
        "PAIGOW_JWT_JWKS_REFRESH_MS": "2000",
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
        "PAIGOW_ADMIN_PORT": "8766",
        "PAIGOW_ADMIN_HOST": "10.0.0.5",
        "PAIGOW_WALLET_URL": "https://wallet.example/",
        "PAIGOW_WALLET_SECRET": "w" * 32,
        "PAIGOW_WALLET_TIMEOUT_MS": "1500",
        "PAIGOW_WALLET_RESOLVE_AFTER_MS": "60000",
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
        jwt_jwks_url="https://login.example/jwks.json",
        jwt_jwks_file=Path("/etc/paigow/jwks.json"),
        jwt_issuer="https://login.example/",
        jwt_audience="paigow",
        jwt_algorithms=("ES256", "EdDSA"),
        jwt_player_claim="uid",
        jwt_name_claim="nick",
        jwt_roles_claim="groups",
        jwt_leeway_ms=5000,
        jwt_jwks_max_age_ms=60_000,
        jwt_jwks_refresh_ms=2000,
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
        admin_port=8766,
        admin_host="10.0.0.5",
        wallet_url="https://wallet.example/",
        wallet_secret="w" * 32,
        wallet_timeout_ms=1500,
        wallet_resolve_after_ms=60_000,
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


@pytest.mark.parametrize("bad", ["10.0.0.0/33", "proxy.example", "300.1.2.3", "10.0.0.5/"])
def test_a_trusted_proxy_that_is_no_address_or_cidr_is_a_usage_error(
    bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Read with the settings, not first found when the gateway starts.
    with pytest.raises(SystemExit) as exited:
        settings([], {"PAIGOW_TRUSTED_PROXIES": f"10.0.0.5, {bad}"})
    assert exited.value.code == 2
    assert f"PAIGOW_TRUSTED_PROXIES: {bad!r} is not an address or a CIDR" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        settings(["--trusted-proxy", "::1", "--trusted-proxy", bad], {})
    assert exited.value.code == 2
    assert f"argument --trusted-proxy: {bad!r} is not an address or a CIDR" in (
        capsys.readouterr().err
    )
    # Good ones are kept as written, IPv6 and bare addresses too.
    good = ["192.168.1.7", "172.16.0.0/12", "fd00::/8", "::1"]
    got = settings([f"--trusted-proxy={g}" for g in good], {})
    assert got.trusted_proxies == tuple(good)
    assert settings([], {"PAIGOW_TRUSTED_PROXIES": ",".join(good)}).trusted_proxies == tuple(good)


def test_a_bad_trusted_proxy_stops_the_command_before_anything_runs() -> None:
    done = run_cli(["--help"], env={"PAIGOW_TRUSTED_PROXIES": "10.0.0.0/40"})
    assert done.returncode == 2
    assert "PAIGOW_TRUSTED_PROXIES: '10.0.0.0/40' is not an address or a CIDR" in done.stderr
    assert "Traceback" not in done.stderr


def test_help_lists_every_flag_with_its_variable_and_default(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # no line broken at a hyphen
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # as one line, however wrapped
    for d in declared():
        assert f"{d.flag} " in text
        names = f"{d.env} or {d.env}_FILE" if d.secret else d.env
        assert f"[{names}; default: {d.shown}]" in text
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


# --- secrets from files ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("token_secret", "a-secret-of-sixteen-bytes-or-more"),
        ("redis_url", "redis://:pw@redis:6379/0"),
        ("archive_url", "postgresql://paigow:pw@archive/paigow"),
    ],
)
def test_every_secret_is_also_read_from_a_file(name: str, secret: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_text(secret + "\n")  # as an editor or `echo` leaves it
    env = f"PAIGOW_{name.upper()}"
    assert getattr(settings([], {f"{env}_FILE": str(path)}), name) == secret
    # The variable itself still works; a flag still wins over the file.
    assert getattr(settings([], {env: secret}), name) == secret
    flag = "--" + name.replace("_", "-")
    assert getattr(settings([flag, "x" * 20], {f"{env}_FILE": str(path)}), name) == "x" * 20


def test_the_secret_settings_are_those_that_carry_one() -> None:
    assert {d.name for d in declared() if d.secret} == SECRET_SETTINGS
    assert {"token_secret", "redis_url", "archive_url", "wallet_secret"} == SECRET_SETTINGS
    # Any other setting has no _FILE form: it is not read.
    assert settings([], {"PAIGOW_PORT_FILE": "/nonexistent"}).port == 8765


@pytest.mark.parametrize(
    ("environ", "says"),
    [
        (
            {"PAIGOW_TOKEN_SECRET": "s" * 20, "PAIGOW_TOKEN_SECRET_FILE": "/etc/hostname"},
            "set PAIGOW_TOKEN_SECRET or PAIGOW_TOKEN_SECRET_FILE, not both",
        ),
        (
            {"PAIGOW_ARCHIVE_URL_FILE": "/nonexistent/archive-url"},
            "PAIGOW_ARCHIVE_URL_FILE: cannot read /nonexistent/archive-url",
        ),
    ],
)
def test_a_secret_file_that_cannot_be_used_is_a_usage_error(
    environ: dict[str, str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        settings([], environ)
    assert exited.value.code == 2
    assert says in capsys.readouterr().err


def test_an_empty_secret_file_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("\n")
    done = run_cli(["--help"], env={"PAIGOW_TOKEN_SECRET_FILE": str(empty)})
    assert done.returncode == 2
    assert f"PAIGOW_TOKEN_SECRET_FILE: {empty} is empty" in done.stderr
    assert "Traceback" not in done.stderr
