"""The local topology (deploy/local-cluster.sh): Redis, three nodes, HAProxy in front.

A player connects through the balancer and stays seated through a rolling upgrade
(each node drained and started again in turn), reconnecting through the balancer each
time their node goes; the compose file is valid against the Compose Specification and
describes the same topology.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from bench.procs.topology import free_ports
from protocol.errors import CloseCode
from protocol.messages import Bet, GetBalance, Join, Snapshot
from protocol.structs import Balances
from server.tables_file import load_tables
from tests.helpers import SYSTEM_FOLDERS, system_command
from tests.server.helpers import Client, assert_gapless, close_all
from tests.server.processes import ROOT

SCRIPT = ROOT / "deploy" / "local-cluster.sh"
NODES = 3


class Topology:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_ports(1 + NODES)  # the balancer's, then the nodes'
        self.node_port = self.port + 1
        self.env = {
            **os.environ,
            "PAIGOW_CLUSTER_DIR": str(folder),
            "PAIGOW_CLUSTER_PORT": str(self.port),
            "PAIGOW_CLUSTER_NODE_PORT": str(self.node_port),
            "PAIGOW_CLUSTER_BIN": str(Path(sys.executable).parent),
            "PAIGOW_LEASE_MS": "1000",
        }

    def run(self, *args: str, within: float = 120) -> str:
        done = subprocess.run(
            [str(SCRIPT), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=within,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/"


@pytest.fixture
def topology(tmp_path: Path) -> Iterator[Topology]:
    up = Topology(tmp_path / "cluster")
    try:
        yield up
    finally:
        subprocess.run(
            [str(SCRIPT), "down"], env=up.env, capture_output=True, timeout=120, check=False
        )


@pytest.mark.asyncio
async def test_a_rolling_upgrade_through_the_balancer(topology: Topology) -> None:
    # In a thread: the clients' connections are served meanwhile.
    out = await asyncio.to_thread(topology.run, "up")
    assert out.count("ready on ws://") == NODES
    rows = re.findall(r"^node-(\d)\tnode-\d#\S+\tws://127.0.0.1:(\d+)/\t(\d+)", out, re.M)
    assert sorted(r[0] for r in rows) == ["1", "2", "3"]
    assert sum(int(r[2]) for r in rows) == len(load_tables(None))  # the built-in tables

    player = await Client.hello(topology.url, label="p0")
    clients = [player]
    try:
        await player.ok(Join, table_id="jade", buy_in=500, seat=2)
        await player.ok(Bet, table_id="jade", amount=20)
        for n in range(1, NODES + 1):
            await asyncio.to_thread(topology.run, "restart", str(n))
            if player.closed is None:
                continue  # its node was another one: served throughout
            assert player.closed.code == CloseCode.GOING_AWAY
            assert player.welcome is not None
            player = await Client.hello(
                topology.url,
                label=f"p{n}",
                resume_token=player.welcome.resume_token,
                last_seq=[("jade", player.last_seq("jade"))],
            )
            clients.append(player)
            assert player.welcome is not None
            assert player.welcome.resumed
        assert len(clients) > 1, "the player's node was restarted"
        # Still seated, nothing missed.
        balances = await player.ok(GetBalance)
        assert isinstance(balances, Balances)
        assert [t.table_id for t in balances.tables] == ["jade"]
        assert not any(isinstance(m, Snapshot) for m in player.table("jade"))
        events = [m for c in clients for m in c.table("jade")]
        assert_gapless(events, "through the upgrade")
        out = await asyncio.to_thread(topology.run, "status")
        assert len(re.findall(r"^node-\d\t", out, re.M)) == NODES
    finally:
        await close_all(clients)
    audit = [sys.executable, "-m", "server", "--redis-url", f"unix://{topology.folder}/redis.sock"]
    done = await asyncio.to_thread(
        subprocess.run,
        [*audit, "audit"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def assert_compose_spec(path: Path) -> None:
    """``path`` is valid against the Compose Specification's schema (check-jsonschema's
    copy): docker compose itself is not at hand here."""
    check = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent))
    assert check is not None
    done = subprocess.run(
        [check, "--builtin-schema", "vendor.compose-spec", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_compose_file_is_valid_and_has_the_same_topology() -> None:
    """Validated against the Compose Specification's schema (check-jsonschema's copy):
    docker compose itself is not at hand here. Three nodes, each named, all behind the
    balancer, whose configuration names them; and HAProxy accepts that configuration."""
    compose = ROOT / "deploy" / "compose.yaml"
    assert_compose_spec(compose)
    spec = yaml.safe_load(compose.read_text())
    services = spec["services"]
    nodes = {name: s for name, s in services.items() if name.startswith("server-")}
    assert sorted(s["environment"]["PAIGOW_NODE_NAME"] for s in nodes.values()) == [
        "node-1",
        "node-2",
        "node-3",
    ]
    for s in nodes.values():
        assert s["environment"]["PAIGOW_REDIS_URL"] == "redis://redis:6379/0"
        assert "ports" not in s  # only the balancer is published
    balancer = services["balancer"]
    assert balancer["volumes"] == ["./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro"]
    config = (ROOT / "deploy" / "haproxy.cfg").read_text()
    assert sorted(re.findall(r"^\s+server node-\d (server-\d):8765 check", config, re.M)) == sorted(
        nodes
    )
    assert "option httpchk GET /readyz" in config
    haproxy = system_command("haproxy")
    assert haproxy is not None, "make test installs HAProxy (deploy/local-cluster.sh install)"
    # The compose names resolve only in compose: check the syntax with them made local.
    local = config.replace("resolvers docker init-addr last,libc,none", "init-addr none")
    checked = subprocess.run(
        [haproxy, "-c", "-f", "/dev/stdin"],
        input=local,
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_script_finds_debians_haproxy_without_sbin_on_path(tmp_path: Path) -> None:
    """Debian installs haproxy in /usr/sbin, which a user's ``PATH`` (and a bare
    environment's) lacks: the script finds it there, rather than installing it again
    and then failing to run it."""
    haproxy = system_command("haproxy")
    assert haproxy is not None, "make test installs HAProxy (deploy/local-cluster.sh install)"
    if Path(haproxy).parent.as_posix() not in SYSTEM_FOLDERS:
        pytest.skip(f"haproxy is at {haproxy}, not in a system folder")
    # An apt-get that fails at once, first on PATH: a script that did not find haproxy
    # must not install it (as root, over the network) during a test.
    stubs = tmp_path / "bin"
    stubs.mkdir()
    (stubs / "apt-get").write_text("#!/bin/sh\nexit 97\n")
    (stubs / "apt-get").chmod(0o755)
    done = subprocess.run(
        [str(SCRIPT), "install"],
        env={"PATH": f"{stubs}:/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "installing" not in done.stderr
    assert "missing" not in done.stderr
