"""The synthetic generator: labels, determinism, geometry, feet, noise, and that it is learnable."""

from __future__ import annotations

import re

import numpy as np
import pytest

from dtmr.data import SYNTHETIC_ACTION_NAMES, generate_clips
from dtmr.errors import DtmrError
from dtmr.skeleton import (
    NTU25,
    bone_directions,
    bone_lengths,
    foot_contacts,
    foot_sliding_speed,
    forward_kinematics,
)

STANDING = [SYNTHETIC_ACTION_NAMES.index(n) + 1 for n in
            ("wave", "clap", "squat", "punch", "bow", "raise arms", "phone call", "drink", "throw")]
TOES = [NTU25.index("left_foot"), NTU25.index("right_foot")]


@pytest.fixture(scope="module")
def default_set():
    return generate_clips()


@pytest.fixture(scope="module")
def clean_set():
    return generate_clips(subjects=6, noise=0.0)


def _labels(clips, name):
    return np.array([getattr(c, name) for c in clips])


def test_default_set_has_every_subject_action_and_repetition(default_set):
    assert len(default_set) == 40 * 12 * 2
    assert len(SYNTHETIC_ACTION_NAMES) >= 12
    assert sorted(set(_labels(default_set, "subject"))) == list(range(1, 41))
    assert sorted(set(_labels(default_set, "action"))) == list(range(1, 13))
    assert sorted(set(_labels(default_set, "repetition"))) == [0, 1]
    assert set(_labels(default_set, "view")) == {1}
    frames = _labels(default_set, "num_frames")
    assert frames.min() >= 40 and frames.max() <= 90 and np.unique(frames).size > 20
    names = [c.sample_name for c in default_set]
    assert len(set(names)) == len(names)
    for clip in default_set[:30]:
        assert clip.topology == "ntu25" and clip.fps == 30.0
        assert clip.joints.dtype == np.float32 and np.isfinite(clip.joints).all()
        assert clip.sample_name == f"S{clip.subject:03d}A{clip.action:03d}R{clip.repetition:02d}V{clip.view:02d}"
        assert clip.extra == {"generator": "dtmr-synthetic", "seed": "0"}


def test_same_arguments_give_bit_identical_clips_whatever_the_global_rng():
    np.random.seed(1)
    first = generate_clips(subjects=2, actions=3, repetitions=2, seed=7)
    np.random.seed(2)
    second = generate_clips(subjects=2, actions=3, repetitions=2, seed=7)
    assert [c.sample_name for c in first] == [c.sample_name for c in second]
    assert all(np.array_equal(a.joints, b.joints) for a, b in zip(first, second))
    other_seed = generate_clips(subjects=2, actions=3, repetitions=2, seed=8)
    assert not np.allclose(first[0].joints[: other_seed[0].num_frames], other_seed[0].joints[: first[0].num_frames])


def test_a_clip_does_not_depend_on_which_other_clips_are_generated():
    small = {c.sample_name: c.joints for c in generate_clips(subjects=2, actions=3, repetitions=1, views=3, seed=3)}
    large = {c.sample_name: c.joints for c in generate_clips(subjects=3, actions=5, repetitions=2, views=1, seed=3)}
    shared = set(small) & set(large)
    assert len(shared) == 2 * 3 * 1
    assert all(np.array_equal(small[name], large[name]) for name in shared)


def test_views_see_the_same_performance_from_different_yaws():
    clips = generate_clips(subjects=1, actions=2, repetitions=1, views=3, noise=0.0)
    assert [c.view for c in clips] == [1, 2, 3, 1, 2, 3]
    first, second, third = clips[:3]
    assert first.num_frames == second.num_frames == third.num_frames
    np.testing.assert_allclose(bone_lengths(first.joints, "ntu25"), bone_lengths(second.joints, "ntu25"), atol=1e-5)

    def hip_yaw(clip):
        line = clip.joints[0, NTU25.right_hip] - clip.joints[0, NTU25.left_hip]
        return np.degrees(np.arctan2(line[2], line[0]))

    assert abs(abs(hip_yaw(second) - hip_yaw(first)) - 45.0) < 1.0
    assert abs(abs(hip_yaw(third) - hip_yaw(first)) - 45.0) < 1.0
    assert np.sign(hip_yaw(second) - hip_yaw(first)) != np.sign(hip_yaw(third) - hip_yaw(first))


def test_bone_lengths_are_constant_within_a_clip_except_for_noise(clean_set, default_set):
    for clip in clean_set:
        lengths = bone_lengths(clip.joints, "ntu25")
        assert np.ptp(lengths, axis=0).max() < 1e-5
    spread = np.median([bone_lengths(c.joints, "ntu25").std(axis=0) for c in default_set[:100]], axis=0)
    assert spread.max() < 0.02 and np.median(spread) < 0.012


def test_bodies_have_realistic_adult_proportions(clean_set):
    starts = [c for c in clean_set if c.action in STANDING and c.repetition == 0]
    heads = np.array([c.joints[0, NTU25.index("head"), 1] for c in starts])  # head centre, floor at y = 0
    assert heads.min() > 1.25 and heads.max() < 1.85
    lengths = np.array([bone_lengths(c.joints[0], "ntu25") for c in starts])
    bone = {NTU25.joint_names[c]: b for b, (_, c) in enumerate(NTU25.bones)}
    legs = lengths[:, bone["left_knee"]] + lengths[:, bone["left_ankle"]]
    arms = lengths[:, bone["left_elbow"]] + lengths[:, bone["left_wrist"]]
    assert 0.6 < legs.min() and legs.max() < 1.0
    assert 0.38 < arms.min() and arms.max() < 0.65
    assert np.unique(np.round(legs, 3)).size == len({c.subject for c in starts})  # every body differs


def test_feet_stay_planted_and_touch_the_ground(clean_set, default_set):
    for clip in clean_set:
        if clip.action in STANDING:
            toes = clip.joints[:, TOES, 1]
            assert np.ptp(toes) < 1e-4 and abs(toes.min() - 0.012) < 1e-4
            assert foot_sliding_speed(clip.joints, "ntu25", clip.fps) < 1e-3
        assert clip.joints[:, TOES, 1].min() > 0.0  # nothing goes through the floor
    raw = [c for c in default_set if c.action in STANDING][:200]
    contact = np.mean([foot_contacts(c.joints, "ntu25", c.fps).mean() for c in raw])
    sliding = np.mean([foot_sliding_speed(c.joints, "ntu25", c.fps) for c in raw])
    assert contact > 0.8
    assert sliding < 0.1  # m/s, the jitter of the noise only; real Kinect data is near 0.15


def test_moving_actions_lift_the_feet(clean_set):
    for name in ("walk in place", "jump", "kick"):
        action = SYNTHETIC_ACTION_NAMES.index(name) + 1
        for clip in (c for c in clean_set if c.action == action):
            toes = clip.joints[:, TOES, 1]
            assert toes.max() > 0.04
            assert foot_contacts(clip.joints, "ntu25", clip.fps).any()


def test_noise_is_about_a_centimetre_and_zero_noise_is_clean():
    raw = generate_clips(subjects=2, actions=12, repetitions=1, seed=4)
    clean = generate_clips(subjects=2, actions=12, repetitions=1, seed=4, noise=0.0)
    errors = np.concatenate([np.linalg.norm(r.joints - c.joints, axis=-1).ravel() for r, c in zip(raw, clean)])
    rms = np.sqrt(np.mean(errors**2))
    assert 0.005 < rms < 0.015
    assert np.percentile(errors, 99.99) < 0.12  # glitches stay small


# -- learnability: what the models and the attackers must find in the data -----------------------------
def _nearest_centroid_accuracy(features, labels, train, test):
    mean, sd = features[train].mean(0), features[train].std(0) + 1e-9
    z = (features - mean) / sd
    classes = np.unique(labels[train])
    centroids = np.stack([z[train & (labels == k)].mean(0) for k in classes])
    predicted = classes[np.argmin(((z[test][:, None] - centroids[None]) ** 2).sum(-1), axis=1)]
    return float(np.mean(predicted == labels[test]))


def _relative_bone_lengths(clip):
    lengths = np.median(bone_lengths(clip.joints, "ntu25"), axis=0)
    return lengths / lengths.sum()


def _velocity_statistics(clip):
    """Motion only: the clip rebuilt with unit bones, then per-joint speed statistics (yaw invariant)."""
    unit = forward_kinematics(np.zeros((clip.num_frames, 3)), bone_directions(clip.joints, "ntu25"), np.ones(24), "ntu25")
    velocity = np.diff(unit, axis=0) * clip.fps
    speed = np.linalg.norm(velocity, axis=-1)
    return np.concatenate([speed.mean(0), speed.std(0), np.abs(velocity[..., 1]).mean(0), [clip.num_frames / 90]])


def test_subjects_are_identifiable_from_bone_lengths(default_set):
    features = np.stack([_relative_bone_lengths(c) for c in default_set])
    subject, repetition = _labels(default_set, "subject"), _labels(default_set, "repetition")
    accuracy = _nearest_centroid_accuracy(features, subject, repetition == 0, repetition == 1)
    assert accuracy > 0.6  # chance 1/40


def test_subjects_are_identifiable_from_motion_alone_and_actions_are_separable(default_set):
    features = np.stack([_velocity_statistics(c) for c in default_set])
    subject, action = _labels(default_set, "subject"), _labels(default_set, "action")
    train, test = _labels(default_set, "repetition") == 0, _labels(default_set, "repetition") == 1
    assert _nearest_centroid_accuracy(features, action, train, test) > 0.6  # chance 1/12
    # re-identification: features standardized within each action, so the action does not dominate
    for a in np.unique(action):
        rows = action == a
        features[rows] = (features[rows] - features[rows & train].mean(0)) / (features[rows & train].std(0) + 1e-9)
    assert _nearest_centroid_accuracy(features, subject, train, test) > 0.2  # chance 1/40


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"subjects": 0}, "subjects"),
        ({"actions": len(SYNTHETIC_ACTION_NAMES) + 1}, "actions"),
        ({"repetitions": 1.5}, "repetitions"),
        ({"views": 6}, "views"),
        ({"seed": -1}, "seed"),
        ({"noise": float("nan")}, "noise"),
    ],
)
def test_bad_arguments_are_refused_clearly(arguments, message):
    with pytest.raises(DtmrError, match=re.escape(message)):
        generate_clips(**arguments)
