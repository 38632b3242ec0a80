"""`ReviewState` (Qt-free): undo, clearing a verdict, and the sidecar of a bundled library in the data folder,
read once from beside the library where earlier versions wrote it."""

from __future__ import annotations

from app.state.review import ReviewState
from dtmr.review import ClipReview, LibraryFingerprint, Review, read_review, sidecar_beside, write_review
from dtmr.review import location


def test_undo_restores_each_change_in_reverse_and_saves(tmp_path):
    state = ReviewState()
    state.open_library(tmp_path / "lib.h5", ["a", "b"])
    state.set_annotator("ada")
    state.set_verdict(0, "plausible")
    state.set_verdict(0, "plausible")  # the verdict it has: no change, nothing to undo
    state.mark_end(1, 7)
    state.set_tags(1, ["knee"])
    state.set_verdict(0, None)
    assert [e.what for e in state.undo_stack] == ["verdict", "flag", "tags", "verdict"]
    assert state.undo().what == "verdict" and state.clip(0).verdict == "plausible"
    assert state.undo().what == "tags" and state.clip(1).tags == ()
    assert state.undo().what == "flag" and state.clip(1).empty
    assert state.undo().what == "verdict" and state.clip(0).empty
    assert state.undo() is None and not state.can_undo
    assert read_review(state.path).clips == {}
    state.set_verdict(1, "unsure")
    state.set_annotator("bob")  # another annotator: another review, nothing of ada's to undo
    assert not state.can_undo


def test_a_bundled_library_keeps_its_review_in_the_data_folder(tmp_path, monkeypatch):
    installation = tmp_path / "resources"
    (installation / "demo").mkdir(parents=True)
    library = installation / "demo" / "demo.h5"
    monkeypatch.setattr(location, "resources_dir", lambda: installation)
    earlier = sidecar_beside(library, "ada")  # what an earlier Studio wrote into the installation
    write_review(earlier, Review(LibraryFingerprint.of(library, ["a", "b"]), "ada", {"a": ClipReview("implausible")}))
    state = ReviewState(tmp_path / "data")
    messages = []
    state.message.connect(messages.append)
    state.open_library(library, ["a", "b"])
    state.set_annotator("ada")
    assert state.in_data_folder and state.path.parent == tmp_path / "data" / "reviews" / "bundled" / "demo"
    assert state.clip(0).verdict == "implausible" and "saved in" in messages[0]
    state.set_verdict(1, "plausible")
    assert set(read_review(state.path).clips) == {"a", "b"}
    assert set(read_review(earlier).clips) == {"a"}  # the installation's file is left as it was
