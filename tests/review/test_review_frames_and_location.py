"""Issue 42: frames 1-based wherever a person reads them (sidecar version 2; version 1 files still read as
they were meant), and where the sidecars of a bundled or read-only library live (the user's data folder)."""

from __future__ import annotations

import json

import pytest

from dtmr.errors import InputError
from dtmr.resources import DEMO_LIBRARY, resource_path
from dtmr.review import (
    ClipReview,
    LibraryFingerprint,
    Review,
    find_sidecars,
    flag_text,
    read_review,
    review_folder,
    sidecar_beside,
    sidecar_path,
    user_data_dir,
    write_review,
)
from dtmr.review import location

LIB = LibraryFingerprint.of("clips.h5", ["a", "b"])


def sidecar_json(version, flags, **extra):
    return {"format": "dtmr-review", "version": version, **extra,
            "library": {"name": LIB.name, "clips": LIB.clips, "names_crc32": LIB.names_crc32}, "annotator": "ada",
            "clips": {"a": {"verdict": "implausible", "flags": flags, "note": "", "tags": [], "time": "t"}}}


def test_a_version_1_sidecar_reads_as_it_was_meant_and_is_written_back_1_based(tmp_path):
    """Version 1 stored the Studio's 0-based clock frames: [[4, 11]] was flagged at the counter's frames 5-12."""
    path = tmp_path / "clips.h5.review.ada.json"
    path.write_text(json.dumps(sidecar_json(1, [[4, 11], [0, 0]])))
    review = read_review(path)
    assert review.clips["a"].flags == ((0, 0), (4, 11))
    assert [flag_text(f) for f in review.clips["a"].flags] == ["frame 1", "frames 5–12"]
    write_review(path, review)
    data = json.loads(path.read_text())
    assert data["version"] == 2 and data["frames"] == "1-based"
    assert data["clips"]["a"]["flags"] == [[1, 1], [5, 12]]
    assert read_review(path).clips == review.clips


@pytest.mark.parametrize("version, flags, extra, reason", [
    (2, [[0, 3]], {}, "not a frame range (1 <= start <= end)"),
    (1, [[-1, 3]], {}, "not a frame range (0 <= start <= end)"),
    (2, [[1, 3]], {"frames": "0-based"}, "stores \"1-based\" frame numbers"),
    (3, [], {}, "version 3 is not supported (this dtmr reads 1, 2)"),
])
def test_frames_outside_the_versions_numbering_are_refused(tmp_path, version, flags, extra, reason):
    path = tmp_path / "clips.h5.review.ada.json"
    path.write_text(json.dumps(sidecar_json(version, flags, **extra)))
    with pytest.raises(InputError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        read_review(path)


def test_user_data_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("DTMR_DATA_DIR", str(tmp_path / "mine"))
    assert user_data_dir() == tmp_path / "mine"
    monkeypatch.delenv("DTMR_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(location.sys, "platform", "linux")
    assert user_data_dir() == tmp_path / "xdg" / "DTMR" / "DTMR Studio"


def test_the_bundled_demo_is_reviewed_in_the_data_folder(tmp_path):
    demo = resource_path(*DEMO_LIBRARY)
    data = tmp_path / "data"
    assert review_folder(demo, data) == data / "reviews" / "bundled" / "demo"
    assert sidecar_path(demo, "Ada Lovelace", data) == \
        data / "reviews" / "bundled" / "demo" / "demo_library.h5.review.Ada_Lovelace.json"
    assert sidecar_beside(demo, "Ada Lovelace") == demo.parent / "demo_library.h5.review.Ada_Lovelace.json"
    (data / "reviews" / "bundled" / "demo").mkdir(parents=True)
    write_review(sidecar_path(demo, "ada", data), Review(LIB, "ada", {"a": ClipReview("plausible")}))
    assert find_sidecars(demo, data) == [sidecar_path(demo, "ada", data)]


def test_a_read_only_library_is_reviewed_in_the_data_folder_one_folder_per_path(tmp_path, monkeypatch):
    writable = tmp_path / "mine" / "clips.h5"
    assert review_folder(writable, tmp_path / "data") == writable.parent  # the usual place: beside it
    read_only = [tmp_path / "ro1" / "clips.h5", tmp_path / "ro2" / "clips.h5"]
    for path in read_only:
        path.parent.mkdir()
    monkeypatch.setattr(location.os, "access", lambda p, _mode: "ro" not in str(p))
    folders = [review_folder(p, tmp_path / "data") for p in read_only]
    assert folders[0] != folders[1]
    for folder in folders:
        assert folder.parent == tmp_path / "data" / "reviews" and folder.name.startswith("clips.h5-")
    assert review_folder(read_only[0], tmp_path / "data") == folders[0]  # the same library: the same folder
