"""axe-core, the accessibility checker, run in a page: every rule of its default set,
the violations counted by impact (``minor``, ``moderate``, ``serious``, ``critical``).

The library is vendored under ``tests/web/vendor/`` (``vendor_axe.sh``) and never served
by the server: it is evaluated in the page through the browser's debugging protocol,
which the page's Content-Security-Policy does not govern (an injected ``<script>`` would
be refused by ``script-src 'self'``, as it should be)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from playwright.async_api import Page

VERSION = "4.14.1"
AXE = Path(__file__).parent / "vendor" / f"axe-core-{VERSION}"
IMPACTS = ("critical", "serious", "moderate", "minor")


@cache
def source() -> str:
    """The library's code (650 kB, read once)."""
    return (AXE / "axe.min.js").read_text(encoding="utf-8")


# What axe found, in a shape short enough to print and to put in a failure message.
RUN = """async () => {
  const r = await axe.run(document, { resultTypes: ['violations'] });
  return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')), count: v.nodes.length }));
}"""


async def check(page: Page) -> list[dict[str, Any]]:
    """The page's accessibility violations as axe reports them (an empty list: none)."""
    if not await page.evaluate("typeof window.axe !== 'undefined'"):
        await page.evaluate(source() + "\n;undefined")
    found: list[dict[str, Any]] = await page.evaluate(RUN)
    return found


def by_impact(violations: list[dict[str, Any]]) -> dict[str, int]:
    """How many violations (rules broken, not elements) of each impact."""
    return {i: sum(1 for v in violations if v["impact"] == i) for i in IMPACTS}


def blocking(violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The serious and critical ones: none may stand."""
    return [v for v in violations if v["impact"] in ("serious", "critical")]
