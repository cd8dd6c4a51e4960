"""PostgreSQL's driver is an extra (`postgres`): a server told to archive there without
it stops at once and names the extra."""

from __future__ import annotations

from pathlib import Path

from tests.server.processes import run_cli


def test_a_postgresql_archive_without_its_driver_names_the_extra(tmp_path: Path) -> None:
    # A module that fails to import, ahead of the installed psycopg on the path: the
    # import the server makes fails as it does where the extra was not installed.
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "psycopg.py").write_text("raise ImportError(\"No module named 'psycopg'\")\n")
    data = tmp_path / "data"
    done = run_cli(
        [
            "--data-dir",
            str(data),
            "--port",
            "0",
            "--archive-url",
            "postgresql://paigow@127.0.0.1:9/none",
        ],
        env={"PYTHONPATH": str(shadow)},
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "paigow-server[postgres]" in done.stderr, done.stderr
    assert "psycopg" in done.stderr
    # It stopped before starting anything: no embedded Redis was made.
    assert not (data / "redis").exists()
