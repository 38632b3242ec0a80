"""Fonts for panel text.

DejaVu Sans is taken from matplotlib's bundled fonts (a dependency of the library, found without
importing matplotlib) because it has the Greek and symbol glyphs the titles use (β); without it,
Pillow's bundled default font is used. Either way the GUI and the CLI use the same file on one machine.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

from PIL import ImageFont

ELLIPSIS = "…"


def _dejavu(bold: bool) -> Path | None:
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or not spec.submodule_search_locations:
        return None
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    path = Path(next(iter(spec.submodule_search_locations))) / "mpl-data" / "fonts" / "ttf" / name
    return path if path.is_file() else None


@lru_cache(maxsize=32)
def load_font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    path = _dejavu(bold)
    if path is not None:
        return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size)


def fit_text(text: str, font, width: float) -> str:
    """`text`, cut and ended with an ellipsis when it is wider than `width` pixels."""
    if font.getlength(text) <= width:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # longest prefix that fits with the ellipsis
        mid = (lo + hi + 1) // 2
        if font.getlength(text[:mid] + ELLIPSIS) <= width:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo].rstrip() + ELLIPSIS
