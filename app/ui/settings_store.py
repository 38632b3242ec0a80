"""Persist the Qt-free `SettingsModel` in QSettings, writing every change as it happens."""

from __future__ import annotations

from PySide6.QtCore import QSettings

from ..state.settings import DEFAULTS, SettingsModel

ORGANIZATION = "DTMR"
APPLICATION = "DTMR Studio"
GROUP = "studio"


def default_qsettings() -> QSettings:
    return QSettings(ORGANIZATION, APPLICATION)


class SettingsStore:
    """Loads `model` from `qsettings` once, then saves each `changed(key, value)` back."""

    def __init__(self, model: SettingsModel, qsettings: QSettings) -> None:
        self.model = model
        self.qsettings = qsettings
        qsettings.beginGroup(GROUP)
        try:
            for key in DEFAULTS:
                if qsettings.contains(key):
                    model.set(key, qsettings.value(key))
        finally:
            qsettings.endGroup()
        model.changed.connect(self._save)

    def _save(self, key: str, value) -> None:
        self.qsettings.beginGroup(GROUP)
        # an empty list reads back as None from INI files; store it as an empty string instead
        self.qsettings.setValue(key, value if value != [] else "")
        self.qsettings.endGroup()
