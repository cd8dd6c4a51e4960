"""The reference wallet as the tests run it: ``python -m server.wallet.reference`` in a
child process on loopback, its faults set through its admin port."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

from tests.server.processes import CLI_WITHIN_S

ROOT = Path(__file__).resolve().parents[3]
SECRET = "wallet-test-secret-0123456789"


class WalletProcess:
    """A reference wallet in a child process; ``url`` its API, ``admin`` its faults."""

    def __init__(self, folder: Path, *, opening_balance: int | None = 100_000) -> None:
        self.log = folder / "wallet.log"
        self.db = folder / "wallet.sqlite3"
        args = [
            sys.executable, "-m", "server.wallet.reference",
            "--port", "0", "--admin-port", "0", "--secret", SECRET, "--db", str(self.db),
        ]  # fmt: skip
        if opening_balance is not None:
            args += ["--opening-balance", str(opening_balance)]
        out = folder / "wallet.out"
        # The child keeps its own descriptors: the parent holds no file open.
        with out.open("wb") as stdout, self.log.open("ab") as stderr:
            self.proc = subprocess.Popen(
                args, cwd=ROOT, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL
            )
        self.port = 0
        self.admin_port = 0
        # A process's imports: about a second, far more on a loaded machine.
        deadline = time.monotonic() + CLI_WITHIN_S
        while time.monotonic() < deadline:
            line = out.read_bytes().partition(b"\n")
            if line[1]:
                info = json.loads(line[0])
                self.port, self.admin_port = int(info["listening"]), int(info["admin"])
                break
            if self.proc.poll() is not None:
                raise AssertionError(f"the wallet exited: {self.log.read_text()[-2000:]}")
            time.sleep(0.05)
        else:
            raise AssertionError("the reference wallet did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    async def _admin(self, method: str, path: str, body: Any = None) -> Any:
        async with (
            aiohttp.ClientSession() as session,
            session.request(method, f"http://127.0.0.1:{self.admin_port}{path}", json=body) as r,
        ):
            assert r.status == 200, await r.text()
            return await r.json()

    async def faults(self, **faults: Any) -> Any:
        """Set faults: delay_ms, fail, drop_after_commit, down."""
        return await self._admin("POST", "/admin/faults", faults)

    async def fund(self, player: str, balance: int) -> None:
        await self._admin("POST", "/admin/players", {"player": player, "balance": balance})

    async def state(self) -> dict[str, Any]:
        found: dict[str, Any] = await self._admin("GET", "/admin/state")
        return found

    async def balance(self, player: str) -> int:
        return int((await self.state())["players"].get(player, 0))

    async def applied(self, player: str | None = None) -> list[dict[str, Any]]:
        """The transactions applied (of ``player``), oldest first."""
        return [
            t
            for t in (await self.state())["transactions"]
            if t["status"] == "applied" and (player is None or t["player"] == player)
        ]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
