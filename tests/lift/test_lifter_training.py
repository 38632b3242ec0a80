"""Lifter training, checkpoints (weights_only: no code runs) and the metrics."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

from dtmr.errors import CheckpointError
from dtmr.lift import lift_keypoints, load_lifter, save_lifter
from dtmr.lift.cameras import project, random_cameras, to_level_frame
from dtmr.lift.data import WindowSampler
from dtmr.lift.metrics import procrustes_aligned
from dtmr.lift.model import LifterConfig, LifterNet
from dtmr.lift.train import TrainSettings, train_lifter


class RunsCode:
    """A pickle payload that would create a file if unpickled by a full unpickler."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


@pytest.fixture
def tiny() -> LifterNet:
    torch.manual_seed(0)
    return LifterNet(LifterConfig(window=3, hidden=16, blocks=1)).eval()


def test_a_few_training_steps_reduce_the_loss(held_out_joints):
    _, history = train_lifter(held_out_joints, LifterConfig(window=3, hidden=64, blocks=1),
                              TrainSettings(steps=60, batch=64, lr=3e-3), log_every=20)
    assert len(history) == 3 and history[-1] < 0.7 * history[0]


def test_sampled_batches_are_finite_and_root_relative(held_out_joints):
    batch = WindowSampler(held_out_joints, 9).sample(128, np.random.default_rng(0))
    assert batch.features.shape[1:] == (9, 17, 3) and batch.targets.shape[1:] == (17, 3)
    assert len(batch.features) > 100 and np.isfinite(batch.features).all() and np.isfinite(batch.targets).all()
    np.testing.assert_allclose(batch.targets[:, [11, 12]].mean(1), 0, atol=1e-6)
    assert set(np.unique(batch.features[..., 2])) <= {0.0, 1.0}


def test_checkpoint_round_trip_gives_the_same_lift(tmp_path, tiny, held_out_joints):
    path = save_lifter(tmp_path / "lifter.pt", tiny, data={"source": "test"}, metrics={"mpjpe_mm": 1.0})
    joints = held_out_joints[0]
    cams = random_cameras(joints[:, 11].mean(0)[None], np.random.default_rng(0))
    xy = project(joints[None], cams)[0]
    np.testing.assert_array_equal(lift_keypoints(xy, lifter=tiny), lift_keypoints(xy, lifter=path))


def test_loading_refuses_a_pickle_that_would_run_code(tmp_path):
    marker, path = tmp_path / "ran", tmp_path / "evil.pt"
    torch.save({"format": "dtmr-lifter", "version": 1, "config": RunsCode(marker)}, path)
    with pytest.raises(CheckpointError, match="refused to load") as info:
        load_lifter(path)
    assert str(info.value).startswith(str(path)) and not marker.exists()


@pytest.mark.parametrize("change, match", [
    (lambda c: c.update(format="dtmr-checkpoint"), "not a lifter checkpoint"),
    (lambda c: c["config"].update(hidden=10**7), "invalid lifter configuration"),
    (lambda c: c["config"].update(hidden=32), "weights do not fit"),
    (lambda c: c["state_dict"]["inp.weight"].fill_(float("nan")), "NaN"),
    (lambda c: c.pop("state_dict"), "state_dict"),
])
def test_damaged_checkpoints_are_one_line_errors(tmp_path, tiny, change, match):
    path = save_lifter(tmp_path / "lifter.pt", tiny, data={}, metrics={})
    checkpoint = torch.load(path, weights_only=True)
    change(checkpoint)
    torch.save(checkpoint, path)
    with pytest.raises(CheckpointError, match=match) as info:
        load_lifter(path)
    assert str(info.value).startswith(str(path))


def test_truncated_and_missing_files_are_checkpoint_errors(tmp_path, tiny):
    path = save_lifter(tmp_path / "lifter.pt", tiny, data={}, metrics={})
    path.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(CheckpointError, match="corrupted"):
        load_lifter(path)
    with pytest.raises(CheckpointError, match="no such"):
        load_lifter(tmp_path / "absent.pt")


def test_cameras_look_at_their_target_and_keep_y_up():
    rng = np.random.default_rng(2)
    targets = rng.normal(size=(50, 3))
    cams = random_cameras(targets, rng, {"target_jitter_m": (0.0, 0.0), "roll_deg": (0.0, 0.0)})
    np.testing.assert_allclose(project(targets[:, None], cams)[:, 0], cams.principal, atol=1e-6)
    above = project((targets + [0, 0.5, 0])[:, None], cams)[:, 0]
    assert (above[:, 1] < cams.principal[:, 1]).all()  # higher in the world is higher in the image
    np.testing.assert_allclose(to_level_frame(np.tile([0.0, 1.0, 0.0], (50, 1)), cams), np.tile([0, 1, 0], (50, 1)),
                               atol=1e-12)


def test_procrustes_undoes_a_similarity_transform():
    rng = np.random.default_rng(0)
    true = rng.normal(size=(4, 12, 3))
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    q *= np.sign(np.linalg.det(q))
    moved = 1.7 * true @ q + [1.0, -2.0, 0.5]
    np.testing.assert_allclose(procrustes_aligned(moved, true), true, atol=1e-9)
    mirrored = true * [-1, 1, 1]  # a reflection is not a rotation: it must not be undone
    assert np.abs(procrustes_aligned(mirrored, true) - true).max() > 0.1
