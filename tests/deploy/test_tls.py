"""TLS end to end at the balancer of the local topology (deploy/local-cluster.sh with
PAIGOW_CLUSTER_TLS_CERT): a player plays over ``wss://`` through HAProxy, which holds a
certificate made here (self-signed, with `cryptography`), to plain nodes behind it; the
client checks the certificate, a plain ``ws://`` is not answered, and ``/metrics`` stays
refused over TLS too."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from websockets.exceptions import InvalidMessage

from protocol.messages import Bet, Join
from tests.deploy.test_local_cluster import NODES, SCRIPT, Topology
from tests.server.helpers import Client


def self_signed(folder: Path) -> Path:
    """A key and a certificate for localhost and 127.0.0.1, valid for a day, in one PEM
    file (as HAProxy's ``crt`` takes them)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = folder / "balancer.pem"
    pem.write_bytes(
        cert.public_bytes(serialization.Encoding.PEM)
        + key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    pem.chmod(0o600)
    return pem


@pytest.fixture
def tls_topology(tmp_path: Path) -> Iterator[tuple[Topology, Path]]:
    tmp_path.joinpath("tls").mkdir()
    cert = self_signed(tmp_path / "tls")
    up = Topology(tmp_path / "cluster")
    up.env["PAIGOW_CLUSTER_TLS_CERT"] = str(cert)
    try:
        yield up, cert
    finally:
        subprocess.run(
            [str(SCRIPT), "down"], env=up.env, capture_output=True, timeout=120, check=False
        )


def https_get(url: str, context: ssl.SSLContext) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5, context=context) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read().decode()


@pytest.mark.asyncio
async def test_a_player_plays_over_wss_through_the_balancer(
    tls_topology: tuple[Topology, Path],
) -> None:
    topology, cert = tls_topology
    out = await asyncio.to_thread(topology.run, "up")
    assert out.count("ready on ws://") == NODES  # the nodes themselves: plain
    assert f"balancer: wss://localhost:{topology.port}/" in out
    trusting = ssl.create_default_context(cafile=str(cert))
    url = f"wss://localhost:{topology.port}/"
    player = await Client.hello(url, label="tls", ssl=trusting)
    try:
        assert player.welcome is not None
        await player.ok(Join, table_id="jade", buy_in=500)
        await player.ok(Bet, table_id="jade", amount=20)
    finally:
        await player.close()
    # The browser's page and the probes over https; /metrics still refused to players.
    status, body = await asyncio.to_thread(
        https_get, f"https://localhost:{topology.port}/readyz", trusting
    )
    assert (status, body) == (200, "ready\n")
    status, _ = await asyncio.to_thread(
        https_get, f"https://localhost:{topology.port}/metrics", trusting
    )
    assert status == 403
    # A client that does not trust the certificate refuses it; a plain ws:// gets no
    # WebSocket from a TLS port.
    with pytest.raises(ssl.SSLCertVerificationError):
        await Client.hello(url, label="untrusting", ssl=ssl.create_default_context())
    with pytest.raises((InvalidMessage, ConnectionError, EOFError)):
        await Client.hello(f"ws://localhost:{topology.port}/", label="plain")
