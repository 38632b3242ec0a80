"""The Selection state: seeded reference draws from the pool (tests/data/test_reference_pool.py), pinning,
and its signals."""

import pytest

from app.state.selection import Selection
from dtmr.render import pick_reference
from studio_fakes import make_source


def test_selection_draws_pins_and_keeps_a_valid_pin():
    sel = Selection()
    refs = []
    sel.reference_changed.connect(refs.append)
    source = make_source(subjects=3, actions=2)
    sel.set_library(source)
    sel.select_source(0)
    first = sel.reference
    assert first is not None and source.clips[first.index].subject != 0 and not first.pinned
    sel.random_reference()
    assert sel.seed == 1 and sel.reference.seed == 1
    sel.pin(5)
    assert sel.reference.index == 5 and sel.reference.pinned
    sel.select_source(1)  # same subject 0: the pin (subject 2) stays valid
    assert sel.reference.index == 5 and sel.reference.pinned
    sel.select_source(4)  # subject 2: the pinned clip is now the same person -> redrawn
    assert not sel.reference.pinned and source.clips[sel.reference.index].subject != 2
    with pytest.raises(ValueError):
        sel.pin(5)
    assert refs[0] is None and len(refs) >= 4


def test_unpin_and_bad_source_index():
    sel = Selection()
    sel.set_library(make_source(subjects=2, actions=1))
    sel.select_source(0)
    sel.pin(1)
    sel.unpin()
    assert sel.reference.index == 1 and not sel.reference.pinned
    with pytest.raises(IndexError):
        sel.select_source(7)


def test_pair_changed_fires_once_per_action_and_not_for_unpin():
    sel = Selection()
    pairs = []
    sel.pair_changed.connect(lambda: pairs.append(sel.pair))
    sel.set_library(make_source(subjects=3, actions=2))
    sel.select_source(0)
    sel.random_reference()
    before = len(pairs)
    sel.pin(sel.reference.index)  # same clip: pinned, pair unchanged
    sel.unpin()
    assert len(pairs) == before
    assert pairs[0] == (None, None) and pairs[1][0] == 0 and len(pairs) == 3


def test_the_studio_draws_the_reference_dtmr_export_draws_for_the_same_seed():
    source = make_source(subjects=4, actions=2)
    subjects = source.metadata_table()["subject"]
    sel = Selection()
    sel.set_library(source)
    for index in range(len(source)):
        sel.select_source(index)
        for seed in range(5):
            sel.set_seed(seed)
            assert sel.reference.index == pick_reference(subjects, index, seed)
