"""deploy/kubernetes: the manifests are valid against Kubernetes's own schemas (strict:
no field Kubernetes would ignore), and hold together: what the pods read is what the
ConfigMap and the Secret hold, the probes ask the server's endpoints, the drain fits in
the grace period, and the Service and the disruption budget select the nodes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from server.config import FILE_SUFFIX, SECRET_SETTINGS, declared
from tests.server.processes import ROOT

FOLDER = ROOT / "deploy" / "kubernetes"
MANIFESTS = sorted(p for p in FOLDER.glob("*.yaml") if p.name != "kustomization.yaml")
VALIDATE = Path(sys.executable).parent / "kubernetes-validate"

# What the server does on SIGTERM before it exits, at most: the tables handed over (well
# under a second: deploy/README.md, "Scaling in"), then every connection closed, each
# close waiting up to 10 s for its client (server/app/node.py), all at once.
DRAIN_BOUND_S = 15


def documents() -> dict[tuple[str, str], dict[str, Any]]:
    """Every resource of the folder, by (kind, name)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for path in MANIFESTS:
        for doc in yaml.safe_load_all(path.read_text()):
            found[(doc["kind"], doc["metadata"]["name"])] = doc
    return found


def test_every_manifest_is_valid_for_kubernetes() -> None:
    assert {p.name for p in MANIFESTS} >= {
        "configmap.yaml",
        "deployment.yaml",
        "service.yaml",
        "pdb.yaml",
        "secret.example.yaml",
    }
    done = subprocess.run(
        [str(VALIDATE), "--strict", *map(str, MANIFESTS)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(" passed for resource ") == sum(
        len(list(yaml.safe_load_all(p.read_text()))) for p in MANIFESTS
    )


def test_the_validator_refuses_what_kubernetes_would_not_take(tmp_path: Path) -> None:
    """Not a check that cannot fail: the same deployment with a misspelt field fails."""
    deployment = yaml.safe_load((FOLDER / "deployment.yaml").read_text())
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["readinessProbe"]["httpGet"]["paht"] = "/readyz"
    bad = tmp_path / "deployment.yaml"
    bad.write_text(yaml.safe_dump(deployment))
    done = subprocess.run(
        [str(VALIDATE), "--strict", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "paht" in done.stdout + done.stderr


def test_kustomization_lists_every_resource_but_the_secret() -> None:
    kustomization = yaml.safe_load((FOLDER / "kustomization.yaml").read_text())
    listed = set(kustomization["resources"])
    assert listed == {p.name for p in MANIFESTS} - {"secret.example.yaml"}


def test_the_pods_read_what_the_configmap_and_the_secret_hold() -> None:
    found = documents()
    config = found[("ConfigMap", "paigow-config")]
    secret = found[("Secret", "paigow-secrets")]
    deployment = found[("Deployment", "paigow-server")]
    pod = deployment["spec"]["template"]["spec"]
    [container] = pod["containers"]
    settings = {d.env: d for d in declared()}
    # Every ConfigMap key is a setting the server reads; no secret among them.
    for key in config["data"]:
        assert key in settings, key
        assert not settings[key].secret, f"{key} is a secret: the Secret holds it"
    assert container["envFrom"] == [{"configMapRef": {"name": "paigow-config"}}]
    # Every secret setting comes from a file of the mounted Secret, and nothing else.
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    [secret_volume] = [n for n, v in volumes.items() if "secret" in v]
    assert volumes[secret_volume]["secret"]["secretName"] == "paigow-secrets"
    assert mounts[secret_volume]["readOnly"] is True
    mounted_at = mounts[secret_volume]["mountPath"]
    env = {e["name"]: e for e in container["env"]}
    files = {
        name.removesuffix(FILE_SUFFIX): e["value"]
        for name, e in env.items()
        if name.endswith(FILE_SUFFIX)
    }
    # Wallet mode's secret is mounted only in wallet mode (commented out in the manifest).
    optional = {"wallet_secret"}
    assert set(files) == {f"PAIGOW_{s.upper()}" for s in SECRET_SETTINGS - optional}
    for path in files.values():
        folder, key = path.rsplit("/", 1)
        assert folder == mounted_at
        assert key in secret["stringData"]
    assert not any(name in env for name in files)  # never the value itself
    # Each pod is a node of its own name.
    assert env["PAIGOW_NODE_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}


def test_probes_drain_and_grace_period() -> None:
    found = documents()
    config = found[("ConfigMap", "paigow-config")]["data"]
    deployment = found[("Deployment", "paigow-server")]
    pod = deployment["spec"]["template"]["spec"]
    [container] = pod["containers"]
    port = int(config["PAIGOW_PORT"])
    [named] = container["ports"]
    assert (named["name"], named["containerPort"]) == ("http", port)
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    # preStop waits for the endpoints to forget the pod; SIGTERM (the image's stop
    # signal) then drains; both within the grace period, or SIGKILL cuts the drain.
    command = container["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep"
    pre_stop_s = int(command[1])
    assert 0 < pre_stop_s + DRAIN_BOUND_S < pod["terminationGracePeriodSeconds"]
    # A rolling update never takes a node away before its successor is up.
    rolling = deployment["spec"]["strategy"]["rollingUpdate"]
    assert (rolling["maxUnavailable"], rolling["maxSurge"]) == (0, 1)


def test_the_services_and_the_budget_select_the_nodes() -> None:
    found = documents()
    deployment = found[("Deployment", "paigow-server")]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    for name in ("paigow", "paigow-nodes"):
        service = found[("Service", name)]
        assert service["spec"]["selector"].items() <= labels.items()
        [port] = service["spec"]["ports"]
        assert port["targetPort"] == "http"
    assert found[("Service", "paigow-nodes")]["spec"]["publishNotReadyAddresses"] is True
    budget = found[("PodDisruptionBudget", "paigow-server")]
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert budget["spec"]["maxUnavailable"] == 1
    assert deployment["spec"]["replicas"] > budget["spec"]["maxUnavailable"]
