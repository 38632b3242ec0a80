"""Occlusion attribution points at what a classifier reads: one joint, or a span of frames."""

import numpy as np
import pytest
import torch

from dtmr import Clip
from dtmr.audit.attribution import occlusion_attribution
from dtmr.data import generate_clips

HAND = 7  # NTU-25 left hand


@pytest.fixture(scope="module")
def clips():
    return generate_clips(subjects=4, actions=1, repetitions=4, seed=0)  # subjects differ in size


def softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def hand_height_classifier(clips):
    """P(subject) from the mean height of the left hand alone: a Gaussian around each subject's mean."""
    subjects = sorted({c.subject for c in clips})
    centres = np.array([np.mean([c.joints[:, HAND, 1].mean() for c in clips if c.subject == s]) for s in subjects])
    width = 0.25 * np.min(np.diff(np.sort(centres)))

    def predict_proba(batch):
        heights = np.array([np.nanmean(c.joints[:, HAND, 1]) for c in batch])
        return softmax(-((heights[:, None] - centres[None]) ** 2) / (2 * width**2))

    return predict_proba, subjects


def test_a_classifier_of_the_hand_height_relies_on_the_hand_alone(clips):
    predict_proba, subjects = hand_height_classifier(clips)
    calls = []

    def counted(batch):
        calls.append(len(batch))
        return predict_proba(batch)

    clip = clips[8]  # subject 3, whose hand height lies between those of subjects 1 and 2
    result = occlusion_attribution(counted, clip, subjects.index(clip.subject), window=8)
    windows = len(range(0, clip.num_frames - 8 + 1, 4)) + ((clip.num_frames - 8) % 4 != 0)
    assert calls == [1 + 25 + windows]  # one batched call: the clip, each joint, each window
    assert result.top_joints(1) == [HAND]
    assert result.joints[HAND] > 0.05
    assert np.count_nonzero(result.joints) == 1  # moving any other joint leaves the hand where it was
    assert result.joints_normalized[HAND] == 1.0 and result.joints_normalized.min() == 0.0
    assert result.frames.shape == (clip.num_frames,) and (result.frames >= 0).all()
    assert result.base_probability == pytest.approx(predict_proba([clip])[0, subjects.index(clip.subject)])


def test_a_model_trained_on_one_joint_points_at_that_joint(clips):
    """A softmax regression trained (here, in a second) on the hand's trajectory statistics only."""
    torch.manual_seed(0)
    subjects = sorted({c.subject for c in clips})

    def features(batch):
        rows = [np.concatenate([c.joints[:, HAND].mean(axis=0), c.joints[:, HAND].std(axis=0)]) for c in batch]
        return torch.tensor(np.stack(rows), dtype=torch.float32)  # (N, 6)

    x = features(clips)  # (N, 6)
    mean, std = x.mean(0), x.std(0) + 1e-6
    y = torch.tensor([subjects.index(c.subject) for c in clips])
    model = torch.nn.Linear(6, len(subjects))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    for _ in range(200):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model((x - mean) / std), y)
        loss.backward()
        optimizer.step()

    def predict_proba(batch):
        with torch.no_grad():
            return torch.softmax(model((features(batch) - mean) / std), dim=1).numpy()

    assert (predict_proba(clips).argmax(axis=1) == y.numpy()).mean() > 0.7
    for clip in clips[:4]:
        result = occlusion_attribution(predict_proba, clip, subjects.index(clip.subject))
        assert result.top_joints(1) == [HAND]
        assert result.joints[HAND] > 0


def test_a_classifier_of_frames_10_to_20_points_there():
    rng = np.random.default_rng(0)
    joints = np.repeat(rng.normal(0, 0.3, (1, 25, 3)), 40, axis=0).astype(np.float32)
    joints[..., 1] += 0.01 * np.arange(40, dtype=np.float32)[:, None]  # a slow rise: interpolation keeps it
    joints[10:21, :, 1] += 0.3 * np.sin(np.linspace(0, np.pi, 11, dtype=np.float32))[:, None]  # a jump
    clip = Clip(joints, "ntu25")
    baseline = float(np.mean(joints[10:21, 0, 1]) - 0.05)  # P(class 0) = 0.73 as it is

    def predict_proba(batch):
        lift = np.array([np.mean(c.joints[10:21, 0, 1]) for c in batch]) - baseline
        p = 1 / (1 + np.exp(-20 * lift))
        return np.stack([p, 1 - p], axis=1)

    result = occlusion_attribution(predict_proba, clip, 0, window=8)
    assert 10 <= int(np.argmax(result.frames)) <= 20
    assert (result.frames[12:20] > 0).all()  # the windows that flatten the jump's top
    # windows start every 4 frames: only those touching frames 10-20 matter, so frames 0-3 and 28-39 do not
    assert not result.frames[:4].any() and not result.frames[28:].any()
    assert result.frames[10:21].sum() > 2 * (result.frames[:10].sum() + result.frames[21:].sum())
    assert result.frames_normalized.max() == 1.0
    assert not result.joints[1:].any()  # it reads the root joint alone


def test_drops_are_clipped_at_zero_and_missing_joints_stay_finite(clips):
    clip = clips[0].replace(joints=clips[0].joints.copy())
    clip.joints[5:, HAND] = np.nan

    def occlusion_helps(batch):  # the further the clip is from the original, the surer it gets
        distance = np.array([np.nansum(np.abs(c.joints - clip.joints)) for c in batch])
        p = distance / (1 + distance)
        return np.stack([p, 1 - p], axis=1)

    result = occlusion_attribution(occlusion_helps, clip, 0)
    assert not result.joints.any() and not result.frames.any()
    assert (result.joints_normalized == 0).all()
    result = occlusion_attribution(occlusion_helps, clip, 1)
    assert np.isfinite(result.joints).all() and result.joints.max() > 0


def test_bad_predictors_and_arguments_are_errors(clips):
    clip = clips[0]
    with pytest.raises(ValueError, match="shape"):
        occlusion_attribution(lambda batch: np.ones((1, 2)), clip, 0)
    with pytest.raises(ValueError, match="class index 3"):
        occlusion_attribution(lambda batch: np.full((len(batch), 3), 1 / 3), clip, 3)
    with pytest.raises(ValueError, match="window"):
        occlusion_attribution(lambda batch: np.full((len(batch), 3), 1 / 3), clip, 0, window=0)
