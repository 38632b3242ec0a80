"""Folds of an audit: disjoint, covering, derived from repetition/view when present, else by subject."""

from __future__ import annotations

import numpy as np
import pytest

from dtmr.audit.splits import audit_split, group_values, stratified_folds
from dtmr.errors import DtmrError


def _labels(subjects=4, per_subject=9, seed=0):
    rng = np.random.default_rng(seed)
    subjects_ = np.repeat(np.arange(1, subjects + 1), per_subject)
    order = rng.permutation(len(subjects_))  # release order is a shuffle of the source order
    return subjects_[order], order


def _check_partition(split, n):
    tested = np.concatenate([f.test for f in split.folds])
    assert np.array_equal(np.sort(tested), np.arange(n))  # every clip tested exactly once
    for f in split.folds:
        assert np.intersect1d(f.train, f.test).size == 0
        assert np.array_equal(np.sort(np.concatenate([f.train, f.test])), np.arange(n))


@pytest.mark.parametrize("k", [2, 3, 5])
def test_stratified_folds_partition_and_balance_subjects(k):
    subjects, sources = _labels(per_subject=10)
    split = audit_split(subjects, sources, {}, folds=k)
    assert split.kind == "folds" and len(split.folds) == k
    _check_partition(split, len(subjects))
    for f in split.folds:
        counts = np.unique(subjects[f.test], return_counts=True)[1]
        assert counts.size == 4 and counts.max() - counts.min() <= 1


def test_folds_follow_the_source_order_whatever_the_release_order():
    subjects, sources = _labels()
    a = audit_split(subjects, sources, {}, folds=3)
    perm = np.random.default_rng(5).permutation(len(subjects))
    b = audit_split(subjects[perm], sources[perm], {}, folds=3)
    for fa, fb in zip(a.folds, b.folds):  # the same source clips, in the same (source) order
        assert np.array_equal(sources[fa.train], sources[perm][fb.train])
        assert np.array_equal(sources[fa.test], sources[perm][fb.test])
        assert np.all(np.diff(sources[fa.train]) > 0)


def test_repetitions_give_leave_value_out_folds_grouped_to_k():
    subjects, sources = _labels(per_subject=10)
    repetition = sources % 5  # 5 values, two clips of each per subject
    view = np.zeros_like(sources)
    split = audit_split(subjects, sources, {"repetition": repetition, "view": view}, folds=3)
    assert split.kind == "repetition" and len(split.folds) == 3
    _check_partition(split, len(subjects))
    seen = []
    for f in split.folds:
        assert set(repetition[f.test]) == set(f.values)
        assert not set(repetition[f.train]) & set(f.values)
        seen += f.values
    assert sorted(seen) == [0, 1, 2, 3, 4]


def test_view_used_when_repetition_is_unknown_and_one_fold_per_view():
    subjects, sources = _labels(per_subject=9)
    split = audit_split(subjects, sources, {"repetition": np.full(len(sources), -1), "view": sources % 3})
    assert split.kind == "view" and [f.values for f in split.folds] == [(0,), (1,), (2,)]
    _check_partition(split, len(subjects))


def test_a_subject_seen_under_one_value_only_falls_back_to_subject_folds():
    subjects, sources = _labels(per_subject=9)
    view = sources % 3
    view[subjects == 2] = 0
    split = audit_split(subjects, sources, {"view": view}, folds=3)
    assert split.kind == "folds"


def test_named_split_is_one_fold():
    subjects, sources = _labels(per_subject=9)
    repetition = sources % 3
    split = audit_split(subjects, sources, {"repetition": repetition}, split="synthetic")
    assert split.kind == "named" and split.name == "synthetic" and len(split.folds) == 1
    assert set(repetition[split.folds[0].test]) == {2}


def test_too_few_clips_per_subject_says_how_many_are_needed():
    subjects, sources = _labels(per_subject=2)
    with pytest.raises(DtmrError, match="needs at least 3 clips of every subject.*--folds 2"):
        stratified_folds(subjects, sources, 3, seed=0)


def test_unknown_subjects_or_one_subject_are_errors():
    subjects, sources = _labels()
    subjects[0] = -1
    with pytest.raises(DtmrError, match="no subject for 1 released clips"):
        audit_split(subjects, sources, {})
    with pytest.raises(DtmrError, match="one subject"):
        audit_split(np.ones(6, dtype=np.int64), np.arange(6), {})


def test_group_values_balances_clip_counts():
    values = np.array([0] * 6 + [1] * 5 + [2] * 3 + [3] * 2 + [4] * 2)
    groups = group_values(values, 3)
    sizes = sorted(sum(int((values == v).sum()) for v in g) for g in groups)
    assert sorted(v for g in groups for v in g) == [0, 1, 2, 3, 4] and sizes == [5, 6, 7]  # greedy, largest first
