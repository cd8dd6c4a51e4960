"""The WCAG contrast of an element's text against what is drawn behind it, computed in
the page from the styles the browser resolved (background colours composited up the
tree; a gradient counts as its lightest stop, the worst case for light text).

:data:`CONTRAST` is the source of a JavaScript function of one element returning the
ratio (1 to 21), to call in the page: ``(${CONTRAST})(el)``."""

from __future__ import annotations

from pathlib import Path

CONTRAST = (Path(__file__).parent / "contrast.js").read_text()
