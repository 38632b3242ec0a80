import time

import numpy as np
import pytest
import torch

from dtmr import CheckpointError, Clip, InputError
from dtmr.models.checkpoints.checkpoint import load_checkpoint, save_checkpoint
from dtmr.models.baselines import NaiveRetargeter
from dtmr.models.recognizers import Recognizer, window_indices
from dtmr.models.recognizers.preprocessing import prepare_sequence


@pytest.fixture(scope="module")
def recognizer():
    torch.manual_seed(0)
    rec = Recognizer.create("subject", labels=[3, 5, 8, 13], class_names=["P3", "P5", "P8", "P13"],
                            topology="kinect_v1_20")
    for module in rec.modules():  # non-trivial BatchNorm statistics, so a save that dropped them would show
        if isinstance(module, torch.nn.BatchNorm1d):  # SGN's normalization layers
            module.running_mean.uniform_(-0.5, 0.5)
    return rec.eval()


def test_the_weights_fingerprint_follows_the_weights_and_survives_a_save(recognizer, tmp_path):
    loaded = Recognizer.from_checkpoint(recognizer.save(tmp_path / "ri.pt"), device="cpu")
    assert len(recognizer.weights_fingerprint()) == 16
    assert loaded.weights_fingerprint() == recognizer.weights_fingerprint()
    with torch.no_grad():
        next(loaded.parameters()).view(-1)[0] += 1e-6
    assert loaded.weights_fingerprint() != recognizer.weights_fingerprint()
    other = Recognizer.from_checkpoint(tmp_path / "ri.pt", device="cpu")
    running_var = next(b for name, b in other.named_buffers() if name.endswith("running_var"))
    running_var.mul_(2.0)  # buffers count too: BatchNorm statistics change what it predicts
    assert other.weights_fingerprint() != recognizer.weights_fingerprint()


def clips(count, frames=50, seed=0):
    rng = np.random.default_rng(seed)
    return [Clip(rng.normal(scale=0.3, size=(frames + i, 20, 3)).astype(np.float32), topology="kinect_v1_20")
            for i in range(count)]


def test_save_and_load_round_trip(recognizer, tmp_path):
    path = recognizer.save(tmp_path / "ri.pt", data={"dataset": "toy"}, metrics={"top1": 0.5})
    loaded = Recognizer.from_checkpoint(path, device="cpu")
    assert (loaded.task, loaded.labels, loaded.class_names) == ("subject", [3, 5, 8, 13], ["P3", "P5", "P8", "P13"])
    assert loaded.topology.name == "kinect_v1_20" and loaded.seg == 20
    batch = clips(3)
    np.testing.assert_allclose(loaded.predict_proba(batch), recognizer.predict_proba(batch), atol=1e-6)
    stored = load_checkpoint(path)
    assert stored["method"] == "sgn" and stored["beta"] is None and stored["metrics"] == {"top1": 0.5}


def test_loading_a_retargeter_checkpoint_as_a_recognizer_fails_clearly(tmp_path):
    path = save_checkpoint(tmp_path / "naive.pt", NaiveRetargeter("ntu25"), data={}, metrics={})
    with pytest.raises(CheckpointError, match="naive.pt.*not a recognizer"):
        Recognizer.from_checkpoint(path)


def test_predict_proba_and_top_k(recognizer):
    batch = clips(4)
    proba = recognizer.predict_proba(batch, samples=5, seed=0)
    assert proba.shape == (4, 4)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(proba, recognizer.predict_proba(batch, samples=5, seed=0))
    assert not np.array_equal(proba, recognizer.predict_proba(batch, samples=5, seed=1))
    top = recognizer.predict_top_k(batch, k=3)
    assert top.classes.shape == top.labels.shape == top.probabilities.shape == (4, 3)
    np.testing.assert_array_equal(top.classes[:, 0], proba.argmax(axis=1))
    assert (np.diff(top.probabilities, axis=1) <= 0).all()
    np.testing.assert_array_equal(top.labels, np.array([3, 5, 8, 13])[top.classes])
    assert recognizer.class_index(8) == 2 and recognizer.class_index(4) is None
    assert recognizer.predict_proba([]).shape == (0, 4)


def test_window_probabilities_are_per_frame_distributions_of_centred_windows(recognizer):
    clip = clips(1, frames=60, seed=5)[0]
    track = recognizer.window_probabilities(clip, window=32, stride=1)
    assert track.shape == (60, 4)
    np.testing.assert_allclose(track.sum(axis=1), 1.0, atol=1e-5)
    sequence = torch.from_numpy(prepare_sequence(clip, recognizer.topology))
    direct = torch.softmax(recognizer.logits(sequence[window_indices(60, 20, 32, np.arange(60))]), -1).numpy()
    np.testing.assert_allclose(track, direct, atol=1e-4)
    strided = recognizer.window_probabilities(clip, window=32, stride=4)
    np.testing.assert_allclose(strided[::4], track[::4], atol=1e-5)
    np.testing.assert_array_equal(strided[1], strided[0])
    short = recognizer.window_probabilities(clips(1, frames=6)[0])
    assert short.shape == (6, 4) and np.allclose(short, short[0])


def test_window_probabilities_are_fast_enough_for_the_studio(recognizer):
    clip = clips(1, frames=100, seed=6)[0]
    recognizer.window_probabilities(clip)
    start = time.perf_counter()
    recognizer.window_probabilities(clip)
    # well under a second on an idle 2-core CPU; the bound leaves room for a busy test machine
    assert time.perf_counter() - start < 3.0


def test_a_clip_the_recognizer_cannot_read_names_its_file(recognizer):
    clip = Clip(np.zeros((10, 25, 3), dtype=np.float32), topology="ntu25", source_file="x.skeleton")
    with pytest.raises(InputError, match="x.skeleton: .*kinect_v1_20 recognizer cannot read ntu25"):
        recognizer.predict_proba([clip])


def test_create_validates_its_arguments():
    with pytest.raises(ValueError, match="task"):
        Recognizer.create("gender", labels=[0, 1])
    rec = Recognizer.create("action", labels=[1, 2], topology="uiprmd22")
    assert rec.class_names == ["action 1", "action 2"] and rec.model.num_joints == 22
