"""deploy/paigow@.service: several nodes on one host. systemd itself reads the units
(``systemd-analyze verify``: no unknown key, no bad setting), and the flags the template
gives each instance are the server's own, naming the node, its port and its folder."""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from server.config import Settings, add_arguments, from_arguments
from tests.server.processes import ROOT

DEPLOY = ROOT / "deploy"
SERVER = Path(sys.executable).parent / "paigow-server"


def exec_start(unit: str) -> list[str]:
    [line] = [x for x in unit.splitlines() if x.startswith("ExecStart=")]
    return shlex.split(line.removeprefix("ExecStart="))


@pytest.mark.parametrize("name", ["paigow.service", "paigow@.service", "paigow.target"])
def test_systemd_reads_the_units_without_a_complaint(name: str, tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (Debian: systemd)")
    for unit in DEPLOY.glob("paigow*.*"):
        if unit.suffix in (".service", ".target"):
            # The server where the unit expects it: systemd checks that it runs.
            text = unit.read_text().replace("/opt/paigow/bin/paigow-server", str(SERVER))
            (tmp_path / unit.name).write_text(text)
    instance = name.replace("@.", "@1.")
    done = subprocess.run(
        [analyze, "verify", f"./{instance}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"{name}:" not in done.stderr, done.stderr  # a warning names the file


def test_each_instance_is_a_node_of_its_own(tmp_path: Path) -> None:
    unit = (DEPLOY / "paigow@.service").read_text()
    command = exec_start(unit)
    assert command[0] == "/opt/paigow/bin/paigow-server"
    assert command[-1] == "serve"

    def settings_of(instance: str) -> Settings:
        args = [a.replace("%i", instance).replace("%H", "host") for a in command[1:-1]]
        parser = argparse.ArgumentParser()
        # The shared environment file sets these too: the flags must win over it.
        add_arguments(parser, {"PAIGOW_PORT": "8765", "PAIGOW_DATA_DIR": "/var/lib/paigow"})
        return from_arguments(parser.parse_args(args))

    one, two = settings_of("1"), settings_of("2")
    assert (one.node_name, one.port, str(one.data_dir)) == ("host-1", 8801, "/var/lib/paigow/1")
    assert (two.node_name, two.port, str(two.data_dir)) == ("host-2", 8802, "/var/lib/paigow/2")
    assert "StateDirectory=paigow/%i" in unit
    assert "KillMode=mixed" in unit
    assert "WantedBy=multi-user.target paigow.target" in unit


def test_the_guide_names_only_units_that_ship() -> None:
    """deploy/README.md's steps (the rolling upgrade's among them) name units that are
    in deploy/: an instance paigow@N is of the template paigow@.service."""
    guide = (DEPLOY / "README.md").read_text()
    named = set(re.findall(r"\bpaigow(@\d*)?\.(service|target)\b", guide))
    assert ("@", "service") in named
    for at, kind in named:
        unit = f"paigow{'@' if at else ''}.{kind}"
        assert (DEPLOY / unit).exists(), unit
    instances = re.findall(r"systemctl (?:restart|stop|start|enable --now) (paigow\S*)", guide)
    assert "paigow@1" in instances
    for name in instances:
        base = "paigow@.service" if "@" in name else "paigow.service"
        assert (DEPLOY / (base if not name.endswith(".target") else "paigow.target")).exists()
