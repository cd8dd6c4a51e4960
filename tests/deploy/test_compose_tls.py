"""TLS in the compose deployment (deploy/compose.tls.yaml over deploy/compose.yaml): the
override turns on the TLS ``bind`` of deploy/haproxy.cfg, mounts the certificates and
publishes the port; the real HAProxy, run on that very file (made local: no Docker
here), then answers ``https://`` with the certificate, and refuses ``/metrics`` over
it; without the override's variable it binds no TLS port at all."""

from __future__ import annotations

import os
import re
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from bench.procs.topology import free_ports
from tests.deploy.test_local_cluster import assert_compose_spec
from tests.deploy.test_tls import https_get, self_signed
from tests.helpers import system_command
from tests.server.processes import ROOT

DEPLOY = ROOT / "deploy"
CERTS_IN_IMAGE = "/usr/local/etc/haproxy/certs/"


def test_the_override_is_valid_and_turns_tls_on() -> None:
    override = DEPLOY / "compose.tls.yaml"
    assert_compose_spec(override)
    balancer = yaml.safe_load(override.read_text())["services"]["balancer"]
    assert balancer["environment"] == {"PAIGOW_BALANCER_TLS": "1"}
    assert balancer["volumes"] == [f"./certs:{CERTS_IN_IMAGE.rstrip('/')}:ro"]
    assert balancer["ports"] == ["${TLS_PUBLISH:-443}:8443"]
    config = (DEPLOY / "haproxy.cfg").read_text()
    assert f"bind :8443 ssl crt {CERTS_IN_IMAGE} alpn http/1.1" in config


def local_config(plain: int, tls: int, certs: Path) -> str:
    """deploy/haproxy.cfg with loopback ports, the certificates' folder here, and the
    compose names of the nodes left unresolved (each node is simply down)."""
    config = (DEPLOY / "haproxy.cfg").read_text()
    config = config.replace("bind :8765", f"bind 127.0.0.1:{plain}")
    config = config.replace(
        f"bind :8443 ssl crt {CERTS_IN_IMAGE}", f"bind 127.0.0.1:{tls} ssl crt {certs}/"
    )
    return config.replace("resolvers docker init-addr last,libc,none", "init-addr none")


@contextmanager
def haproxy(config: Path, tls: bool) -> Iterator[None]:
    binary = system_command("haproxy")
    assert binary is not None, "make test installs HAProxy (deploy/local-cluster.sh install)"
    env = {k: v for k, v in os.environ.items() if k != "PAIGOW_BALANCER_TLS"}
    if tls:
        env["PAIGOW_BALANCER_TLS"] = "1"
    checked = subprocess.run(
        [binary, "-c", "-f", str(config)], env=env, capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    proc = subprocess.Popen(
        [binary, "-db", "-f", str(config)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def listening(port: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.05)
    return False


def test_haproxy_on_compose_s_file_speaks_tls_only_when_turned_on(tmp_path: Path) -> None:
    certs = tmp_path / "certs"
    certs.mkdir()
    cert = self_signed(certs)
    plain = free_ports(2)
    tls = plain + 1
    config = tmp_path / "haproxy.cfg"
    config.write_text(local_config(plain, tls, certs))
    context = ssl.create_default_context(cafile=str(cert))

    with haproxy(config, tls=True):
        assert listening(plain)
        assert listening(tls)
        # No node is up behind it: HAProxy's own 503, over TLS, the certificate checked.
        status, _ = https_get(f"https://localhost:{tls}/readyz", context)
        assert status == 503
        status, _ = https_get(f"https://localhost:{tls}/metrics", context)
        assert status == 403

    with haproxy(config, tls=False):
        assert listening(plain)
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", tls)) != 0  # no TLS port without the override
    assert re.search(r"^\.if defined\(PAIGOW_BALANCER_TLS\)$", config.read_text(), re.M)
