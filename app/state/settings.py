"""User settings as a Qt-free evented model; `app.ui.settings_store` persists it with QSettings.

Every key has a default whose type is the key's type: values read back from a settings file (where
INI stores everything as text) are coerced to it, and a value that cannot be coerced falls back to the
default instead of breaking start-up.
"""

from __future__ import annotations

from typing import Any

from .events import Signal

MAX_RECENT = 10

#: a value's type depends on its key (str, bool, int, float or list[str]), hence `Any` for values
DEFAULTS: dict[str, Any] = {
    "recent_files": [],
    "last_dir": "",
    "last_model": "",
    "device": "",
    "user_checkpoints": [],
    "link_cameras": True,
    "show_feet": True,
    "trail_length": 30,
    "speed": 1.0,
    "loop_mode": "loop",
    "play_every_frame": False,
    #: overlay mode: the source drawn under the released clip
    "overlay_source": False,
    #: where the screenshot key writes ("" = `app.ui.screenshots.default_screenshot_dir`)
    "screenshot_dir": "",
}


def coerce(value: Any, default: Any) -> Any:
    """`value` as the type of `default` (lists of str, bool, int, float, str)."""
    if isinstance(default, bool):
        if isinstance(value, str):
            return value.strip().lower() in ("1", "true", "yes", "on")
        return bool(value)
    if isinstance(default, int):
        return int(value)
    if isinstance(default, float):
        return float(value)
    if isinstance(default, list):
        if value is None or value == "":
            return []
        if isinstance(value, str):
            return [value]
        return [str(v) for v in value]
    return "" if value is None else str(value)


class SettingsModel:
    """Signal: `changed(key, value)`."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {k: (list(v) if isinstance(v, list) else v) for k, v in DEFAULTS.items()}
        self.changed = Signal()

    def get(self, key: str) -> Any:
        value = self._values[key]
        return list(value) if isinstance(value, list) else value

    def set(self, key: str, value: Any) -> None:
        if key not in DEFAULTS:
            raise KeyError(f"unknown setting {key!r}")
        try:
            value = coerce(value, DEFAULTS[key])
        except (TypeError, ValueError):
            value = DEFAULTS[key]
        if value != self._values[key]:
            self._values[key] = value
            self.changed.emit(key, self.get(key))

    def items(self) -> list[tuple[str, Any]]:
        return [(k, self.get(k)) for k in DEFAULTS]

    def add_recent(self, path: str) -> None:
        """Put `path` first in the recent files (no duplicates, at most MAX_RECENT)."""
        recent = [p for p in self.get("recent_files") if p != path]
        self.set("recent_files", [path, *recent][:MAX_RECENT])

    def add_user_checkpoint(self, path: str) -> None:
        paths = self.get("user_checkpoints")
        if path not in paths:
            self.set("user_checkpoints", [*paths, path])
