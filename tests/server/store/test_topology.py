"""The local topologies' processes (bench/procs/topology.py): each answers for itself."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from bench.procs.topology import RedisExited, RedisProcess


def test_a_port_taken_before_the_process_binds_it_is_replaced(tmp_path: Path) -> None:
    """Another Redis on the chosen port (another test session's, say): the process
    exits at once and takes another port, and the one that answers is this one, not the
    other (a ping alone would have been answered by the other)."""
    other = RedisProcess(tmp_path / "other", {})
    other.start()
    late = RedisProcess(tmp_path / "late", {})
    late.port = other.port  # as if the other had taken it between choice and bind
    late.directives["port"] = str(other.port)
    try:
        late.start()
        assert late.port != other.port
        assert late.proc is not None
        assert other.proc is not None
        assert late.info("server")["process_id"] == late.proc.pid
        with contextlib.closing(late.client()) as client:
            client.set("mine", "late")
        with contextlib.closing(other.client()) as client:
            assert client.get("mine") is None
    finally:
        late.stop()
        other.stop()


def test_an_exit_for_another_reason_fails_at_once_with_the_logs_reason(tmp_path: Path) -> None:
    """A bad directive is no taken port: no other port is tried (which would hide the
    reason behind "no free port"), and the error says what the process said."""
    process = RedisProcess(tmp_path / "bad", {"no-such-directive": "yes"})
    first_port = process.port
    try:
        with pytest.raises(RedisExited, match="Bad directive") as raised:
            process.start()
    finally:
        process.stop()
    assert "no-such-directive" in str(raised.value)
    assert process.port == first_port  # not retried on another port
