"""Named splits: exact membership on hand-made tables, clear errors, and the real data sets' counts."""

from __future__ import annotations

import numpy as np
import pytest

from dtmr.data import SPLITS, generate_clips, split_indices
from dtmr.data.splits import NTU60_CS_TRAIN_SUBJECTS
from dtmr.errors import DtmrError


def _table(**fields):
    return {name: np.asarray(values, dtype=np.int64) for name, values in fields.items()}


def test_every_split_is_listed_with_a_description():
    assert set(SPLITS) == {"nwucla", "uiprmd", "ntu_cv", "ntu_cs", "synthetic"}
    assert all(split.name == name and len(split.description) > 20 for name, split in SPLITS.items())


def test_nwucla_trains_on_views_1_and_2_and_tests_on_view_3():
    train, test = split_indices("nwucla", _table(view=[0, 1, 2, 2, 0, 1]))
    assert train.tolist() == [0, 1, 4, 5] and test.tolist() == [2, 3]
    assert train.dtype == np.int64


def test_uiprmd_trains_on_repetitions_0_to_6():
    train, test = split_indices("uiprmd", _table(repetition=[9, 0, 6, 7, 3, 8]))
    assert train.tolist() == [1, 2, 4] and test.tolist() == [0, 3, 5]


def test_ntu_cross_view_keeps_single_person_actions_and_tests_on_camera_1():
    table = _table(view=[1, 2, 3, 1, 2, 3, 1], action=[1, 49, 10, 50, 60, 120, 49], subject=[1] * 7)
    train, test = split_indices("ntu_cv", table)
    assert train.tolist() == [1, 2] and test.tolist() == [0, 6]  # A50, A60, A120 are left out


def test_ntu_cross_subject_uses_the_twenty_training_performers():
    subjects = np.arange(1, 41)
    table = _table(subject=subjects, action=np.full(40, 5), view=np.ones(40))
    train, test = split_indices("ntu_cs", table)
    assert subjects[train].tolist() == list(NTU60_CS_TRAIN_SUBJECTS)
    assert len(test) == 20 and not set(subjects[test]) & set(NTU60_CS_TRAIN_SUBJECTS)
    table = _table(subject=[1, 3, 1, 3], action=[12, 12, 55, 55])
    assert [t.tolist() for t in split_indices("ntu_cs", table)] == [[0], [1]]


def test_synthetic_holds_out_the_last_repetition():
    clips = generate_clips(subjects=3, actions=2, repetitions=3, views=2)
    table = _table(**{name: [getattr(c, name) for c in clips] for name in ("subject", "action", "view", "repetition")})
    train, test = split_indices("synthetic", table)
    assert set(table["repetition"][test]) == {2} and set(table["repetition"][train]) == {0, 1}
    assert len(train) == 2 * len(test)
    for name in ("subject", "action", "view"):  # re-identification and recognition stay testable
        assert set(table[name][train]) == set(table[name][test])


@pytest.mark.parametrize(
    "name, table, message",
    [
        ("nwucla", _table(subject=[0, 1]), "needs the clips' view"),
        ("nwucla", _table(view=[0, -1, 2]), "1 of 3 clips have none"),
        ("nwucla", _table(view=[1, 2, 3]), "expects view in 0..2, found 3"),
        ("uiprmd", _table(repetition=[0, 10]), "expects repetition in 0..9"),
        ("ntu_cv", _table(view=[0, 1, 2], action=[1, 2, 3]), "expects view in 1..3"),
        ("ntu_cv", _table(view=[1, 2, 3], action=[0, 2, 3]), "1-based action numbers"),
        ("ntu_cs", _table(subject=[1, 41], action=[1, 1]), "expects subject in 1..40"),
        ("ntu_cs", _table(subject=[1, 2], action=[3, 3]), "no test clips"),
        ("synthetic", _table(repetition=[0, 0]), "only one"),
        ("nwucla", _table(view=[0, 1]), "no test clips"),
        ("cross_everything", _table(view=[0]), "unknown split"),
        ("uiprmd", {"repetition": np.array([0.0, 8.0])}, "must be a 1-D array of integers"),
    ],
)
def test_metadata_that_does_not_fit_the_split_is_refused(name, table, message):
    with pytest.raises(DtmrError, match=message):
        split_indices(name, table)


def test_real_nwucla_metadata(shared_data):
    with np.load(shared_data / "nwucla.npz") as data:
        table = _table(subject=data["subject"], action=data["action"], view=data["view"])
    assert np.bincount(table["view"]).tolist() == [516, 504, 464]
    train, test = split_indices("nwucla", table)
    assert (len(train), len(test)) == (1020, 464)
    assert set(table["subject"][train]) == set(table["subject"][test])  # every subject in every view


def test_real_uiprmd_metadata(shared_data):
    with np.load(shared_data / "uiprmd_kinect.npz") as data:
        table = _table(subject=data["subject"], action=data["action"], repetition=data["repetition"])
    train, test = split_indices("uiprmd", table)
    assert (len(train), len(test)) == (1400, 600)
    assert set(table["subject"][test]) == set(range(10)) and set(table["action"][test]) == set(range(10))
