"""Where the review sidecars of a library live: beside it, or in the user's data folder.

A review is written beside its library (`LIB.review.<annotator>.json`), unless the library is bundled with
dtmr (it lies under `dtmr.resources.resources_dir()`, like the demo library) or its folder cannot be written:
then in the user's data folder, never in the installation.

- Bundled: `<data>/reviews/bundled/<path under resources>.review.<annotator>.json`, so a review of the demo
  library is found again after an upgrade or a reinstall elsewhere.
- Read-only elsewhere: `<data>/reviews/<library name>-<8 hex digits of its absolute path>/...`, one folder per
  library path, so two read-only libraries of one name never share a review.

The user's data folder (`user_data_dir`) is `$DTMR_DATA_DIR` when set, otherwise the platform's application
data folder for organization "DTMR", application "DTMR Studio" (the folder Qt's
`QStandardPaths.AppDataLocation` names for the Studio): `$XDG_DATA_HOME` or `~/.local/share` on Linux,
`~/Library/Application Support` on macOS, `%APPDATA%` on Windows.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from ..resources import resources_dir

ORGANIZATION = "DTMR"
APPLICATION = "DTMR Studio"
DATA_DIR_ENV = "DTMR_DATA_DIR"
REVIEWS = "reviews"


def user_data_dir() -> Path:
    """The user's data folder for dtmr (see the module's docstring); not created here."""
    if os.environ.get(DATA_DIR_ENV):
        return Path(os.environ[DATA_DIR_ENV]).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / ORGANIZATION / APPLICATION


def bundled_part(library_path: str | Path) -> Path | None:
    """The library's path under the bundled resources folder, None when it is not bundled."""
    try:
        return Path(library_path).resolve().relative_to(resources_dir().resolve())
    except ValueError:
        return None


def writable_folder(folder: Path) -> bool:
    """Whether files can be created in `folder` (a folder that does not exist yet: in its first existing parent)."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def review_folder(library_path: str | Path, data_dir: str | Path | None = None) -> Path:
    """The folder that holds the sidecars of `library_path` (the rule above); `data_dir`: the user's data
    folder, `user_data_dir()` when None."""
    library_path = Path(library_path).absolute()
    beside = library_path.parent
    bundled = bundled_part(library_path)
    if bundled is None and writable_folder(beside):
        return beside
    reviews = Path(data_dir if data_dir is not None else user_data_dir()) / REVIEWS
    if bundled is not None:
        return reviews / "bundled" / bundled.parent
    digest = hashlib.sha256(str(library_path.resolve()).encode("utf-8")).hexdigest()[:8]
    return reviews / f"{library_path.name}-{digest}"

