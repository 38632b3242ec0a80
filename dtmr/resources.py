"""Where the bundled resources (demo library, models, icons) are.

In a source checkout (editable install) they are the top-level `resources/` folder; an installed wheel
carries them under `<prefix>/share/dtmr-studio/resources` (`~/.local/share/...` for `pip install --user`);
a frozen build next to the executable. `DTMR_RESOURCES` overrides all of them.
"""

from __future__ import annotations

import os
import site
import sys
from pathlib import Path


def resources_dir() -> Path:
    candidates = []
    if os.environ.get("DTMR_RESOURCES"):
        candidates.append(Path(os.environ["DTMR_RESOURCES"]))
    if getattr(sys, "frozen", False):
        candidates.append(Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent)) / "resources")
    candidates.append(Path(__file__).resolve().parent.parent / "resources")
    candidates.append(Path(sys.prefix) / "share" / "dtmr-studio" / "resources")
    candidates.append(Path(site.USER_BASE or "~/.local").expanduser() / "share" / "dtmr-studio" / "resources")
    for c in candidates:
        if c.is_dir():
            return c
    return candidates[0]


def resource_path(*parts: str) -> Path:
    return resources_dir().joinpath(*parts)


DEMO_LIBRARY = ("demo", "demo_library.h5")
MODELS_DIR = ("models",)
