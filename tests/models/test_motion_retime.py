"""Re-timing (dtmr/models/motion/retime.py), its template bank and its DTW, on tiny synthetic clips."""

import numpy as np
import pytest
import torch

from dtmr.data.synthetic import generate_clips
from dtmr.models import Anonymizer, Retargeter
from dtmr.models.baselines import NaiveRetargeter
from dtmr.models.checkpoints.checkpoint import (
    build_model_from_checkpoint,
    load_checkpoint,
    registered_methods,
    save_checkpoint,
)
from dtmr.models.motion import (
    Retimer,
    TemplateBank,
    fit_motion_model,
    nearest_template_accuracy,
)
from dtmr.models.motion.dtw import (
    bone_direction_features,
    dtw_accumulated,
    frame_costs,
    pair_distances,
    warp_onto,
)
from dtmr.skeleton import NTU25
from dtmr.train.data import prepare_clips


@pytest.fixture(scope="module")
def clean():
    """3 subjects x 3 actions (walk in place, wave, clap), one clean repetition each, normalized."""
    return prepare_clips(generate_clips(subjects=3, actions=3, repetitions=1, seed=0, noise=0.0), "ntu25")


def half_speed(clip: torch.Tensor) -> torch.Tensor:
    """(64, J, 3) -> the same performance played at half speed for its first 42 frames (template frames 0-21),
    then at double speed to catch up: frame i shows the template at time phi(i)."""
    phi = np.where(np.arange(64) < 42, np.arange(64) / 2.0, 21.0 + (np.arange(64) - 42) * (42.0 / 21.0))
    flat = clip.reshape(64, -1).numpy()
    return torch.from_numpy(np.stack([np.interp(phi, np.arange(64), flat[:, c]) for c in range(flat.shape[1])],
                                     axis=1).reshape(clip.shape)).float()


def test_pair_distances_are_the_dtw_of_each_pair():
    rng = np.random.default_rng(0)
    a, b = torch.from_numpy(rng.normal(size=(3, 7, 4))), torch.from_numpy(rng.normal(size=(2, 5, 4)))
    pairs = np.array([[0, 1], [2, 0], [1, 1]])
    expected = [dtw_accumulated(frame_costs(a[i:i + 1], b[j:j + 1]))[0, -1, -1] for i, j in pairs]
    np.testing.assert_allclose(pair_distances(a, b, pairs, chunk=2), expected)
    assert pair_distances(a, a, np.array([[1, 1]]))[0] == 0.0


def test_a_clip_played_at_half_speed_is_re_timed_onto_its_templates_timing(clean):
    bank = TemplateBank.fit("ntu25", clean.joints, clean.actions)
    wave = int(np.flatnonzero(bank.actions.numpy() == 2)[0])
    template = bank.templates[wave]
    slowed = half_speed(template)[None]
    retimer = Retimer("ntu25", bank, naive=False)
    assert int(bank.choose(slowed)[0]) == wave  # found without its label
    retimed = retimer.retime(slowed)
    before = (slowed[0] - template).pow(2).mean().item()
    after = (retimed[0] - template).pow(2).mean().item()
    assert after < 0.1 * before, (before, after)
    # frame by frame: each re-timed frame shows the template's pose of that frame (its phase), not the slowed one's
    phase = torch.cdist(retimed[0].flatten(1), template.flatten(1)).argmin(dim=1).numpy()
    assert np.abs(phase - np.arange(64)).mean() < 1.0
    assert torch.equal(retimer.retime(template[None]), template[None])  # on time already: unchanged


def test_labels_choose_the_template_and_unknown_labels_fall_back_to_the_nearest(clean):
    bank = TemplateBank.fit("ntu25", clean.joints, clean.actions)
    src = torch.from_numpy(clean.joints[[0, 4, 8]])  # subject 1 action 1, subject 2 action 2, subject 3 action 3
    nearest = bank.choose(src)
    assert bank.actions[nearest].tolist() == [1, 2, 3]
    assert bank.choose(src, torch.tensor([3, -1, 99])).tolist() == [2, int(nearest[1]), int(nearest[2])]
    every = bank.actions[bank.choose(torch.from_numpy(clean.joints))].numpy()
    accuracy = nearest_template_accuracy(bank, clean.joints, clean.actions, batch=4)
    assert accuracy == 100 * np.mean(every == clean.actions)
    # each template is a medoid: one of the training clips of its action
    for template, action in zip(bank.templates, bank.actions, strict=True):
        members = torch.from_numpy(clean.joints[clean.actions == int(action)])
        assert any(torch.equal(template, m) for m in members)


def test_retime_naive_is_the_naive_retarget_of_the_re_timed_source(clean):
    retimer = fit_motion_model("retime-naive", "ntu25", clean.joints, clean.actions, clean.subjects)
    src, ref = torch.from_numpy(clean.joints[:2]), torch.from_numpy(clean.joints[[5, 7]])
    assert isinstance(retimer, Retargeter) and retimer.method == "retime-naive" and retimer.beta == 1.0
    expected = NaiveRetargeter("ntu25")(Retimer("ntu25", retimer.bank, naive=False).retime(src), ref)
    torch.testing.assert_close(retimer.retarget(src, ref), expected)
    with pytest.raises(ValueError, match="src must be"):
        retimer.retarget(src[:, :32], ref[:, :32])


def test_warp_onto_keeps_the_poses_of_x():
    clip = torch.from_numpy(prepare_clips(generate_clips(subjects=1, actions=2, repetitions=1, seed=1), "ntu25")
                            .joints[1:2])
    warped = warp_onto(clip, half_speed(clip[0])[None], NTU25)
    # every warped frame is a mean of consecutive frames of x: its bone directions stay close to x's
    feats, x_feats = bone_direction_features(warped, NTU25)[0], bone_direction_features(clip, NTU25)[0]
    assert torch.cdist(feats, x_feats).min(dim=1).values.max() < 0.5


@pytest.mark.parametrize("method", ["retime", "retime-naive"])
def test_file_round_trip_and_the_anonymizer_path(clean, tmp_path, method):
    assert {"retime", "retime-naive", "ksame"} <= set(registered_methods())
    model = fit_motion_model(method, "ntu25", clean.joints, clean.actions, clean.subjects)
    path = save_checkpoint(tmp_path / f"{method}.pt", model, data={"dataset": "toy"}, metrics={})
    checkpoint = torch.load(path, weights_only=True)  # tensors and plain types only
    assert checkpoint["method"] == method and set(checkpoint["state_dict"]) == {"bank.templates", "bank.actions"}
    loaded = build_model_from_checkpoint(load_checkpoint(path), source=path)
    src, ref = torch.from_numpy(clean.joints[:3]), torch.from_numpy(clean.joints[3:6])
    assert type(loaded) is Retimer and loaded.method == method
    torch.testing.assert_close(loaded.retarget(src, ref), model.retarget(src, ref))
    anonymizer = Anonymizer.from_checkpoint(path, device="cpu")
    source, reference = generate_clips(subjects=2, actions=2, repetitions=1, seed=3)[1:3]
    retargeted, released = anonymizer.retarget_pair(source, reference)
    assert anonymizer.method == method and anonymizer.beta == 1.0
    assert released.num_frames == source.num_frames and np.isfinite(released.joints).all()
    np.testing.assert_allclose(released.joints, retargeted.joints, atol=1e-5)


def test_a_file_without_templates_is_one_checkpoint_error(clean, tmp_path):
    from dtmr.errors import CheckpointError

    model = fit_motion_model("retime", "ntu25", clean.joints, clean.actions, clean.subjects)
    path = save_checkpoint(tmp_path / "retime.pt", model, data={}, metrics={})
    checkpoint = load_checkpoint(path)
    del checkpoint["state_dict"]["bank.actions"]
    with pytest.raises(CheckpointError, match=r"retime\.pt: invalid retime configuration: the file holds no action"):
        build_model_from_checkpoint(checkpoint, source=path)
    checkpoint = load_checkpoint(path)
    checkpoint["state_dict"]["bank.templates"] = checkpoint["state_dict"]["bank.templates"][:, :10]
    with pytest.raises(CheckpointError, match="templates must be"):
        build_model_from_checkpoint(checkpoint, source=path)


def test_the_medoid_search_is_bounded(clean, monkeypatch):
    from dtmr.models.motion import templates

    monkeypatch.setattr(templates, "MEDOID_CANDIDATES", 2)  # action 1's clips 0, 3, 6: candidates 0 and 6
    labels, chosen = templates.medoids(torch.from_numpy(clean.joints), clean.actions, NTU25)
    assert labels.tolist() == [1, 2, 3] and chosen.tolist() == [0, 1, 2]  # two candidates tie: the lower index
