"""What an operator watches, checked by Prometheus itself (Debian's `prometheus`
package, installed by tests/deploy/install_prometheus.sh: `make prometheus`).

The alerting and recording rules pass their unit tests (`promtool test rules`), the
configurations load, and every query of the Grafana dashboard is answered with data by
a real Prometheus scraping three `paigow-server` nodes while bots play a few rounds.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio
import yaml

from bench.procs.topology import free_port
from clients.bots import run_bots
from protocol.messages import Bet, ErrorReply
from tests.e2e.process_helpers import start
from tests.helpers import until
from tests.server.helpers import Client
from tests.server.processes import ROOT, ServerProcess

PROMETHEUS = ROOT / "deploy" / "prometheus"
DASHBOARD = ROOT / "deploy" / "grafana" / "paigow.json"
RULES_TEST = Path(__file__).parent / "prometheus" / "rules_test.yaml"
NODES = 3


def tool(name: str) -> str:
    """prometheus or promtool: from PAIGOW_PROMETHEUS_BIN, else on PATH."""
    folder = os.environ.get("PAIGOW_PROMETHEUS_BIN")
    found = shutil.which(name, path=folder) if folder else shutil.which(name)
    assert found is not None, f"{name} is missing: make prometheus installs it"
    return found


def promtool(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tool("promtool"), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_alert_rules_pass_their_unit_tests() -> None:
    done = promtool("test", "rules", RULES_TEST.name, cwd=RULES_TEST.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_every_alert_has_a_unit_test() -> None:
    alerts = (PROMETHEUS / "alerts.yaml").read_text()
    tests = RULES_TEST.read_text()
    names = [line.split(":", 1)[1].strip() for line in alerts.splitlines() if "- alert:" in line]
    assert len(names) >= 10
    for name in names:
        assert f"alertname: {name}\n" in tests, name


def test_the_configurations_load() -> None:
    done = promtool("check", "config", str(PROMETHEUS / "prometheus.yml"))
    assert done.returncode == 0, done.stdout + done.stderr
    # Compose's Prometheus reads that file and scrapes every node of compose.yaml.
    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
    service = compose["services"]["prometheus"]
    assert "./prometheus:/etc/prometheus:ro" in service["volumes"]
    assert all(port.startswith("127.0.0.1:") for port in service["ports"])
    scraped = yaml.safe_load((PROMETHEUS / "prometheus.yml").read_text())
    [job] = scraped["scrape_configs"]
    assert job["job_name"] == "paigow"
    nodes = sorted(name for name in compose["services"] if name.startswith("server-"))
    assert sorted(job["static_configs"][0]["targets"]) == [f"{n}:8765" for n in nodes]
    # The local topology's (deploy/local-cluster.sh monitor) too.
    config = subprocess.run(
        [str(ROOT / "deploy" / "local-cluster.sh"), "prometheus-config"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "PAIGOW_CLUSTER_NODE_PORT": "9901"},
    ).stdout
    assert "127.0.0.1:9901" in config
    assert "127.0.0.1:9903" in config
    done = subprocess.run(
        [tool("promtool"), "check", "config", "/dev/stdin"],
        input=config,
        cwd=PROMETHEUS,  # where its rule files are named from
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def dashboard_queries() -> list[tuple[str, str]]:
    """(panel title, PromQL) of every query of the dashboard, with Grafana's variables
    given the values a viewer of every node over the last minutes would give them."""
    dashboard = json.loads(DASHBOARD.read_text())
    queries = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"].replace("$__rate_interval", "5m").replace("$instance", ".*")
            assert "$" not in expr, expr  # a variable the test does not know
            queries.append((panel["title"], expr))
    return queries


class Prometheus:
    """A Prometheus of the test's own, on a loopback port, scraping ``targets`` every
    second with the rules of deploy/prometheus; stopped by :meth:`close`."""

    def __init__(self, folder: Path, targets: list[str]) -> None:
        folder.mkdir()
        config = folder / "prometheus.yml"
        config.write_text(
            json.dumps(  # JSON is YAML
                {
                    "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                    "rule_files": [
                        str(PROMETHEUS / "rules.yaml"),
                        str(PROMETHEUS / "alerts.yaml"),
                    ],
                    "scrape_configs": [
                        {"job_name": "paigow", "static_configs": [{"targets": targets}]}
                    ],
                }
            )
        )
        self.port = free_port()
        self.log = (folder / "prometheus.log").open("wb")
        self.proc = subprocess.Popen(
            [
                tool("prometheus"),
                f"--config.file={config}",
                f"--storage.tsdb.path={folder / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--web.console.templates=/dev/null",
                "--web.console.libraries=/dev/null",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        self.folder = folder

    def get(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        url = f"http://127.0.0.1:{self.port}{path}" + (f"?{query}" if query else "")
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.loads(response.read())

    def query(self, expr: str) -> list[dict[str, Any]]:
        answer = self.get("/api/v1/query", query=expr)
        assert answer["status"] == "success", answer
        result: list[dict[str, Any]] = answer["data"]["result"]
        return result

    def output(self) -> str:
        return (self.folder / "prometheus.log").read_text(errors="replace")[-3000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()


@pytest.fixture
def processes() -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    yield started
    for p in started:
        p.close()


@pytest.mark.asyncio
async def test_every_dashboard_query_is_answered_by_a_real_prometheus(
    redis_url: str,
    redis_client: redis.asyncio.Redis,  # flushed: the nodes seed the tables catalog afresh
    processes: list[ServerProcess],
    tmp_path: Path,
) -> None:
    nodes = [
        start(
            processes,
            redis_url,
            tmp_path,
            setting_ms=400,
            lease_ms=1000,
            betting_ms=1000,
            name=f"node-{n}",
        )
        for n in range(1, NODES + 1)
    ]
    ports = [await node.started(within=90) for node in nodes]
    # The banner gives the address a person opens, before the one scripts wait for.
    for node, port in zip(nodes, ports, strict=True):
        assert f"to play, open http://127.0.0.1:{port}/ in a browser" in node.output()
    prometheus = Prometheus(tmp_path / "prometheus", [f"127.0.0.1:{p}" for p in ports])
    try:

        async def scraping() -> bool | None:
            try:
                up = await asyncio.to_thread(prometheus.query, 'up{job="paigow"} == 1')
            except OSError:
                assert prometheus.proc.poll() is None, prometheus.output()
                return None
            return len(up) == NODES or None

        await until(scraping, 60, "Prometheus to scrape every node")
        # Bots through two nodes at table k (quick phases); one bad request (a bet without a seat),
        # so that the errors panel has a series.
        bots = await asyncio.gather(
            run_bots(f"ws://127.0.0.1:{ports[0]}/", ["k"], count=2, rounds=3, bet=10, seed=1),
            run_bots(f"ws://127.0.0.1:{ports[1]}/", ["k"], count=2, rounds=3, bet=10, seed=2),
        )
        for report in bots:
            assert report.failures == [], report
            assert report.rounds == 2 * 3
        stray = await Client.hello(f"ws://127.0.0.1:{ports[2]}/")
        try:
            assert isinstance(await stray.call(Bet, table_id="k", amount=10), ErrorReply)
        finally:
            await stray.close()

        queries = dashboard_queries()
        assert len(queries) >= 25

        async def answered() -> bool | None:
            empty = []
            for title, expr in queries:
                result = await asyncio.to_thread(prometheus.query, expr)
                values = [float(r["value"][1]) for r in result]
                if not values or all(math.isnan(v) for v in values):
                    empty.append(f"{title}: {expr}")
            return None if empty else True

        try:
            await until(answered, 90, "every dashboard query to return data", every=1.0)
        except AssertionError:
            missing = [
                f"{title}: {expr}"
                for title, expr in queries
                if not await asyncio.to_thread(prometheus.query, expr)
            ]
            raise AssertionError("no data for:\n" + "\n".join(missing)) from None
        # The business as counted: the rounds the bots played together (three each, at
        # one table), settled on the node holding it.
        [rounds] = await asyncio.to_thread(
            prometheus.query, 'sum(paigow_rounds_settled_total{job="paigow"})'
        )
        assert float(rounds["value"][1]) >= 3
        # No alert fires on a healthy site.
        alerts = await asyncio.to_thread(prometheus.query, 'ALERTS{alertstate="firing"}')
        assert alerts == [], alerts
    finally:
        prometheus.close()
