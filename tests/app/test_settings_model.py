"""Settings: typed coercion, recent files, and persistence through QSettings (INI file)."""

from PySide6.QtCore import QSettings

from app.state.settings import MAX_RECENT, SettingsModel, coerce
from app.ui.settings_store import SettingsStore


def test_coerce_reads_back_ini_text():
    assert coerce("true", False) is True and coerce("0", True) is False
    assert coerce("12", 30) == 12 and coerce("1.5", 1.0) == 1.5
    assert coerce("a.npz", []) == ["a.npz"] and coerce(None, []) == [] and coerce(("a", "b"), []) == ["a", "b"]


def test_recent_files_are_unique_newest_first_and_bounded():
    model = SettingsModel()
    changes = []
    model.changed.connect(lambda k, v: changes.append(k))
    for i in range(MAX_RECENT + 3):
        model.add_recent(f"/data/{i}.npz")
    model.add_recent("/data/5.npz")
    recent = model.get("recent_files")
    assert recent[0] == "/data/5.npz" and len(recent) == MAX_RECENT and len(set(recent)) == MAX_RECENT
    assert set(changes) == {"recent_files"}


def test_bad_value_falls_back_to_default_and_unknown_key_raises():
    model = SettingsModel()
    model.set("trail_length", "many")
    assert model.get("trail_length") == 30
    try:
        model.set("nope", 1)
    except KeyError:
        pass
    else:
        raise AssertionError("unknown setting accepted")


def test_store_persists_every_change(tmp_path):
    path = str(tmp_path / "s.ini")
    first = SettingsModel()
    SettingsStore(first, QSettings(path, QSettings.Format.IniFormat))
    first.set("trail_length", 12)
    first.set("link_cameras", False)
    first.add_recent("/x/clips.npz")
    first.set("user_checkpoints", [])
    second = SettingsModel()
    SettingsStore(second, QSettings(path, QSettings.Format.IniFormat))
    assert second.get("trail_length") == 12
    assert second.get("link_cameras") is False
    assert second.get("recent_files") == ["/x/clips.npz"]
    assert second.get("user_checkpoints") == []
