"""`app.state.review.ReviewState` without Qt: navigation, flags, saving, reviews of other library versions."""

from __future__ import annotations

from app.state.review import ReviewState
from dtmr.review import (
    ClipReview,
    LibraryFingerprint,
    Review,
    read_review,
    sidecar_path,
    write_review,
)


def opened(tmp_path, names=("a", "b", "c", "d"), annotator="ada") -> ReviewState:
    state = ReviewState()
    messages = []
    state.message.connect(messages.append)
    state.messages = messages
    state.open_library(tmp_path / "lib.h5", list(names))
    state.set_annotator(annotator)
    return state


def test_next_unreviewed_skips_reviewed_clips_in_table_order(tmp_path):
    state = opened(tmp_path)
    state.set_verdict(1, "plausible")
    order = [3, 2, 1, 0]  # the table sorted backwards
    assert state.next_unreviewed(order, 3) == 2
    assert state.next_unreviewed(order, 2) == 0  # 1 is reviewed
    assert state.next_unreviewed(order, 0) == 3  # wraps
    assert state.next_unreviewed(order, 3, step=-1) == 0
    assert state.next_unreviewed(order, None) == 3
    for i in (0, 2, 3):
        state.set_verdict(i, "unsure")
    assert state.next_unreviewed(order, 0) is None
    assert state.reviewed == 4


def test_flags_from_brackets_and_every_change_saved(tmp_path):
    state = opened(tmp_path)
    changed = []
    state.clip_changed.connect(changed.append)
    state.mark_start(2, 30)
    state.mark_end(2, 12)  # end before start: the range is put in order
    state.mark_end(2, 40)  # no start: that frame alone
    assert state.clip(2).flags == ((12, 30), (40, 40))
    state.set_note(2, "arm through the chest")
    state.set_tags(2, ["arm", " arm", "", "chest"])
    back = read_review(sidecar_path(tmp_path / "lib.h5", "ada")).clips["c"]
    assert back.flags == ((12, 30), (40, 40)) and back.note == "arm through the chest" and back.tags == ("arm", "chest")
    state.remove_flag(2, (40, 40))
    assert read_review(state.path).clips["c"].flags == ((12, 30),)
    assert changed and set(changed) == {2}


def test_nothing_is_written_before_an_annotator_is_known(tmp_path):
    state = ReviewState()
    state.open_library(tmp_path / "lib.h5", ["a"])
    state.set_verdict(0, "plausible")
    assert not state.active and list(tmp_path.iterdir()) == []


def test_a_review_of_another_version_keeps_the_clips_it_does_not_know(tmp_path):
    old = LibraryFingerprint.of(tmp_path / "lib.h5", ["a", "gone"])
    write_review(sidecar_path(tmp_path / "lib.h5", "ada"),
                 Review(old, "ada", {"a": ClipReview("implausible"), "gone": ClipReview("plausible")}))
    state = opened(tmp_path, names=("a", "b"))
    assert "reviewed another version" in state.messages[0]
    assert state.clip(0).verdict == "implausible" and state.reviewed == 1
    state.set_verdict(1, "unsure")
    assert set(read_review(state.path).clips) == {"a", "b", "gone"}
