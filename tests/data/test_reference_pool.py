"""The one reference rule (dtmr/data/reference_pool.py): candidates of known and unknown sources, empty pools,
seeded draws, the three seeding schemes unchanged, and every caller drawing from the same candidate set."""

import numpy as np
import pytest

from dtmr.data.reference_pool import ReferencePool
from dtmr.errors import DtmrError
from dtmr.eval.protocol import draw_seed
from dtmr.release.chunks import reference_index
from dtmr.render import pick_reference

#: subject per clip; -1 = unknown
MIXED = np.array([0, 0, 1, 2, -1, 2, -1])
#: every subject known: the draws the callers made before the pool, recorded from that code
KNOWN = np.array([3, 3, 1, 2, 2, 5, 1, 3, 2, 5])


def test_a_known_source_takes_only_clips_of_other_known_subjects():
    pool = ReferencePool(MIXED)
    assert pool.candidates(0).tolist() == [2, 3, 5]
    assert pool.candidates(3).tolist() == [0, 1, 2]
    assert pool.candidates_for(2).tolist() == [0, 1, 2]  # a source outside the pool: same rule, no own clip
    assert pool.is_candidate(0, 3) and not pool.is_candidate(0, 1) and not pool.is_candidate(0, 4)


def test_an_unknown_source_takes_any_other_clip_never_itself():
    pool = ReferencePool(MIXED)
    assert pool.candidates(4).tolist() == [0, 1, 2, 3, 5, 6]
    assert pool.candidates_for(None).tolist() == list(range(7))  # from another library: every clip
    assert pool.candidates_for(-1, own=6).tolist() == [0, 1, 2, 3, 4, 5]
    assert pool.is_candidate(4, 6) and not pool.is_candidate(4, 4) and not pool.is_candidate(4, 7)


def test_an_empty_candidate_set_gives_none_or_a_clear_error():
    same_subject = ReferencePool(np.array([4, 4, -1]))
    assert same_subject.candidates(0).size == 0
    assert same_subject.draw(0, seed=1) is None
    assert same_subject.draw_keyed(1, 0, 4, own=0) is None
    with pytest.raises(DtmrError, match="no reference for subject 4"):
        same_subject.draw_all(np.random.default_rng(0))
    with pytest.raises(DtmrError, match="no reference for clip 0: the pool holds no other clip"):
        ReferencePool(np.array([-1])).draw_all(np.random.default_rng(0))
    with pytest.raises(DtmrError, match="no reference for clip 0: no reference clip of another known subject"):
        reference_index(0, 0, 4, np.array([4, 4, -1]), same_source=True)
    assert pick_reference(np.array([4, 4, -1]), 0) is None


def test_draws_are_seeded_and_uniform_over_the_candidates():
    subjects = np.repeat(np.arange(5), 4)
    pool = ReferencePool(subjects)
    draws = [pool.draw(0, seed) for seed in range(400)]
    assert draws[:50] == [pool.draw(0, seed) for seed in range(50)]
    counts = np.bincount(draws, minlength=20)
    assert counts[:4].sum() == 0 and counts[4:].min() > 8  # never subject 0; every one of the 16 is drawn
    assert pool.draw_keyed(3, 7, 0) == pool.draw_keyed(3, 7, 0)
    assert np.array_equal(pool.draw_all(np.random.default_rng(5)), pool.draw_all(np.random.default_rng(5)))


def test_with_every_subject_known_each_scheme_draws_what_it_drew_before_the_pool():
    pool = ReferencePool(KNOWN)
    assert [pick_reference(KNOWN, i, 100 + i) for i in range(10)] == [8, 4, 4, 5, 6, 2, 5, 2, 0, 4]
    assert [reference_index(11, i, int(KNOWN[i]), KNOWN, True) for i in range(10)] == [2, 4, 1, 0, 5, 8, 5, 6, 0, 2]
    rng = np.random.default_rng(np.random.SeedSequence([4, 0xD7]))
    assert pool.draw_all(rng).tolist() == [9, 5, 3, 7, 2, 4, 7, 2, 7, 4]


def test_unknown_sources_in_the_evaluation_draw_never_pick_themselves():
    subjects = np.array([-1, -1, -1, 0, 1])
    many = np.stack([ReferencePool(subjects).draw_all(np.random.default_rng(s)) for s in range(300)])
    assert set(many[:, 0]) == {1, 2, 3, 4} and set(many[:, 2]) == {0, 1, 3, 4}
    assert set(many[:, 3]) == {4}


class _Split:
    def __init__(self, subjects):
        self.subjects = subjects
        self.actions = np.zeros_like(subjects)
        self.views = np.zeros_like(subjects)


class _Data:
    def __init__(self, subjects):
        self.test = self.train = _Split(subjects)


@pytest.mark.parametrize("source", range(len(MIXED)))
def test_every_caller_draws_from_the_same_candidate_set(source):
    """The Studio and `dtmr export` (pick_reference), `dtmr anonymize` (reference_index) and the evaluation
    protocol (draw_seed): over many seeds each reaches exactly the pool's candidates of the source."""
    expected = set(ReferencePool(MIXED).candidates(source).tolist())
    seeds = range(300)
    export = {pick_reference(MIXED, source, seed) for seed in seeds}
    anonymize = {reference_index(seed, source, int(MIXED[source]), MIXED, True) for seed in seeds}
    evaluation = {int(draw_seed(_Data(MIXED), seed).test_refs[source]) for seed in seeds}
    assert export == anonymize == evaluation == expected
