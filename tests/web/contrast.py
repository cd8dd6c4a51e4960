"""The WCAG contrast of an element's text against what is drawn behind it, computed in
the page from the styles the browser resolved (background colours composited up the
tree; a gradient counts as its lightest stop, the worst case for light text)."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page

CONTRAST = (Path(__file__).parent / "contrast.js").read_text()


async def contrast(page: Page, selector: str) -> float:
    """The contrast ratio of the first element matching ``selector`` (1 to 21)."""
    ratio: float = await page.locator(selector).first.evaluate(CONTRAST)
    return ratio
